// `tessera cluster` actions. Launch order is meta, nodes, routers, autoadmin; stop order
// the reverse. Faults go through each process's authenticated admin.faults.
#include "cli/cluster_command.h"

#include <filesystem>

#include <signal.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <fstream>
#include <map>
#include <ostream>
#include <thread>

#include "cli/cluster_add_node.h"
#include "cli/cluster_drain.h"
#include "cli/cluster_lifecycle.h"
#include "cli/cluster_record.h"
#include "cli/cluster_session.h"
#include "cli/router_command.h"

#include <spdlog/spdlog.h>
#include "cli/cluster_status.h"
#include "common/limits.h"
#include "cluster/cluster_pki.h"
#include "meta/registry_keys.h"
#include "s3/model/s3_keys.h"
#include "router/token.h"
#include "tessera/cluster_rpc.pb.h"
#include "tessera/s3_registry.pb.h"

namespace tessera::cli {
namespace {

using cluster::ProcessEntry;
using cluster::ProcessRole;
using std::chrono::milliseconds;

// Whether DIR/pids/NAME.pid exists: Supervisor::Stop (what `cluster down`
// and `cluster restart` call) removes it after stopping the process; a
// process that crashed or was killed leaves it.
bool HasPidFile(ClusterSession& s, const std::string& name) {
  std::error_code ec;
  return std::filesystem::exists(s.supervisor().PidPath(name), ec);
}

// The foreground part of `up`: reports processes of its own that exit,
// stops every process on SIGINT or SIGTERM, and returns 0 with one line
// once no process of the layout has a pid file left, i.e. another
// invocation (`cluster down`) stopped them all. A child reaped while its
// pid file remains is reported only if the file is still there
// kStoppedElsewhereGrace later: Supervisor::Stop in another invocation
// removes it right after the process exits.
int Supervise(ClusterSession& s, std::ostream& out) {
  constexpr milliseconds kStoppedElsewhereGrace{2000};
  out << "\nrunning in the foreground; Ctrl-C stops the cluster (or `tessera cluster down --dir "
      << s.dir() << "` from another terminal)\n" << std::flush;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::map<std::string, std::chrono::steady_clock::time_point> reaped;
  timespec poll{0, 200'000'000};
  while (sigtimedwait(&set, nullptr, &poll) < 0) {
    const auto now = std::chrono::steady_clock::now();
    for (const std::string& name : s.supervisor().ReapExited()) reaped[name] = now;
    for (auto it = reaped.begin(); it != reaped.end();) {
      if (now - it->second < kStoppedElsewhereGrace) {
        ++it;
        continue;
      }
      if (HasPidFile(s, it->first)) {
        out << it->first << " exited (see " << s.supervisor().LogPath(it->first) << ")\n"
            << std::flush;
      }
      it = reaped.erase(it);
    }
    const auto& all = s.table().all();
    if (std::none_of(all.begin(), all.end(),
                     [&](const ProcessEntry& e) { return HasPidFile(s, e.name); })) {
      out << "every process was stopped by `tessera cluster down`; exiting\n" << std::flush;
      return 0;
    }
  }
  out << "\nstopping\n";
  StopAll(s, out);
  return 0;
}

int Up(ClusterSession& s, const ClusterCommandArgs& args, std::ostream& out, std::ostream& err) {
  const Status st = StartCluster(s, {args.partitions, args.kv_splits, args.s3_splits}, out);
  if (!st.ok()) {
    err << "tessera cluster up: " << st.ToString() << "\n";
    return st.code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  PrintStatus(s, out);
  PrintEndpoints(s, out);
  if (args.detach) return 0;
  return Supervise(s, out);
}

int SignalTargets(ClusterSession& s, const ClusterCommandArgs& args, int signal, const char* verb,
                  std::ostream& out, std::ostream& err) {
  int rc = 0;
  for (const std::string& t : args.targets) {
    auto entries = s.Resolve(t);
    if (entries.empty()) {
      err << "unknown process or AZ: " << t << "\n";
      rc = 2;
    }
    for (const ProcessEntry& e : entries) {
      Status st = SignalProcess(s, e.name, signal);
      if (st.ok()) {
        out << verb << " " << e.name << "\n";
      } else {
        err << e.name << ": " << st.ToString() << "\n";
        rc = 1;
      }
    }
  }
  return rc;
}

int Restart(ClusterSession& s, const ClusterCommandArgs& args, std::ostream& out,
            std::ostream& err) {
  int rc = 0;
  for (const std::string& t : args.targets) {
    for (const ProcessEntry& e : s.Resolve(t)) {
      auto pid = RestartProcess(s, e.name);
      if (pid.ok()) {
        out << "restarted " << e.name << " (pid " << *pid << ")\n";
      } else {
        err << e.name << ": " << pid.status().ToString() << "\n";
        rc = 1;
      }
    }
  }
  return rc;
}

}  // namespace

int RunClusterCommand(const ClusterCommandArgs& args, std::ostream& out, std::ostream& err) {
  // Transport chatter (connection refused while processes start) is not
  // for the operator's terminal; errors still show.
  spdlog::set_level(spdlog::level::err);
  auto session = ClusterSession::Open(args.layout_path, args.dir);
  if (!session.ok()) {
    err << "tessera cluster: " << session.status().ToString() << "\n";
    return 2;
  }
  ClusterSession& s = **session;
  s.set_caller(args.caller);
  const std::string& a = args.action;
  if (a == "plan") {
    out << cluster::DescribeLayout(s.layout()) << "layout: " << s.layout_path();
    if (s.recorded()) out << " (recorded by `cluster up`, a copy of " << s.layout_source() << ")";
    out << "\ncluster directory: " << s.dir() << "\n";
    return 0;
  }
  if (a == "up") return Up(s, args, out, err);
  if (a == "down") {
    StopAll(s, out);
    return 0;
  }
  if (a == "status") return (args.json ? PrintStatusJson(s, out) : PrintStatus(s, out)) ? 0 : 1;
  if (a == "kill") return SignalTargets(s, args, SIGKILL, "killed", out, err);
  if (a == "stop") return SignalTargets(s, args, SIGSTOP, "paused", out, err);
  if (a == "resume") return SignalTargets(s, args, SIGCONT, "resumed", out, err);
  if (a == "restart") return Restart(s, args, out, err);
  if (a == "partition" || a == "heal" || a == "slow-disk" || a == "full-disk" || a == "clock") {
    return RunFaultAction(s, args, out, err);
  }
  if (a == "digest") return PrintDigests(s, args, out, err);
  if (a == "drain") return Drain(s, args, out, err);
  if (a == "add-node") return AddNode(s, args, out, err);
  err << "tessera cluster: unknown action " << a << "\n";
  return 2;
}

}  // namespace tessera::cli
