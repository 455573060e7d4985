// The seed's plan (timings, network, disks, clients, clocks) and its faults:
// partitions (symmetric, isolating the leader, asymmetric), gray links,
// crashes with restarts, then the heal.
#include <algorithm>
#include <utility>

#include "sim/simulation.h"

namespace tessera::sim {

namespace {

std::string DescribeLinks(const std::vector<std::pair<ReplicaId, ReplicaId>>& links) {
  std::string text;
  for (const auto& [from, to] : links) {
    if (!text.empty()) text += ' ';
    text += std::to_string(from) + ">" + std::to_string(to);
  }
  return text;
}

}  // namespace

void Simulation::PlanSeed() {
  Prng prng(DeriveSeed(config_.seed, kStreamPlan));
  plan_.options = SimOptions(config_.seed, config_.replicas, 0);
  const SimFaults& allowed = config_.faults;
  auto pick = [&](bool allowed_fault, const char* name) {
    const bool on = allowed_fault && prng.Chance(config_.fault_percent);
    if (on) plan_.faults += plan_.faults.empty() ? name : std::string(",") + name;
    return on;
  };
  const bool loss = pick(allowed.loss, "loss");
  const bool duplication = pick(allowed.duplication, "dup");
  const bool reordering = pick(allowed.reordering, "reorder");
  const bool spikes = pick(allowed.delay_spikes, "delay");
  plan_.partitions = pick(allowed.partitions, "partition");
  plan_.asymmetric = pick(allowed.asymmetric_partitions, "asym");
  plan_.gray = pick(allowed.gray_failures, "gray");
  plan_.crashes = pick(allowed.crashes, "crash");
  plan_.pauses = pick(allowed.pauses, "pause");
  plan_.clock_drift = pick(allowed.clock_drift, "drift");
  plan_.compaction = pick(allowed.compaction, "compaction");
  plan_.membership = pick(allowed.membership, "membership");
  plan_.campaigns = pick(allowed.campaigns, "campaign");
  plan_.large_value_percent =
      pick(allowed.large_values, "large") ? static_cast<uint32_t>(prng.Range(1, 3)) : 0;
  {
    // Drawn from a stream of its own, so the plans of the other faults stay
    // what they were before this fault existed.
    Prng loss_prng(DeriveSeed(config_.seed, kStreamLoss));
    const bool drawn = loss_prng.Chance(config_.fault_percent);
    if (allowed.replica_loss && (drawn || config_.replica_loss_every_seed)) {
      plan_.replica_losses = static_cast<uint32_t>(loss_prng.Range(1, 2));
      plan_.membership = false;  // the planner changes the membership instead
      plan_.faults += plan_.faults.empty() ? "lost" : ",lost";
    }
  }

  NetworkParams calm;
  calm.delay_min_us = prng.Range(100, 1'500);
  calm.delay_jitter_us = reordering ? prng.Range(200, 1'000) : prng.Range(0, 100);
  plan_.calm_network = calm;
  NetworkParams faulty = calm;
  if (loss) faulty.loss_ppm = static_cast<uint32_t>(prng.Range(5'000, 100'000));
  if (duplication) faulty.duplicate_ppm = static_cast<uint32_t>(prng.Range(5'000, 50'000));
  if (reordering) faulty.delay_jitter_us = prng.Range(1'000, 8'000);
  if (spikes) {
    faulty.spike_ppm = static_cast<uint32_t>(prng.Range(5'000, 30'000));
    // Now and then a message arrives seconds late, from an older ballot.
    faulty.spike_max_us = prng.Chance(30) ? prng.Range(1'000'000, 3'000'000)
                                          : prng.Range(20'000, 400'000);
  }
  plan_.fault_network = faulty;
  if (plan_.clock_drift) {
    plan_.drift_half_spread_ppm = static_cast<int64_t>(plan_.options.max_clock_drift_ppm) * 45 / 100;
  }

  plan_.fsync_min_us = prng.Range(100, 3'000);
  plan_.fsync_jitter_us = prng.Range(0, 10'000);
  plan_.fsync_slow_ppm = static_cast<uint32_t>(prng.Range(0, 50'000));
  plan_.fsync_slow_max_us = prng.Range(5'000, 100'000);

  plan_.clients = static_cast<uint32_t>(prng.Range(2, std::max<uint32_t>(2, config_.clients_max)));
  plan_.keys = static_cast<uint32_t>(prng.Range(1, std::max<uint32_t>(1, config_.keys_max)));
  plan_.think_max_us = prng.Range(0, 20'000);
  plan_.retry_backoff_max_us = prng.Range(5'000, 30'000);
  const consensus::Options& o = plan_.options;
  plan_.client_timeout_us = o.lease_duration_us + o.election_timeout_max_us;
  const TimeUs fault_max = std::max(config_.fault_phase_min_us, config_.fault_phase_max_us);
  plan_.heal_at_us = o.lease_duration_us + o.election_timeout_max_us +
                     prng.Range(config_.fault_phase_min_us, fault_max);
  plan_.liveness_bound_us = LivenessBoundUs(o);
  // A replacement takes up to seven autoadmin rounds (<= 400 ms each) and a
  // catch-up after the heal.
  if (plan_.replica_losses > 0) plan_.liveness_bound_us += 5'000'000;
  plan_.compaction_period_us = prng.Range(100'000, 500'000);
  plan_.compaction_keep = prng.Range(0, 20);
  plan_.campaign_at_start = prng.Chance(50);
}

// Each replica's clock: a random offset and, with drift, a rate that wanders
// (re-drawn every few hundred ms) within +-0.45 * max_clock_drift_ppm, so any
// two rates differ by less than the bound at every instant. The
// lease-ignore-drift bug lets every rate wander among half speed, true
// speed and double speed instead.
void Simulation::SetUpClocks() {
  for (auto& host : hosts_) {
    host->clock.base_local_us = clock_prng_.Range(0, 1'000'000'000);
    OnClockRate(*host);
  }
  if (config_.bug == SimBug::kLeaseIgnoreDrift) plan_.faults += ",bad-clocks";
}

int64_t Simulation::DrawClockRate() {
  if (config_.bug == SimBug::kLeaseIgnoreDrift) {
    static constexpr int64_t kBadRatesPpm[] = {-750'000, 0, 1'000'000};
    return kBadRatesPpm[clock_prng_.Below(3)];
  }
  const int64_t spread = plan_.drift_half_spread_ppm;
  return static_cast<int64_t>(clock_prng_.Below(2 * spread + 1)) - spread;
}

void Simulation::OnClockRate(ReplicaHost& host) {
  if (!plan_.clock_drift && config_.bug != SimBug::kLeaseIgnoreDrift) return;
  host.clock.SetRate(now_, DrawClockRate());
  tracer_.Event(now_, Who(host.id), 56, static_cast<uint64_t>(host.clock.rate_ppm), 0, [&] {
    return "clock rate " + std::to_string(host.clock.rate_ppm) + "ppm";
  });
  const bool bad = config_.bug == SimBug::kLeaseIgnoreDrift;
  ScheduleSimple(now_ + clock_prng_.Range(bad ? 500'000 : 200'000, bad ? 3'000'000 : 1'000'000),
                 EventKind::kClockRate, host.id);
}

void Simulation::PlanFaults() {
  std::vector<FaultKind> kinds;
  if (plan_.partitions) {
    kinds.push_back(FaultKind::kPartition);
    kinds.push_back(FaultKind::kIsolateLeader);
  }
  if (plan_.asymmetric) kinds.push_back(FaultKind::kAsymmetric);
  if (plan_.gray) kinds.push_back(FaultKind::kGray);
  if (plan_.crashes) kinds.push_back(FaultKind::kCrash);
  if (plan_.pauses) kinds.push_back(FaultKind::kPause);
  if (plan_.campaigns) {
    kinds.push_back(FaultKind::kCampaign);
    kinds.push_back(FaultKind::kTransfer);
  }
  if (kinds.empty()) return;
  TimeUs at = nemesis_prng_.Range(200'000, 800'000);
  while (at < plan_.heal_at_us) {
    ActiveFault fault;
    fault.kind = kinds[nemesis_prng_.Below(kinds.size())];
    faults_.push_back(fault);
    ScheduleSimple(at, EventKind::kFaultStart, 0, faults_.size() - 1);
    at += nemesis_prng_.Range(150'000, 900'000);
  }
}

void Simulation::OnFaultStart(uint64_t index) {
  if (healed_) return;
  ActiveFault& fault = faults_[index];
  switch (fault.kind) {
    case FaultKind::kPartition: StartPartition(fault, false); break;
    case FaultKind::kIsolateLeader: StartPartition(fault, true); break;
    case FaultKind::kAsymmetric: StartAsymmetric(fault); break;
    case FaultKind::kGray: StartGray(fault); break;
    case FaultKind::kCrash:
      StartCrash();
      fault.ended = true;
      return;
    case FaultKind::kPause:
      StartPause();
      fault.ended = true;
      return;
    case FaultKind::kCampaign:
      ScheduleSimple(now_, EventKind::kCampaign, PickReplicas(1).front());
      fault.ended = true;
      return;
    case FaultKind::kTransfer:
      StartTransfer();
      fault.ended = true;
      return;
  }
  ScheduleSimple(now_ + nemesis_prng_.Range(100'000, 1'500'000), EventKind::kFaultEnd, 0, index);
}

void Simulation::OnFaultEnd(uint64_t index) {
  ActiveFault& fault = faults_[index];
  if (fault.ended) return;
  fault.ended = true;
  for (const auto& [from, to] : fault.blocked) network_.Unblock(from, to);
  for (const auto& [from, to] : fault.gray) network_.RemoveGray(from, to, fault.gray_loss_ppm);
  tracer_.Event(now_, "nemesis", 51, index, 0, [&] {
    return "end fault " + std::to_string(index) + " (" + DescribeLinks(fault.blocked) +
           DescribeLinks(fault.gray) + ")";
  });
}

std::vector<ReplicaId> Simulation::ProvisionedReplicas() const {
  std::vector<ReplicaId> ids;
  for (const auto& host : hosts_) {
    if (host->provisioned) ids.push_back(host->id);
  }
  return ids;
}

// Picks up to `count` distinct provisioned replicas, ascending.
std::vector<ReplicaId> Simulation::PickReplicas(uint32_t count) {
  std::vector<ReplicaId> ids = ProvisionedReplicas();
  for (uint32_t i = 0; i < count && i + 1 < ids.size(); ++i) {
    std::swap(ids[i], ids[i + nemesis_prng_.Below(ids.size() - i)]);
  }
  ids.resize(std::min<size_t>(count, ids.size()));
  std::sort(ids.begin(), ids.end());
  return ids;
}

// The leader (if any is up) hands leadership to a random other voter; the
// transfer may fail (the target is cut off, crashes, lags), which the
// leader must survive as well.
void Simulation::StartTransfer() {
  const ReplicaId leader = CurrentLeader();
  if (leader == 0) return;
  ReplicaHost& host = Host(leader);
  if (!host.up() || host.paused(now_)) return;
  std::vector<ReplicaId> others;
  for (ReplicaId v : host.replica->membership().voters()) {
    if (v != leader) others.push_back(v);
  }
  if (others.empty()) return;
  const ReplicaId to = others[nemesis_prng_.Below(others.size())];
  const Status status = host.replica->TransferLeadership(LocalNow(host), to);
  tracer_.Event(now_, Who(leader), 31, to, status.ok() ? 1 : 0, [&] {
    return "transfer to " + std::to_string(to) + (status.ok() ? "" : ": " + status.ToString());
  });
  Drain(host);
}

void Simulation::StartPartition(ActiveFault& fault, bool isolate_leader) {
  std::vector<bool> side(replica_ids_ + 1, false);
  ReplicaId leader = isolate_leader ? CurrentLeader() : 0;
  if (leader != 0) {
    side[leader] = true;
  } else {
    const size_t provisioned = ProvisionedReplicas().size();
    const uint32_t count = static_cast<uint32_t>(nemesis_prng_.Range(1, std::max<size_t>(1, provisioned / 2)));
    for (ReplicaId id : PickReplicas(count)) side[id] = true;
  }
  const std::vector<ReplicaId> ids = ProvisionedReplicas();
  for (ReplicaId a : ids) {
    for (ReplicaId b : ids) {
      if (side[a] == side[b]) continue;
      network_.Block(a, b);
      fault.blocked.emplace_back(a, b);
    }
  }
  tracer_.Event(now_, "nemesis", 52, fault.blocked.size(), leader, [&] {
    std::string minority;
    for (ReplicaId id = 1; id <= replica_ids_; ++id) {
      if (side[id]) minority += " r" + std::to_string(id);
    }
    return std::string(isolate_leader ? "isolate leader:" : "partition off:") + minority;
  });
}

void Simulation::StartAsymmetric(ActiveFault& fault) {
  const ReplicaId target = PickReplicas(1).front();
  const uint64_t mode = nemesis_prng_.Below(3);  // 0: deaf, 1: mute, 2: random links
  for (ReplicaId other : ProvisionedReplicas()) {
    if (other == target) continue;
    if (mode == 0 || (mode == 2 && nemesis_prng_.Chance(50))) fault.blocked.emplace_back(other, target);
    if (mode == 1 || (mode == 2 && nemesis_prng_.Chance(50))) fault.blocked.emplace_back(target, other);
  }
  for (const auto& [from, to] : fault.blocked) network_.Block(from, to);
  tracer_.Event(now_, "nemesis", 53, target, mode, [&] {
    return "asymmetric partition, blocked " + DescribeLinks(fault.blocked);
  });
}

void Simulation::StartGray(ActiveFault& fault) {
  const std::vector<ReplicaId> pair = PickReplicas(2);
  if (pair.size() < 2) return;
  fault.gray_loss_ppm = static_cast<uint32_t>(nemesis_prng_.Range(300'000, 1'000'000));
  fault.gray.emplace_back(pair[0], pair[1]);
  if (nemesis_prng_.Chance(70)) fault.gray.emplace_back(pair[1], pair[0]);
  for (const auto& [from, to] : fault.gray) network_.AddGray(from, to, fault.gray_loss_ppm);
  tracer_.Event(now_, "nemesis", 54, pair[0], pair[1], [&] {
    return "gray links " + DescribeLinks(fault.gray) + " lose " +
           std::to_string(fault.gray_loss_ppm / 10'000) + "%";
  });
}

void Simulation::StartCrash() {
  const uint64_t roll = nemesis_prng_.Below(100);
  std::vector<ReplicaId> victims;
  const ReplicaId leader = CurrentLeader();
  if (roll < 20 && leader != 0) {
    victims.push_back(leader);
  } else if (roll < 55) {
    victims = PickReplicas(1);
  } else if (roll < 80) {
    victims = PickReplicas(static_cast<uint32_t>(ProvisionedReplicas().size() / 2 + 1));
  } else {
    victims = PickReplicas(replica_ids_);
  }
  for (ReplicaId id : victims) {
    ReplicaHost& host = Host(id);
    if (!host.up()) continue;
    Crash(host);
    // Half the crashes reboot the machine: its monotonic clock restarts from
    // an unrelated origin (possibly behind the old one).
    if (nemesis_prng_.Chance(50)) {
      host.clock.base_virtual_us = now_;
      host.clock.base_local_us = nemesis_prng_.Range(0, 1'000'000'000);
    }
    const TimeUs downtime = nemesis_prng_.Range(10'000, 1'500'000);
    ScheduleSimple(now_ + downtime, EventKind::kRestart, id, host.incarnation);
  }
}

// A process pause (SIGSTOP, a long GC): the replica handles nothing until it
// resumes, while its clock runs on; messages and sync completions wait.
void Simulation::StartPause() {
  const ReplicaId leader = CurrentLeader();
  const ReplicaId id = leader != 0 && nemesis_prng_.Chance(50)
                           ? leader
                           : PickReplicas(1).front();
  ReplicaHost& host = Host(id);
  if (!host.up() || host.paused(now_)) return;
  host.paused_until = now_ + nemesis_prng_.Range(20'000, 1'500'000);
  tracer_.Event(now_, Who(id), 57, host.paused_until, 0, [&] {
    return "PAUSE until " + FormatTime(host.paused_until);
  });
  ScheduleSimple(host.paused_until, EventKind::kResume, id, host.incarnation);
}

void Simulation::OnResume(ReplicaHost& host) {
  if (!host.up() || host.paused(now_)) return;
  tracer_.Event(now_, Who(host.id), 58, 0, 0, [] { return std::string("resume"); });
  host.replica->Tick(LocalNow(host));
  Drain(host);
}

void Simulation::Heal() {
  healed_ = true;
  result_.stats.heal_at_us = now_;
  network_.HealLinks();
  network_.set_params(plan_.calm_network);
  for (ActiveFault& fault : faults_) fault.ended = true;
  tracer_.Event(now_, "nemesis", 55, 0, 0, [] {
    return std::string("HEAL: links whole, no loss, crashed replicas restart");
  });
  for (auto& host : hosts_) {
    host->paused_until = std::min(host->paused_until, now_);
    if (host->provisioned && !host->up()) StartReplica(*host);
  }
  ScheduleSimple(now_ + plan_.liveness_bound_us, EventKind::kLivenessDeadline, 0);
}

ReplicaId Simulation::CurrentLeader() const {
  ReplicaId leader = 0;
  const pb::Ballot* best = nullptr;
  for (const auto& host : hosts_) {
    if (!host->up() || host->replica->role() != consensus::Role::kLeader) continue;
    const pb::Ballot& ballot = host->replica->promised();
    if (best == nullptr || ballot.round() > best->round() ||
        (ballot.round() == best->round() && ballot.replica() > best->replica())) {
      best = &ballot;
      leader = host->id;
    }
  }
  return leader;
}

}  // namespace tessera::sim
