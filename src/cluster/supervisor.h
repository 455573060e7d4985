// Supervisor: starts and signals the processes of a local cluster. Each
// process is `tessera <role> ...` started with fork/exec, its stdout/stderr
// appended to DIR/logs/NAME.out, its pid in DIR/pids/NAME.pid, so that a
// later `tessera cluster kill NAME` (another invocation) finds it.
//
// Thread safety: none; one supervisor per invocation.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "common/result.h"

namespace tessera::cluster {

struct LaunchSpec {
  std::string name;               // process name, e.g. "az1-n1"
  std::vector<std::string> argv;  // argv[0] is the executable
  // A network namespace to run in (/run/netns/NAME, entered with setns
  // before exec); empty: the supervisor's own.
  std::string netns_path;
};

class Supervisor {
 public:
  // `dir` is the cluster directory (created with logs/ and pids/ inside).
  static Result<Supervisor> Open(const std::string& dir);

  // Starts `spec`; AlreadyExists-style Conflict if its pid file names a live
  // process.
  Result<pid_t> Launch(const LaunchSpec& spec);
  // The pid recorded for `name` if that process is alive.
  Result<pid_t> LivePid(const std::string& name) const;
  // Sends `signal` to `name`'s process. NotFound if it is not running.
  Status Signal(const std::string& name, int signal);
  // Sends SIGTERM, waits up to `grace_ms`, then SIGKILL; removes the pid file.
  Status Stop(const std::string& name, int grace_ms);
  // Reaps children of this supervisor that exited (non-blocking); returns
  // the names that exited.
  std::vector<std::string> ReapExited();

  const std::string& dir() const { return dir_; }
  std::string LogPath(const std::string& name) const;
  std::string PidPath(const std::string& name) const;

 private:
  explicit Supervisor(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
  std::map<pid_t, std::string> children_;
};

// The path of the running executable (/proc/self/exe).
std::string SelfExecutable();

}  // namespace tessera::cluster
