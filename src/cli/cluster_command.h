// `tessera cluster ...`: the local three-AZ cluster.
#pragma once

#include <iosfwd>
#include <string>

namespace tessera::cli {

struct ClusterCommandArgs {
  std::string action;  // "up", "plan"
  std::string layout_path;
  std::string dir;
};

// Returns the process exit code; prints to `out` / `err`.
int RunClusterCommand(const ClusterCommandArgs& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
