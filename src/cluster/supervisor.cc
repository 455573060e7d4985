#include "cluster/supervisor.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

namespace tessera::cluster {
namespace fs = std::filesystem;

std::string SelfExecutable() {
  std::error_code ec;
  auto path = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("tessera") : path.string();
}

Result<Supervisor> Supervisor::Open(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir + "/logs", ec);
  if (!ec) fs::create_directories(dir + "/pids", ec);
  if (ec) return Status::IOError("cannot create cluster directory " + dir + ": " + ec.message());
  return Supervisor(dir);
}

std::string Supervisor::LogPath(const std::string& name) const {
  return dir_ + "/logs/" + name + ".out";
}
std::string Supervisor::PidPath(const std::string& name) const {
  return dir_ + "/pids/" + name + ".pid";
}

Result<pid_t> Supervisor::LivePid(const std::string& name) const {
  std::ifstream in(PidPath(name));
  pid_t pid = 0;
  if (!(in >> pid) || pid <= 0) return Status::NotFound(name + " is not running");
  if (::kill(pid, 0) != 0 && errno == ESRCH) return Status::NotFound(name + " is not running");
  // A zombie child of ours counts as exited.
  if (children_.count(pid)) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return Status::NotFound(name + " exited");
  }
  return pid;
}

Result<pid_t> Supervisor::Launch(const LaunchSpec& spec) {
  if (LivePid(spec.name).ok()) return Status::Conflict(spec.name + " is already running");
  const std::string log = LogPath(spec.name);
  const pid_t pid = ::fork();
  if (pid < 0) return Status::IOError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);  // Ctrl-C in the terminal reaches the supervisor only
    ::signal(SIGPIPE, SIG_DFL);  // whatever the launcher ignores
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::close(fd);
    }
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    if (!spec.netns_path.empty()) {
      const int ns_fd = ::open(spec.netns_path.c_str(), O_RDONLY | O_CLOEXEC);
      if (ns_fd < 0 || ::setns(ns_fd, CLONE_NEWNET) != 0) {
        std::fprintf(stderr, "setns %s: %s\n", spec.netns_path.c_str(), std::strerror(errno));
        ::_exit(126);
      }
    }
    std::vector<char*> argv;
    for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    std::fprintf(stderr, "exec %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  children_[pid] = spec.name;
  std::ofstream(PidPath(spec.name)) << pid << "\n";
  return pid;
}

Status Supervisor::Signal(const std::string& name, int signal) {
  auto pid = LivePid(name);
  if (!pid.ok()) return pid.status();
  if (::kill(*pid, signal) != 0) {
    return Status::IOError("kill " + name + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Status Supervisor::Stop(const std::string& name, int grace_ms) {
  auto pid = LivePid(name);
  if (!pid.ok()) {
    std::error_code ec;
    fs::remove(PidPath(name), ec);
    return Status::Ok();
  }
  ::kill(*pid, SIGCONT);  // a paused process cannot handle SIGTERM
  ::kill(*pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!LivePid(name).ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (LivePid(name).ok()) ::kill(*pid, SIGKILL);
  if (children_.count(*pid)) {
    ::waitpid(*pid, nullptr, 0);
    children_.erase(*pid);
  }
  std::error_code ec;
  fs::remove(PidPath(name), ec);
  return Status::Ok();
}

std::vector<std::string> Supervisor::ReapExited() {
  std::vector<std::string> exited;
  for (auto it = children_.begin(); it != children_.end();) {
    int status = 0;
    if (::waitpid(it->first, &status, WNOHANG) == it->first) {
      exited.push_back(it->second);
      it = children_.erase(it);
    } else {
      ++it;
    }
  }
  return exited;
}

}  // namespace tessera::cluster
