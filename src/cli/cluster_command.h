// `tessera cluster ...`: launch, supervise, inspect and inject faults into a
// local three-AZ cluster described by a layout file, with all its state
// (data, logs, pids, secret, credentials) in one cluster directory.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace tessera::cli {

struct ClusterCommandArgs {
  // up | plan | down | status | kill | stop | resume | restart | partition |
  // heal | slow-disk
  std::string action;
  std::string layout_path;
  std::string dir;
  bool detach = false;            // up: return once the cluster is ready
  uint32_t partitions = 6;        // up: partitions of the default table "kv"
  std::vector<std::string> targets;  // process names or AZs, per action
  uint32_t slow_ms = 0;           // slow-disk
  bool one_way = false;           // partition: only targets[0] -> targets[1]
};

// Returns the process exit code; prints to `out` / `err`.
int RunClusterCommand(const ClusterCommandArgs& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
