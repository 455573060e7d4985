// `tessera autoadmin`: runs one autoadmin instance of a cluster layout (an
// `autoadmin` entry) until SIGTERM or SIGINT: AutoadminService with the
// layout's autoadmin_settings, logging to DIR/logs/NAME.log, calling as its
// own certificate (role autoadmin), serving GET /status (the service's
// StatusText), /metrics and /health over HTTP on its http port.
//
// `tessera autoadmin status`: prints every instance's /status (the active
// one says so); exit 1 when no instance answers.
#pragma once

#include <ostream>
#include <string>

namespace tessera::autoadmin {

struct AutoadminCommandArgs {
  std::string layout_path;
  std::string name;
  std::string dir;
  // Testing only: SIGKILL at this split step ("reserve", "order",
  // "create_one", "before_commit"; AutoadminOptions); empty: never.
  std::string testing_exit_at_split_step;
};

// Returns the process exit code: 0 after a clean shutdown, 2 for bad
// arguments or a setup failure (the reason on stderr and in the log).
int RunAutoadminCommand(const AutoadminCommandArgs& args);

int RunAutoadminStatus(const std::string& layout_path, std::ostream& out, std::ostream& err);

}  // namespace tessera::autoadmin
