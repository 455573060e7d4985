// `tessera gac`: runs one global admission control instance of a cluster
// layout (a `gac` entry) until SIGTERM or SIGINT: GacService with the
// layout's gac_settings on its peer port, calling meta as its own
// certificate (role gac), logging to DIR/logs/NAME.log, serving /metrics
// and /health over HTTP on its http port.
#pragma once

#include <string>

namespace tessera::gac {

struct GacCommandArgs {
  std::string layout_path;
  std::string name;
  std::string dir;
};

// Returns the process exit code: 0 after a clean shutdown, 2 for bad
// arguments or a setup failure (the reason on stderr and in the log).
int RunGacCommand(const GacCommandArgs& args);

}  // namespace tessera::gac
