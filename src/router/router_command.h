// `tessera router`: runs one stateless router of a cluster layout until
// SIGTERM or SIGINT. The router NAME (a `routers` entry of the layout) logs
// to DIR/logs/NAME.log, reads the cluster secret from DIR/secret and the
// KV API credentials from DIR/credentials, and serves the HTTP/JSON KV API,
// /metrics and /health on its http port (docs/router.md).
#pragma once

#include <string>

namespace tessera::router {

struct RouterCommandArgs {
  std::string layout_path;
  std::string name;
  std::string dir;
};

// Returns the process exit code: 0 after a clean shutdown, 2 for bad
// arguments or a setup failure (the reason on stderr and in the log).
int RunRouterCommand(const RouterCommandArgs& args);

}  // namespace tessera::router
