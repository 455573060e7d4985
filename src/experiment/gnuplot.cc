#include "experiment/gnuplot.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace tessera::experiment {
namespace {

namespace fs = std::filesystem;

std::string ReadUpTo(const std::string& path, size_t max_bytes, bool& too_large) {
  std::ifstream in(path, std::ios::binary);
  std::string text(max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  too_large = text.size() > max_bytes;
  if (too_large) text.resize(max_bytes);
  return text;
}

}  // namespace

Result<std::string> FindGnuplot() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/gnuplot";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return Status::NotFound("gnuplot is not installed (Debian package gnuplot-nox)");
}

Result<std::string> RunGnuplot(const std::string& script, const std::string& work_dir,
                               std::chrono::milliseconds timeout) {
  auto gnuplot = FindGnuplot();
  if (!gnuplot.ok()) return gnuplot.status();
  const std::string script_path = work_dir + "/plot.gp";
  const std::string out_path = work_dir + "/plot.out";
  const std::string err_path = work_dir + "/plot.err";
  {
    std::ofstream f(script_path, std::ios::trunc);
    f << script;
    if (!f.flush()) return Status::IOError(script_path + ": cannot write");
  }
  const pid_t pid = ::fork();
  if (pid < 0) return Status::IOError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    const int in_fd = ::open("/dev/null", O_RDONLY);
    const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in_fd < 0 || out_fd < 0 || err_fd < 0 || ::chdir(work_dir.c_str()) != 0) ::_exit(126);
    ::dup2(in_fd, STDIN_FILENO);
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    const char* argv[] = {gnuplot->c_str(), "plot.gp", nullptr};
    ::execv(argv[0], const_cast<char* const*>(argv));
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(pid, &status, WNOHANG)) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return Status::Timeout("gnuplot did not finish within " +
                             std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (done < 0) return Status::IOError(std::string("waitpid: ") + std::strerror(errno));
  bool too_large = false;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string err = ReadUpTo(err_path, 4096, too_large);
    return Status::IOError("gnuplot failed (status " + std::to_string(status) + "): " + err);
  }
  std::string svg = ReadUpTo(out_path, kGnuplotOutputMax, too_large);
  if (too_large) {
    return Status::IOError("gnuplot wrote more than " + std::to_string(kGnuplotOutputMax) +
                           " bytes");
  }
  return svg;
}

}  // namespace tessera::experiment
