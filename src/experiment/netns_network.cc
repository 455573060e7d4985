#include "experiment/netns_network.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

namespace tessera::experiment {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

// One ip/tc call: its time and the output kept (the rest is read and
// dropped so the tool never blocks on a full pipe).
constexpr milliseconds kToolTimeout{10'000};
constexpr size_t kToolOutputBytesMax = 64 * 1024;
constexpr char kNetnsDir[] = "/run/netns";
constexpr char kNetDevicesDir[] = "/sys/class/net";

Result<std::string> FindTool(const std::string& name) {
  for (const char* dir : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) {
    const std::string candidate = std::string(dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return Status::NotFound(name + " is not installed (Debian package iproute2)");
}

std::string CommandLine(const NetnsCommand& command) {
  std::string line;
  for (const std::string& word : command) {
    const bool quote = word.find_first_of(" ,") != std::string::npos;
    line += (line.empty() ? "" : " ") + (quote ? "'" + word + "'" : word);
  }
  return line;
}

// Waits for `pid`, reading its output from `fd` (kept up to the limit)
// until `deadline`; kills it after that.
Result<std::string> Collect(pid_t pid, int fd, steady_clock::time_point deadline) {
  std::string output;
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    const int ready = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
    if (ready == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      return Status::Timeout("did not finish within " + std::to_string(kToolTimeout.count()) +
                             " ms");
    }
    if (ready < 0 && errno == EINTR) continue;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.append(buffer, std::min(static_cast<size_t>(n), kToolOutputBytesMax - output.size()));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
    const std::string how = WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                              : "killed by signal " + std::to_string(WTERMSIG(status));
    return Status::IOError(how + ": " + output);
  }
  return output;
}

// Runs `command` (argv[0] "ip" or "tc") and returns its stdout and stderr.
Result<std::string> RunTool(const NetnsCommand& command) {
  auto tool = FindTool(command.at(0));
  if (!tool.ok()) return tool.status();
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return Status::IOError(std::strerror(errno));
  std::vector<char*> argv;
  argv.push_back(tool->data());
  for (size_t i = 1; i < command.size(); ++i) argv.push_back(const_cast<char*>(command[i].c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return Status::IOError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  auto output = Collect(pid, pipe_fds[0], steady_clock::now() + kToolTimeout);
  ::close(pipe_fds[0]);
  if (!output.ok()) return Status(output.status().code(), CommandLine(command) + ": " +
                                                              output.status().message());
  return output;
}

bool ProcessRuns(int pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

std::vector<std::string> EntriesOf(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

// The subnet index of the first /24 of 198.18.0.0/15, from `start` on,
// that no route of the machine overlaps.
Result<uint32_t> FreeSubnet(uint32_t start) {
  auto routes = RunTool({"ip", "-4", "route", "show", "table", "all"});
  if (!routes.ok()) return routes.status();
  for (uint32_t i = 0; i < kNetnsSubnetsMax; ++i) {
    const uint32_t index = (start + i) % kNetnsSubnetsMax;
    if (!SubnetInUse(index, *routes)) return index;
  }
  return Status::Unavailable("netns: every /24 of 198.18.0.0/15 is in use on this machine");
}

}  // namespace

Status NetnsNetwork::CheckAvailable() {
  if (::geteuid() != 0) {
    return Status::InvalidArgument(
        "--netns needs root: it creates network namespaces, veth pairs, a bridge and tc "
        "filters (run as root, or without --netns for the loopback cluster)");
  }
  for (const char* tool : {"ip", "tc"}) {
    auto found = FindTool(tool);
    if (!found.ok()) return Status::InvalidArgument("--netns: " + found.status().message());
  }
  return Status::Ok();
}

void NetnsNetwork::RemoveStale(std::ostream& log, std::ostream& err) {
  for (const std::string& ns : EntriesOf(kNetnsDir)) {
    const std::optional<int> pid = RunPidOfNamespace(ns);
    if (!pid || ProcessRuns(*pid)) continue;
    auto pids = RunTool({"ip", "netns", "pids", ns});
    if (pids.ok() && pids->find_first_not_of(" \n") != std::string::npos) {
      const std::string message = "netns stale namespace " + ns + " of a run that is gone still " +
                                  "holds processes; remove it with: ip netns pids " + ns +
                                  " | xargs -r kill -9; ip netns del " + ns + "\n";
      log << message;
      err << message;
      continue;
    }
    Status deleted = RunTool({"ip", "netns", "del", ns}).status();
    log << "netns stale namespace " << ns << " removed: " << deleted.ToString() << "\n";
  }
  for (const std::string& device : EntriesOf(kNetDevicesDir)) {
    const std::optional<int> pid = RunPidOfInterface(device);
    if (!pid || ProcessRuns(*pid)) continue;
    Status deleted = RunTool({"ip", "link", "del", device}).status();
    log << "netns stale interface " << device << " removed: " << deleted.ToString() << "\n";
  }
}

Result<std::unique_ptr<NetnsNetwork>> NetnsNetwork::Create(const pb::ClusterLayout& layout,
                                                           const NetnsShaping& shaping,
                                                           uint64_t seed, std::ostream& log,
                                                           std::ostream& err) {
  if (Status st = CheckAvailable(); !st.ok()) return st;
  RemoveStale(log, err);
  const int pid = static_cast<int>(::getpid());
  auto subnet = FreeSubnet(static_cast<uint32_t>(pid) % kNetnsSubnetsMax);
  if (!subnet.ok()) return subnet.status();
  auto plan = PlanNetns(layout, pid, *subnet);
  if (!plan.ok()) return plan.status();
  std::unique_ptr<NetnsNetwork> net(new NetnsNetwork(std::move(plan).value(), log));
  const NetnsPlan& p = net->plan_;
  log << "netns run=" << pid << " subnet=" << p.subnet << " bridge=" << p.bridge_ns
      << " host_interface=" << p.host_interface << " host_address=" << p.host_address << "\n";
  for (const NetnsAz& a : p.azs) {
    log << "netns az=" << a.az << " ns=" << a.ns;
    for (size_t h = 0; h < a.hosts.size(); ++h) log << " " << a.hosts[h] << "=" << a.addresses[h];
    log << "\n";
  }
  Status st;
  for (const NetnsCommand& c : BuildCommands(p)) {
    if (st.ok()) st = net->Run(c);
  }
  for (const NetnsCommand& c : ClassifyCommands(p)) {
    if (st.ok()) st = net->Run(c);
  }
  if (st.ok()) net->shaping_missing_ = net->Shape(shaping, seed, &st);
  if (!st.ok()) {
    (void)net->Teardown();
    return Status(st.code(), "building the --netns network: " + st.message());
  }
  return net;
}

std::string NetnsNetwork::Shape(const NetnsShaping& shaping, uint64_t seed, Status* error) {
  if (!shaping.any()) return "";
  std::string missing;
  const std::vector<NetnsCommand> netem = NetemCommands(plan_, shaping);
  for (size_t i = 0; i < netem.size(); ++i) {
    Status added = Run(netem[i]);
    if (added.ok()) continue;
    // The first AZ's netem refused: a kernel built without sch_netem. A
    // later AZ's refusal is an error (the AZs would be shaped unevenly).
    if (i > 0) *error = added;
    if (i == 0) missing = "no netem qdisc (" + added.message() + ")";
    break;
  }
  const char* by = "netem";
  if (!missing.empty() && error->ok()) {
    by = "queue";
    const std::string queue_missing = StartQueueShaper(shaping, seed, error);
    if (!queue_missing.empty()) missing += "; " + queue_missing;
    if (queue_missing.empty()) missing.clear();
  }
  log_ << "netns shaping delay_ms=" << shaping.delay_ms << " jitter_ms=" << shaping.jitter_ms
       << " loss_percent=" << shaping.loss_percent << " by=" << by
       << " applied=" << (missing.empty() && error->ok() ? "yes" : "no") << "\n"
       << std::flush;
  return missing;
}

std::string NetnsNetwork::StartQueueShaper(const NetnsShaping& shaping, uint64_t seed,
                                           Status* error) {
  if (!FindTool("iptables").ok()) return "no iptables (Debian package iptables)";
  const std::vector<NetnsCommand> rules = QueueShapingCommands(plan_);
  for (size_t i = 0; i < rules.size(); ++i) {
    Status added = Run(rules[i]);
    if (added.ok()) continue;
    // As for netem: the first refusal means the kernel lacks NFQUEUE.
    if (i > 0) *error = added;
    return "iptables refused the NFQUEUE rule (" + added.message() + ")";
  }
  std::vector<std::string> paths;
  for (const auto& [az, path] : NamespacePaths()) paths.push_back(path);
  auto shaper = QueueShaper::Start(paths, shaping, seed);
  if (!shaper.ok()) return shaper.status().message();
  shaper_ = std::move(shaper).value();
  return "";
}

NetnsNetwork::~NetnsNetwork() { (void)Teardown(); }

std::map<std::string, std::string> NetnsNetwork::NamespacePaths() const {
  std::map<std::string, std::string> paths;
  for (const NetnsAz& a : plan_.azs) paths[a.az] = std::string(kNetnsDir) + "/" + a.ns;
  return paths;
}

Status NetnsNetwork::Run(const NetnsCommand& command) {
  auto output = RunTool(command);
  if (!output.ok()) log_ << "netns failed " << output.status().message() << "\n";
  return output.status();
}

Status NetnsNetwork::ApplyCut(const NetnsAz& from) {
  const std::set<std::string>& to = cuts_[from.az];
  Status st = Run(CutCommand(from, std::vector<std::string>(to.begin(), to.end())));
  std::string addresses;
  for (const std::string& a : to) addresses += (addresses.empty() ? "" : ",") + a;
  log_ << "netns cut from=" << from.az << " to=" << addresses << " " << st.ToString() << "\n"
       << std::flush;
  return st;
}

Status NetnsNetwork::Cut(const AzCut& cut) {
  const NetnsAz* from = plan_.Az(cut.from);
  const NetnsAz* to = plan_.Az(cut.to);
  if (from == nullptr || to == nullptr) {
    return Status::InvalidArgument("netns: unknown AZ in cut " + cut.from + " -> " + cut.to);
  }
  cuts_[from->az].insert(to->addresses.begin(), to->addresses.end());
  Status st = ApplyCut(*from);
  if (!cut.one_way) {
    cuts_[to->az].insert(from->addresses.begin(), from->addresses.end());
    Status back = ApplyCut(*to);
    if (st.ok()) st = back;
  }
  return st;
}

uint64_t NetnsNetwork::DroppedPackets(const NetnsAz& az) {
  auto output = RunTool(QdiscStatsCommand(az));
  if (!output.ok()) return 0;
  return ParseDroppedPackets(*output).value_or(0);
}

Status NetnsNetwork::ClearCuts() {
  Status st;
  for (const auto& cut : cuts_) {
    const std::string& az = cut.first;
    const NetnsAz* a = plan_.Az(az);
    const uint64_t total = DroppedPackets(*a);
    log_ << "netns cleared from=" << az << " dropped=" << total - dropped_before_[az] << "\n"
         << std::flush;
    dropped_before_[az] = total;
    Status cleared = Run(ClearCutCommand(*a));
    if (st.ok()) st = cleared;
  }
  cuts_.clear();
  return st;
}

Status NetnsNetwork::Teardown() {
  if (torn_down_) return Status::Ok();
  if (shaper_ != nullptr) {
    shaper_->Stop();
    const ShaperCounters n = shaper_->counters();
    log_ << "netns shaper delayed=" << n.delayed << " lost=" << n.lost
         << " overflow=" << n.overflow << "\n";
    shaper_.reset();
  }
  std::string failed;
  for (const NetnsCommand& c : TeardownCommands(plan_)) {
    const bool link = c[1] == "link";
    if (!fs::exists(std::string(link ? kNetDevicesDir : kNetnsDir) + "/" + c.back())) continue;
    if (!Run(c).ok()) failed += " " + c.back();
  }
  torn_down_ = failed.empty();
  log_ << "netns teardown " << (failed.empty() ? "ok" : "failed:" + failed) << "\n" << std::flush;
  if (failed.empty()) return Status::Ok();
  return Status::IOError("netns: could not delete" + failed + " (remove with: ip netns del NAME)");
}

}  // namespace tessera::experiment
