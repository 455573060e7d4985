// Simulation: the state of one simulator run (private to src/sim/). The
// implementation is split by concern:
//   simulation.cc  setup, the event loop, RunSimulation
//   sim_host.cc    driving each Replica as ready.h documents: disk, network,
//                  apply, snapshots, compaction, crash and restart
//   sim_clients.cc the clients and the history they record
//   sim_nemesis.cc the plan of a seed, its faults, clocks and the heal
//   sim_membership.cc  voter replacement through membership changes
//   sim_autoadmin.cc   voters lost for good, replaced by the autoadmin's
//                  planner
//   sim_checks.cc  the invariants
//
// Determinism: every container that is iterated is ordered (std::map,
// std::vector, std::deque); all randomness comes from Prng streams derived
// from the seed; time is the virtual clock `now_`.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autoadmin/planner.h"
#include "chaos/linearizability.h"
#include "common/limits.h"
#include "consensus/replica.h"
#include "sim/kv_state.h"
#include "sim/prng.h"
#include "sim/sim_disk.h"
#include "sim/sim_network.h"
#include "sim/sim_trace.h"
#include "sim/simulator.h"

namespace tessera::sim {

using consensus::ReplicaId;
using consensus::TimeUs;

// Independent random streams of one seed: changing how one concern draws
// numbers does not reshuffle the others.
enum SeedStream : uint64_t {
  kStreamOptions = 1,
  kStreamPlan,
  kStreamClocks,
  kStreamNetwork,
  kStreamDisk,
  kStreamClients,
  kStreamNemesis,
  kStreamReplicaSeed,
  kStreamLoss = 1'000,  // apart from kStreamReplicaSeed + (id << 8) + ...
};

// History timestamps: virtual microseconds scaled so that ops within one
// instant keep the order in which they happened.
inline constexpr uint64_t kHistoryStepsPerUs = 1 << 16;

enum class EventKind : uint8_t {
  kDeliver,
  kTick,
  kSyncDone,
  kClient,
  kClientDeadline,
  kFaultStart,
  kFaultEnd,
  kRestart,
  kCampaign,
  kClockRate,
  kMembership,
  kResume,
  kHeal,
  kLoseReplica,
  kLivenessDeadline,
};

struct Event {
  EventKind kind = EventKind::kTick;
  uint32_t target = 0;  // replica or client id
  uint64_t arg = 0;     // incarnation, op serial, fault index, sync position
  uint64_t arg2 = 0;
  std::unique_ptr<pb::Message> message;  // kDeliver
};

// A replica's local monotonic clock: continuous and piecewise linear in
// virtual time, its rate changing at SetRate.
struct SimClock {
  TimeUs base_virtual_us = 0;
  TimeUs base_local_us = 0;
  int64_t rate_ppm = 0;  // (rate - 1) in parts per million; > -1'000'000
  TimeUs Local(TimeUs virtual_us) const {
    const int64_t elapsed = static_cast<int64_t>(virtual_us - base_virtual_us);
    return base_local_us + static_cast<TimeUs>(elapsed + elapsed * rate_ppm / 1'000'000);
  }
  void SetRate(TimeUs virtual_us, int64_t new_rate_ppm) {
    base_local_us = Local(virtual_us);
    base_virtual_us = virtual_us;
    rate_ppm = new_rate_ppm;
  }
};

struct WriteWaiter {
  uint32_t client = 0;
  uint64_t op_serial = 0;
  uint64_t request_id = 0;
};

struct ReadWaiter {
  uint32_t client = 0;
  uint64_t op_serial = 0;
  Slot read_index = 0;
};

// messages_after_persist and the persist_seq of one Ready, held until every
// disk write up to `disk_position` is durable.
struct AfterPersist {
  uint64_t disk_position = 0;
  uint64_t persist_seq = 0;
  std::vector<pb::Message> messages;
};

struct ReplicaHost {
  ReplicaId id = 0;
  // A spare (an id above SimConfig::replicas) exists only once the
  // membership actor adds it as a learner.
  bool provisioned = false;
  // Died for good (replica_loss) or dropped as a stale replica: never
  // restarts, never provisioned again.
  bool lost = false;
  SimClock clock;
  std::unique_ptr<consensus::Replica> replica;  // null while crashed
  uint64_t incarnation = 0;
  SimDisk disk;
  // A log replica (pb::Membership.log_only, from the membership it was
  // provisioned with): its KvState stays empty, only its applied index
  // advances.
  bool log_only = false;
  // Some proposed membership named it: once dropped it never returns (its
  // messages as a member may still be in flight). A target dropped before
  // any membership named it is an empty spare again, as a real node would
  // be a target again.
  bool ever_named = false;
  // Volatile host state, lost on a crash.
  KvState kv;
  std::deque<AfterPersist> awaiting_sync;
  TimeUs last_sync_at = 0;  // syncs complete in the order they were issued
  std::multimap<Slot, WriteWaiter> write_waiters;
  std::vector<ReadWaiter> read_waiters;
  consensus::Role last_role = consensus::Role::kFollower;
  TimeUs next_compaction_at = 0;
  TimeUs paused_until = 0;  // a paused process handles nothing before this

  explicit ReplicaHost(const pb::Membership& membership) : disk(membership) {}
  bool up() const { return replica != nullptr; }
  bool paused(TimeUs now) const { return now < paused_until; }
};

struct ClientOp {
  uint64_t serial = 0;
  size_t history_index = 0;
  bool is_write = false;
  std::string command;  // writes: the encoded KvCommand
  bool in_flight = false;  // an attempt whose outcome is unknown is pending
  ReplicaId attempt_replica = 0;
  uint64_t attempt_request_id = 0;
  uint32_t attempts = 0;
};

struct SimClient {
  uint32_t id = 0;
  ReplicaId leader_guess = 1;
  std::optional<ClientOp> op;
  uint64_t next_request_seq = 1;
  std::map<std::string, std::string> last_seen;  // key -> value, for cas
};

struct AckedWrite {
  uint64_t request_id = 0;
  uint32_t client = 0;
  TimeUs at = 0;
};

struct ChosenSlot {
  std::string fingerprint;
  uint64_t request_id = 0;  // of a command; 0 for no-ops and membership
  // KvState::DataHash after applying the slot, as the first replica that
  // holds the state applied it; unset while only log replicas did.
  std::optional<uint64_t> state_hash;
  ReplicaId first_replica = 0;
  std::string description;
};

// Per-seed knobs drawn from the seed (all randomised, bounded).
struct SeedPlan {
  consensus::Options options;  // group-wide timing; self/random_seed per replica
  NetworkParams fault_network;
  NetworkParams calm_network;
  TimeUs fsync_min_us = 0;
  TimeUs fsync_jitter_us = 0;
  uint32_t fsync_slow_ppm = 0;
  TimeUs fsync_slow_max_us = 0;
  uint32_t clients = 2;
  uint32_t keys = 1;
  TimeUs think_max_us = 0;
  uint32_t large_value_percent = 0;  // of writes, with values of 16..256 KiB
  TimeUs retry_backoff_max_us = 0;
  TimeUs client_timeout_us = 0;
  TimeUs heal_at_us = 0;
  TimeUs liveness_bound_us = 0;
  TimeUs compaction_period_us = 0;
  Slot compaction_keep = 0;
  bool compaction = false;
  bool partitions = false;
  bool asymmetric = false;
  bool gray = false;
  bool crashes = false;
  bool pauses = false;
  bool clock_drift = false;
  bool membership = false;
  bool campaigns = false;
  int64_t drift_half_spread_ppm = 0;  // clock rates stay within +-this
  bool campaign_at_start = false;
  uint32_t replica_losses = 0;  // voters lost for good (replica_loss): 0..2
  std::string faults;  // names of the faults this seed runs
};

enum class FaultKind : uint8_t {
  kPartition,
  kIsolateLeader,
  kAsymmetric,
  kGray,
  kCrash,
  kPause,
  kCampaign,
  kTransfer,  // the leader hands leadership to a random voter
};

struct ActiveFault {
  FaultKind kind = FaultKind::kPartition;
  bool ended = false;
  std::vector<std::pair<ReplicaId, ReplicaId>> blocked;  // directed links
  std::vector<std::pair<ReplicaId, ReplicaId>> gray;
  uint32_t gray_loss_ppm = 0;
};

class Simulation {
 public:
  explicit Simulation(const SimConfig& config);
  SimResult Run();

 private:
  // --- simulation.cc ---------------------------------------------------------
  void Schedule(TimeUs at, Event event);
  void ScheduleSimple(TimeUs at, EventKind kind, uint32_t target, uint64_t arg = 0,
                      uint64_t arg2 = 0);
  void Dispatch(Event& event);
  void Loop();
  uint64_t HistoryTime();
  void Violate(Invariant invariant, std::string text);
  std::string Who(ReplicaId id) const;
  TimeUs LocalNow(const ReplicaHost& host) const { return host.clock.Local(now_); }
  ReplicaHost& Host(ReplicaId id) { return *hosts_[id - 1]; }
  consensus::Options ReplicaOptions(ReplicaId id, uint64_t incarnation) const;
  void SetUpClocks();

  // --- sim_host.cc -------------------------------------------------------
  void StartReplica(ReplicaHost& host);
  void Drain(ReplicaHost& host);
  void HandleReady(ReplicaHost& host, consensus::Ready& ready);
  bool PersistReady(ReplicaHost& host, consensus::Ready& ready);
  void HoldAfterPersist(ReplicaHost& host, consensus::Ready& ready);
  void ScheduleSync(ReplicaHost& host);
  void OnSyncDone(ReplicaHost& host, uint64_t incarnation, uint64_t upto);
  void ReleaseDurable(ReplicaHost& host);
  void ApplyCommitted(ReplicaHost& host, const pb::Entry& entry);
  void WriteKvDelta(ReplicaHost& host);
  void AnswerSnapshotRequest(ReplicaHost& host, ReplicaId to);
  void InstallSnapshot(ReplicaHost& host, const pb::InstallSnapshot& install);
  void MaybeCompact(ReplicaHost& host);
  void Send(ReplicaHost& from, const pb::Message& message);
  void Deliver(Event& event);
  void OnTick(ReplicaHost& host);
  void Crash(ReplicaHost& host);
  void NoteRole(ReplicaHost& host);

  // --- sim_clients.cc ----------------------------------------------------
  void StartClients();
  void OnClientEvent(SimClient& client, uint64_t serial);
  void StartOp(SimClient& client);
  void Attempt(SimClient& client);
  void AttemptWrite(SimClient& client, ReplicaHost& host);
  void AttemptRead(SimClient& client, ReplicaHost& host);
  void RetryLater(SimClient& client, ReplicaId next_replica, bool hinted);
  void FollowNotLeader(SimClient& client, const Status& status);
  void CompleteWrite(SimClient& client, Slot slot, uint64_t request_id, bool cas_succeeded);
  void CompleteRead(SimClient& client, ReplicaId replica, const std::optional<std::string>& value);
  void FinishOp(SimClient& client);
  void AbandonOp(SimClient& client, const char* why);
  void OnClientDeadline(SimClient& client, uint64_t serial);
  void OnWriteSlotApplied(ReplicaHost& host, Slot slot, const SlotResult* result);
  void ServeReadWaiters(ReplicaHost& host);
  void FailWaitersOnCrash(ReplicaHost& host);
  ReplicaId RandomReplica(ReplicaId other_than);
  bool ClientsMayStart() const;
  void AckBeforeQuorum(ReplicaHost& host);  // SimBug::kAckBeforeQuorum

  // --- sim_nemesis.cc -------------------------------------------------
  void PlanSeed();
  void PlanFaults();
  void OnFaultStart(uint64_t index);
  void OnFaultEnd(uint64_t index);
  void StartPartition(ActiveFault& fault, bool isolate_leader);
  void StartAsymmetric(ActiveFault& fault);
  void StartGray(ActiveFault& fault);
  void StartCrash();
  void StartPause();
  void OnClockRate(ReplicaHost& host);
  int64_t DrawClockRate();
  void OnResume(ReplicaHost& host);
  void Heal();
  ReplicaId CurrentLeader() const;
  std::vector<ReplicaId> ProvisionedReplicas() const;
  std::vector<ReplicaId> PickReplicas(uint32_t count);
  void StartTransfer();

  // --- sim_membership.cc --------------------------------------------------
  void OnMembershipStep();
  void ProposeMembership(ReplicaHost& leader, const pb::Membership& next, const std::string& what);
  void ProvisionSpare(ReplicaId id, const pb::Membership& next);
  bool IsFinalMember(ReplicaId id) const;

  // --- sim_autoadmin.cc ----------------------------------------------------
  void OnLoseReplica();
  void OnAutoadminStep();
  void ExecuteAutoadmin(const autoadmin::Action& action);
  // replica_loss seeds end only once this holds: `replicas` voters in as
  // many AZs as they can span, none lost, no learner, meta's descriptor in
  // step. Empty when it holds, else what is missing.
  std::string MembershipNotConverged() const;

  // --- sim_checks.cc ---------------------------------------------------
  void CheckAgreement(ReplicaHost& host, const pb::Entry& entry, const std::string& description);
  void CheckSnapshotAgreement(ReplicaHost& host, const KvState& snapshot);
  void CheckAckedSlot(ReplicaHost& host, Slot slot, uint64_t request_id);
  void CheckLeases();
  void CheckHealProgress();
  void OnLivenessDeadline();
  void CheckFinal();
  void CheckDurabilityAtEnd();
  void CheckLinearizability();

  SimConfig config_;
  SeedPlan plan_;
  Tracer tracer_;
  Prng net_prng_;
  Prng disk_prng_;
  Prng client_prng_;
  Prng nemesis_prng_;
  Prng clock_prng_;

  uint32_t replica_ids_ = 0;  // hosts: the initial voters, then spares
  TimeUs now_ = 0;
  uint64_t next_event_seq_ = 0;
  std::map<std::pair<TimeUs, uint64_t>, Event> queue_;
  std::vector<std::unique_ptr<ReplicaHost>> hosts_;
  SimNetwork network_;
  std::vector<SimClient> clients_;
  std::vector<ActiveFault> faults_;
  std::vector<TimeUs> fault_starts_;

  std::vector<chaos::KvOperation> history_;
  std::vector<bool> history_discarded_;
  uint64_t next_op_serial_ = 1;
  TimeUs history_instant_ = 0;
  uint64_t history_step_ = 0;

  std::map<Slot, ChosenSlot> chosen_;
  std::map<Slot, AckedWrite> acked_;
  pb::Membership chosen_membership_;  // of the highest chosen membership slot
  Slot chosen_membership_slot_ = 0;
  uint64_t next_membership_request_ = 1;
  // replica_loss: the partition descriptor as meta would hold it.
  pb::PartitionDescriptor descriptor_;
  bool healed_ = false;
  bool post_heal_write_ = false;
  bool done_ = false;
  std::vector<TimeUs> scratch_delays_;

  SimResult result_;
};

}  // namespace tessera::sim
