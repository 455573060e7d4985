#include "experiment/nemesis.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>

#include "cli/cluster_drain.h"
#include "cli/cluster_lifecycle.h"
#include "cli/cluster_status.h"

namespace tessera::experiment {
namespace {

using cluster::ProcessEntry;

// How long a killed process may take to be gone before its data directory
// is deleted anyway.
constexpr auto kDeathWait = std::chrono::seconds(5);

Status First(const Status& a, const Status& b) { return a.ok() ? b : a; }

}  // namespace

Result<std::string> Nemesis::LeaderNode() {
  auto partitions = cli::PartitionLeaders(session_);
  if (!partitions.ok()) return partitions.status();
  for (const cli::LedPartition& p : *partitions) {
    const pb::PartitionDescriptor& d = p.partition;
    if (d.table() != leader_.table) continue;
    if (leader_.key < d.start_key() || (!d.end_key().empty() && leader_.key >= d.end_key())) {
      continue;
    }
    if (!p.leader_node_id) {
      return Status::Unavailable("the partition of table " + leader_.table + " holding the " +
                                 "first hot key has no leader");
    }
    auto entry = session_.table().ById(*p.leader_node_id);
    if (!entry) return Status::Unavailable("leader node id not in the layout");
    return entry->name;
  }
  return Status::NotFound("no partition of table " + leader_.table + " holds the first hot key");
}

Result<std::vector<std::string>> Nemesis::ResolveProcesses(const pb::FaultTarget& target) {
  if (target.has_kv_leader()) {
    auto leader = LeaderNode();
    if (!leader.ok()) return leader.status();
    return std::vector<std::string>{*leader};
  }
  const std::string name = target.has_process() ? target.process() : target.az();
  std::vector<std::string> names;
  for (const ProcessEntry& e : session_.Resolve(name)) names.push_back(e.name);
  if (names.empty()) return Status::InvalidArgument("unknown process or AZ: " + name);
  return names;
}

Result<std::string> Nemesis::ResolveAz(const pb::FaultTarget& target) {
  if (target.has_az()) return target.az();
  auto processes = ResolveProcesses(target);
  if (!processes.ok()) return processes.status();
  return session_.table().ByName(processes->front())->az;
}

Status Nemesis::ApplyRules(const Active& a) {
  Status st;
  if (a.fault.kind == pb::FAULT_SLOW_DISK) {
    for (const std::string& p : a.processes) {
      st = First(st, cli::SlowDisk(session_, p, a.fault.slow_ms, log_));
    }
    return st;
  }
  if (a.fault.kind == pb::FAULT_FULL_DISK) {
    for (const std::string& p : a.processes) {
      st = First(st, cli::FailWrites(session_, p, /*fail=*/true, log_));
    }
    return st;
  }
  if (IsClockFault(a.fault.kind)) return ApplyClock(a);
  const std::vector<std::string> azs(session_.layout().azs().begin(),
                                     session_.layout().azs().end());
  for (const AzCut& cut : AzCuts(a.fault.kind, azs, a.az, a.fault.peer_az)) {
    st = First(st, kernel_cuts_ ? kernel_cuts_->Cut(cut)
                                : cli::PartitionSides(session_, cut.from, cut.to, cut.one_way, log_));
  }
  return st;
}

Status Nemesis::ApplyClock(const Active& a) {
  const bool jump = a.fault.kind == pb::FAULT_CLOCK_JUMP;
  const std::optional<int64_t> offset_ms = jump ? std::optional(a.fault.offset_ms) : std::nullopt;
  const std::optional<int32_t> skew_ppm = jump ? std::nullopt : std::optional(a.fault.skew_ppm);
  Status st;
  for (const std::string& p : a.processes) {
    if (!cluster::ServesRpc(session_.table().ByName(p)->role)) continue;  // an AZ's routers
    st = First(st, cli::SetClock(session_, p, offset_ms, skew_ppm, log_));
  }
  return st;
}

Status Nemesis::SetDrains(const Active& a, bool drain) {
  auto client = session_.client();
  if (!client.ok()) return client.status();
  Status st;
  for (const std::string& p : a.processes) {
    const auto node = session_.table().ByName(p);
    if (!node || node->role != cluster::ProcessRole::kNode) {
      st = First(st, Status::InvalidArgument(p + " is not a storage node: not drained"));
      continue;
    }
    if (!drain) {
      // What moved while it was drained (replicas still named on it).
      auto left = cli::ReplicasOn(**client, *node);
      if (left.ok()) log_ << p << ": " << left->named << " partition replicas still named on it\n";
    }
    const Status set = cli::SetDrain(**client, node->id, drain);
    if (set.ok()) log_ << p << (drain ? ": draining\n" : ": no longer drained\n");
    st = First(st, set);
  }
  return st;
}

Status Nemesis::LoseProcess(const std::string& name) {
  Status st = cli::SignalProcess(session_, name, SIGKILL);
  const auto deadline = std::chrono::steady_clock::now() + kDeathWait;
  while (std::chrono::steady_clock::now() < deadline) {
    session_.supervisor().ReapExited();
    if (!session_.supervisor().LivePid(name).ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (session_.supervisor().LivePid(name).ok()) {
    return Status::Timeout(name + " still runs " + std::to_string(kDeathWait.count()) +
                           " s after kill -9: its data directory is kept");
  }
  std::error_code ec;
  const std::string data_dir = session_.dir() + "/data/" + name;
  std::filesystem::remove_all(data_dir, ec);
  if (ec) return First(st, Status::IOError("delete " + data_dir + ": " + ec.message()));
  log_ << name << ": killed, data directory deleted\n";
  return st;
}

Status Nemesis::Start(size_t id, const ScheduledFault& fault, std::vector<std::string>& targets) {
  Active a{id, fault, {}, {}};
  if (IsAzFault(fault.kind)) {
    auto az = ResolveAz(fault.target);
    if (!az.ok()) return az.status();
    a.az = *az;
    targets = {a.az};
  } else {
    auto processes = ResolveProcesses(fault.target);
    if (!processes.ok()) return processes.status();
    a.processes = *processes;
    targets = a.processes;
  }
  Status st;
  if (IsRuleFault(fault.kind)) {
    st = ApplyRules(a);
  } else if (fault.kind == pb::FAULT_LOST_NODE) {
    for (const std::string& p : a.processes) st = First(st, LoseProcess(p));
  } else if (fault.kind == pb::FAULT_DRAIN) {
    st = SetDrains(a, /*drain=*/true);
  } else {
    const int signal = fault.kind == pb::FAULT_KILL ? SIGKILL : SIGSTOP;
    for (const std::string& p : a.processes) st = First(st, cli::SignalProcess(session_, p, signal));
  }
  active_.push_back(std::move(a));
  return st;
}

Status Nemesis::End(size_t id) {
  auto it = std::find_if(active_.begin(), active_.end(), [&](const Active& a) { return a.id == id; });
  if (it == active_.end()) return Status::Ok();
  const Active a = *it;
  active_.erase(it);
  Status st;
  if (a.fault.kind == pb::FAULT_KILL || a.fault.kind == pb::FAULT_LOST_NODE) {
    session_.supervisor().ReapExited();
    for (const std::string& p : a.processes) {
      auto launched = cli::EnsureRunning(session_, p);
      if (!launched.ok()) st = First(st, launched.status());
    }
    rules_to_reapply_ = std::any_of(active_.begin(), active_.end(), [](const Active& other) {
      return IsRuleFault(other.fault.kind);
    });
    return st;
  }
  if (a.fault.kind == pb::FAULT_PAUSE) {
    for (const std::string& p : a.processes) st = First(st, cli::SignalProcess(session_, p, SIGCONT));
    return st;
  }
  if (a.fault.kind == pb::FAULT_DRAIN) return SetDrains(a, /*drain=*/false);
  // Rules replace each other: clear them all, then apply the ones in force.
  st = cli::HealAll(session_, log_);
  if (kernel_cuts_) st = First(st, kernel_cuts_->ClearCuts());
  for (const Active& other : active_) {
    if (IsRuleFault(other.fault.kind)) st = First(st, ApplyRules(other));
  }
  return st;
}

void Nemesis::Tick() {
  // A relaunched process takes a moment to serve RPC: try twice a second.
  constexpr auto kRetryInterval = std::chrono::milliseconds(500);
  const auto now = std::chrono::steady_clock::now();
  if (!rules_to_reapply_ || now < next_reapply_) return;
  next_reapply_ = now + kRetryInterval;
  Status st;
  for (const Active& a : active_) {
    if (IsRuleFault(a.fault.kind)) st = First(st, ApplyRules(a));
  }
  rules_to_reapply_ = !st.ok();
}

Status Nemesis::HealEverything() {
  session_.supervisor().ReapExited();
  Status st;
  for (const Active& a : active_) {
    if (a.fault.kind == pb::FAULT_DRAIN) st = First(st, SetDrains(a, /*drain=*/false));
  }
  active_.clear();
  rules_to_reapply_ = false;
  for (const ProcessEntry& e : session_.table().all()) {
    if (session_.supervisor().LivePid(e.name).ok()) {
      st = First(st, cli::SignalProcess(session_, e.name, SIGCONT));
    } else {
      auto launched = cli::EnsureRunning(session_, e.name);
      if (!launched.ok()) st = First(st, launched.status());
    }
  }
  if (kernel_cuts_) st = First(st, kernel_cuts_->ClearCuts());
  return First(st, cli::HealAll(session_, log_));
}

}  // namespace tessera::experiment
