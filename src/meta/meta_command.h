// `tessera meta`: runs one metadata replica of a cluster layout until
// SIGTERM or SIGINT. The replica NAME (a `meta` entry of the layout) keeps
// its store in DIR/data/NAME/rocksdb, logs to DIR/logs/NAME.log, reads the
// cluster secret from DIR/secret, serves internal RPC on its peer port and
// GET /metrics (Prometheus text) and /health over HTTP on its http port.
#pragma once

#include <string>

namespace tessera::meta {

struct MetaCommandArgs {
  std::string layout_path;
  std::string name;
  std::string dir;
};

// Returns the process exit code: 0 after a clean shutdown, 2 for bad
// arguments or a setup failure (the reason on stderr and in the log).
int RunMetaCommand(const MetaCommandArgs& args);

}  // namespace tessera::meta
