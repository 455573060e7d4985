#include "sim/simulation.h"

#include <algorithm>
#include <utility>

#include "common/check.h"

namespace tessera::sim {

namespace {

// Spare replica ids for membership changes: each voter replacement uses
// one, a log replica standing in for a lost voter one more, and a target
// lost before it joined one more (a dropped replica's host never returns
// in the simulation, where a real node would serve as a target again).
uint32_t SpareReplicas(uint32_t replicas) {
  return std::min<uint32_t>(4, static_cast<uint32_t>(limits::kGroupReplicasMax) - replicas);
}

// A run is a runaway (a message storm, a livelock) past these bounds; far
// above what any seed needs (a few thousand queued events, a few hundred
// thousand events in all).
constexpr size_t kQueuedEventsMax = 200'000;
constexpr uint64_t kEventsPerRunMax = 20'000'000;


}  // namespace

const char* SimBugName(SimBug bug) {
  switch (bug) {
    case SimBug::kNone: return "none";
    case SimBug::kAckBeforeQuorum: return "ack-before-quorum";
    case SimBug::kSkipFsync: return "skip-fsync";
    case SimBug::kLeaseIgnoreDrift: return "lease-ignore-drift";
    case SimBug::kStaleRead: return "stale-read";
  }
  return "?";
}

std::optional<SimBug> SimBugFromName(std::string_view name) {
  for (SimBug bug : {SimBug::kNone, SimBug::kAckBeforeQuorum, SimBug::kSkipFsync,
                     SimBug::kLeaseIgnoreDrift, SimBug::kStaleRead}) {
    if (name == SimBugName(bug)) return bug;
  }
  return std::nullopt;
}

std::vector<SimBug> AllSimBugs() {
  return {SimBug::kAckBeforeQuorum, SimBug::kSkipFsync, SimBug::kLeaseIgnoreDrift,
          SimBug::kStaleRead};
}

const char* InvariantName(Invariant invariant) {
  switch (invariant) {
    case Invariant::kNone: return "none";
    case Invariant::kAgreement: return "agreement";
    case Invariant::kDurability: return "durability";
    case Invariant::kLinearizability: return "linearizability";
    case Invariant::kLinearizabilityInconclusive: return "linearizability-inconclusive";
    case Invariant::kLeaseSafety: return "lease-safety";
    case Invariant::kLiveness: return "liveness";
    case Invariant::kContract: return "contract";
    case Invariant::kConfig: return "config";
  }
  return "?";
}

// Simulation timings, in the relations of options.h's table:
//   tick 10 ms; heartbeat H in [30, 60] ms; lease L in [400, 700] ms;
//   E = L + H + [20, 150] ms (an election starts only after every lease it
//   could break expired); E2 = E + [400, 700] ms; Q = E; drift bound one of
//   0.1%, 1%, 3%.
consensus::Options SimOptions(uint64_t seed, uint32_t replicas, ReplicaId self) {
  Prng prng(DeriveSeed(seed, kStreamOptions));
  consensus::Options options;
  options.self = self;
  options.group_id = 1;
  options.random_seed = DeriveSeed(seed, kStreamReplicaSeed + (uint64_t{replicas} << 8) + self);
  options.tick_interval_us = 10'000;
  options.heartbeat_interval_us = prng.Range(30, 60) * 1000;
  options.lease_duration_us = prng.Range(400, 700) * 1000;
  static constexpr uint32_t kDriftsPpm[] = {1'000, 10'000, 30'000};
  options.max_clock_drift_ppm = kDriftsPpm[prng.Below(3)];
  options.election_timeout_min_us =
      options.lease_duration_us + options.heartbeat_interval_us + prng.Range(20, 150) * 1000;
  options.election_timeout_max_us = options.election_timeout_min_us + prng.Range(400, 700) * 1000;
  options.check_quorum_timeout_us = options.election_timeout_min_us;
  return options;
}

// Liveness bound after heal (every link whole, every replica up), in virtual
// time, from the Options:
//   L        replicas restarted at heal, and followers that heard the old
//            leader, refuse promises for one lease
//   3 * E2   election timers fire below E2; two rounds may be wasted (a
//            split vote, a pre-vote or prepare refused while a guard held)
//   L + E2   the client timeout: a client whose attempt sits at a dead or
//            deposed replica gives up before it finds the new leader
//   1 s      phase 1, the leader's no-op, a client write, and catch-up of
//            laggards by log or snapshot: a few dozen round trips of at most
//            ~10 ms network and ~50 ms fsync each after heal
consensus::TimeUs LivenessBoundUs(const consensus::Options& options) {
  const TimeUs lease = options.lease_duration_us;
  const TimeUs election_max = options.election_timeout_max_us;
  return lease + 3 * election_max + (lease + election_max) + 1'000'000;
}

Simulation::Simulation(const SimConfig& config)
    : config_(config),
      tracer_(config.trace),
      net_prng_(DeriveSeed(config.seed, kStreamNetwork)),
      disk_prng_(DeriveSeed(config.seed, kStreamDisk)),
      client_prng_(DeriveSeed(config.seed, kStreamClients)),
      nemesis_prng_(DeriveSeed(config.seed, kStreamNemesis)),
      clock_prng_(DeriveSeed(config.seed, kStreamClocks)),
      replica_ids_(SpareReplicas(config.replicas) + config.replicas),
      network_(replica_ids_) {
  TESSERA_CHECK(config.replicas >= 1 && config.replicas <= limits::kGroupReplicasMax);
  PlanSeed();
  for (ReplicaId id = 1; id <= config.replicas; ++id) chosen_membership_.add_voters(id);
  descriptor_.set_table("sim");
  descriptor_.set_group_id(plan_.options.group_id);
  descriptor_.set_epoch(1);
  for (ReplicaId id = 1; id <= config.replicas; ++id) {
    pb::ReplicaPlacement* r = descriptor_.add_replicas();
    r->set_node_id(id);
    r->set_az("az" + std::to_string((id - 1) % 3 + 1));
  }
  for (ReplicaId id = 1; id <= replica_ids_; ++id) {
    hosts_.push_back(std::make_unique<ReplicaHost>(chosen_membership_));
    hosts_.back()->id = id;
    hosts_.back()->provisioned = id <= config.replicas;
    hosts_.back()->ever_named = id <= config.replicas;
  }
}

consensus::Options Simulation::ReplicaOptions(ReplicaId id, uint64_t incarnation) const {
  consensus::Options options = plan_.options;
  options.self = id;
  options.random_seed = DeriveSeed(config_.seed, kStreamReplicaSeed + (uint64_t{id} << 8) +
                                                     (incarnation << 24));
  return options;
}

void Simulation::Schedule(TimeUs at, Event event) {
  TESSERA_CHECK(at >= now_);
  queue_.emplace(std::make_pair(at, next_event_seq_++), std::move(event));
}

void Simulation::ScheduleSimple(TimeUs at, EventKind kind, uint32_t target, uint64_t arg,
                                uint64_t arg2) {
  Event event;
  event.kind = kind;
  event.target = target;
  event.arg = arg;
  event.arg2 = arg2;
  Schedule(at, std::move(event));
}

std::string Simulation::Who(ReplicaId id) const { return "r" + std::to_string(id); }

void Simulation::Violate(Invariant invariant, std::string text) {
  if (!result_.ok) return;
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  result_.ok = false;
  result_.invariant = invariant;
  result_.violation = std::string(InvariantName(invariant)) + ": " + text;
  result_.violation_at_us = now_;
  tracer_.Event(now_, "sim", 900 + static_cast<uint64_t>(invariant), 0, 0,
                [&] { return "VIOLATION " + result_.violation; });
}

uint64_t Simulation::HistoryTime() {
  // Ops of one virtual instant keep the order in which they happened.
  if (now_ != history_instant_) {
    history_instant_ = now_;
    history_step_ = 0;
  }
  TESSERA_CHECK(history_step_ < kHistoryStepsPerUs);
  return now_ * kHistoryStepsPerUs + history_step_++;
}

void Simulation::Dispatch(Event& event) {
  switch (event.kind) {
    case EventKind::kDeliver: Deliver(event); break;
    case EventKind::kTick: OnTick(Host(event.target)); break;
    case EventKind::kSyncDone: {
      ReplicaHost& host = Host(event.target);
      if (host.paused(now_)) {  // the process learns of the sync on resume
        Schedule(host.paused_until, std::move(event));
      } else {
        OnSyncDone(host, event.arg, event.arg2);
      }
      break;
    }
    case EventKind::kClient: OnClientEvent(clients_[event.target - 1], event.arg); break;
    case EventKind::kClientDeadline:
      OnClientDeadline(clients_[event.target - 1], event.arg);
      break;
    case EventKind::kFaultStart: OnFaultStart(event.arg); break;
    case EventKind::kFaultEnd: OnFaultEnd(event.arg); break;
    case EventKind::kRestart: {
      ReplicaHost& host = Host(event.target);
      if (!host.up() && !host.lost && host.incarnation == event.arg) StartReplica(host);
      break;
    }
    case EventKind::kCampaign: {
      ReplicaHost& host = Host(event.target);
      if (host.up() && !host.paused(now_)) {
        tracer_.Event(now_, Who(host.id), 30, 0, 0, [] { return std::string("campaign"); });
        host.replica->Campaign(LocalNow(host));
        Drain(host);
      }
      break;
    }
    case EventKind::kMembership:
      if (plan_.replica_losses > 0) OnAutoadminStep();
      else OnMembershipStep();
      break;
    case EventKind::kLoseReplica: OnLoseReplica(); break;
    case EventKind::kClockRate: OnClockRate(Host(event.target)); break;
    case EventKind::kResume: OnResume(Host(event.target)); break;
    case EventKind::kHeal: Heal(); break;
    case EventKind::kLivenessDeadline: OnLivenessDeadline(); break;
  }
}

SimResult Simulation::Run() {
  const std::string invalid = ReplicaOptions(1, 1).Validate();
  if (!invalid.empty()) {
    Violate(Invariant::kConfig, "simulated Options invalid: " + invalid);
    return result_;
  }
  tracer_.Event(now_, "sim", 1, config_.seed, config_.replicas, [&] {
    const consensus::Options& o = plan_.options;
    return "seed " + std::to_string(config_.seed) + " replicas " +
           std::to_string(config_.replicas) + " bug " + SimBugName(config_.bug) +
           " faults [" + plan_.faults + "] lease " + std::to_string(o.lease_duration_us) +
           "us heartbeat " + std::to_string(o.heartbeat_interval_us) + "us election [" +
           std::to_string(o.election_timeout_min_us) + "," +
           std::to_string(o.election_timeout_max_us) + ")us drift " +
           std::to_string(o.max_clock_drift_ppm) + "ppm heal at " + FormatTime(plan_.heal_at_us);
  });
  network_.set_params(plan_.fault_network);
  SetUpClocks();
  for (auto& host : hosts_) {
    if (host->provisioned) StartReplica(*host);
    ScheduleSimple(disk_prng_.Below(plan_.options.tick_interval_us), EventKind::kTick, host->id);
  }
  if (plan_.membership || plan_.replica_losses > 0) {
    ScheduleSimple(nemesis_prng_.Range(500'000, 1'500'000), EventKind::kMembership, 0);
  }
  for (uint32_t i = 0; i < plan_.replica_losses; ++i) {
    ScheduleSimple(nemesis_prng_.Range(300'000, std::max<TimeUs>(400'000, plan_.heal_at_us)),
                   EventKind::kLoseReplica, 0);
  }
  if (plan_.campaign_at_start) {
    const TimeUs at = plan_.options.lease_duration_us * 11 / 10 + plan_.options.tick_interval_us;
    ScheduleSimple(at, EventKind::kCampaign, 1 + nemesis_prng_.Below(config_.replicas));
  }
  StartClients();
  PlanFaults();
  ScheduleSimple(plan_.heal_at_us, EventKind::kHeal, 0);
  Loop();
  if (result_.ok && done_) CheckFinal();
  result_.stats.virtual_time_us = now_;
  result_.stats.faults = plan_.faults;
  result_.trace_hash = tracer_.hash();
  return result_;
}

void Simulation::Loop() {
  while (result_.ok && !done_ && !queue_.empty()) {
    auto node = queue_.extract(queue_.begin());
    now_ = node.key().first;
    ++result_.stats.events;
    tracer_.Mix(now_);
    tracer_.Mix(static_cast<uint64_t>(node.mapped().kind));
    Dispatch(node.mapped());
    if (!result_.ok) break;
    CheckLeases();
    if (healed_) CheckHealProgress();
    if (queue_.size() > kQueuedEventsMax || result_.stats.events > kEventsPerRunMax) {
      Violate(Invariant::kLiveness, "runaway: " + std::to_string(queue_.size()) +
                                        " queued events after " +
                                        std::to_string(result_.stats.events) +
                                        " (a message storm or livelock)");
    }
  }
}

SimConfig MakeSimConfig(uint32_t replicas, uint64_t seed, SimBug bug) {
  SimConfig config;
  config.replicas = replicas;
  config.seed = seed;
  config.bug = bug;
  if (bug == SimBug::kNone) return config;
  config.fault_percent = 100;
  config.faults = SimFaults::None();
  SimFaults& on = config.faults;
  switch (bug) {
    case SimBug::kNone:
      break;
    case SimBug::kAckBeforeQuorum:  // a leader cut off (or crashed) after its own fsync
      on.partitions = on.crashes = on.loss = true;
      break;
    case SimBug::kSkipFsync:  // crashes, with writes in flight
      on.crashes = on.loss = on.duplication = on.reordering = on.delay_spikes = on.compaction = true;
      break;
    case SimBug::kLeaseIgnoreDrift:  // a slow-clocked leader cut off or paused
      on.partitions = on.pauses = on.clock_drift = on.reordering = on.delay_spikes = true;
      break;
    case SimBug::kStaleRead:  // clients left talking to a deposed leader
      on.partitions = on.pauses = on.asymmetric_partitions = true;
      break;
  }
  return config;
}

SimResult RunSimulation(const SimConfig& config) {
  Simulation simulation(config);
  return simulation.Run();
}

}  // namespace tessera::sim
