// HostCluster: the replicas of one replication group as `tessera node` runs
// them (GroupHost, PartitionStateMachine, NodeStore on RocksDB), with only
// time, disk and network simulated (docs/decisions.md D86): one
// VirtualTimeLoop for every replica's executor, a CrashFileSystem and a
// stepped NodeStore per replica (its group commits and snapshot jobs run
// at virtual instants drawn from the seed), and the SimTransport between
// them. The simulator's runs of the production host are built on it.
//
// Determinism: everything runs on the owner's thread, in an order fixed
// by the seed and the owner's calls; every random draw (message fates, disk
// latencies, torn tails) comes from Prng streams of the seed. The same
// seed and the same calls give the same trace (trace()) and the same
// state digests.
//
// Invariants: a replica is either up (store and host) or down (neither);
// a disk step posted for an incarnation that has since crashed does
// nothing; a replica's clock (NowUs of its executor) never decreases and
// survives its restarts, as a machine's monotonic clock does.
//
// Thread safety: none; one owner thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/job_thread.h"
#include "node/group_host.h"
#include "node/virtual_time_loop.h"
#include "sim/prng.h"
#include "sim/ready_contract.h"
#include "sim/sim_network.h"
#include "sim/sim_transport.h"
#include "storage/crash_file_system.h"
#include "storage/node_store.h"

namespace tessera::sim {

struct HostClusterOptions {
  uint64_t seed = 1;
  uint32_t replicas = 3;  // the voters at the start: ids 1..replicas
  // Spares (ids replicas+1..replicas+spares): empty disks that start only
  // when provisioned (Provision), as a node given a new replica does.
  uint32_t spares = 0;
  uint64_t group_id = 1;
  // Timings of every replica (self, group_id and random_seed are set per
  // replica from the above).
  consensus::Options consensus;
  uint64_t write_timeout_ms = 1'000;
  NetworkParams network;
  // Virtual time from a store getting work until its group commit (and its
  // snapshot jobs) run: disk_delay_min_us plus up to disk_delay_jitter_us.
  TimeUs disk_delay_min_us = 500;
  TimeUs disk_delay_jitter_us = 2'000;
  // Log compaction and snapshot transfer of every replica (GroupHostOptions,
  // SnapshotTransferOptions, NodeStoreOptions); small values make lagging
  // replicas catch up by snapshot within a short run.
  uint64_t compaction_trigger_slots = knobs::kNodeCompactionTriggerSlots.default_value;
  uint64_t compaction_keep_slots = knobs::kNodeCompactionKeepSlots.default_value;
  size_t snapshot_chunk_bytes = knobs::kNodeSnapshotChunkBytes.default_value;
  size_t snapshot_install_batch_bytes = knobs::kNodeSnapshotInstallBatchBytes.default_value;
  // Each replica's clock starts at the virtual start plus an offset drawn
  // below this (clocks of different machines share no epoch).
  TimeUs clock_offset_max_us = 0;
  // Every replica's restart stamp is the loop's instant rather than its own
  // clock, so GroupHost request ids repeat across replicas: the worst case
  // for telling proposals apart, which hosts must do by proposer (D99).
  bool equal_restart_stamps = false;
  // Host bugs, to show that the checkers catch them (tests and
  // `tessera sim --bug` only): every GroupHost acknowledges writes once
  // its own log write is durable (GroupHostTestingOptions); every disk's
  // fsync of a write-ahead log makes nothing durable
  // (CrashFileSystem::SetSkipLogSync).
  bool ack_before_quorum = false;
  bool skip_log_sync = false;
};

// One replica's monotonic clock: continuous and piecewise linear in virtual
// time, starting at an offset, its rate changing at SetRate. The executor
// of every incarnation of the replica reads it (host_cluster.cc), so its
// consensus core, leases and deadlines run on it; ticks stay on virtual
// time. Thread safety: every method from any thread.
class DriftClock {
 public:
  explicit DriftClock(TimeUs offset_us) : base_local_us_(offset_us) {}
  TimeUs Local(TimeUs virtual_us) const;
  // From `virtual_us` on the clock runs at (1 + rate_ppm / 1e6) times the
  // virtual rate; rate_ppm > -1'000'000.
  void SetRate(TimeUs virtual_us, int64_t rate_ppm);
  int64_t rate_ppm() const;

 private:
  mutable std::mutex mu_;  // guards every member below
  TimeUs base_virtual_us_ = 0;
  TimeUs base_local_us_ = 0;
  int64_t rate_ppm_ = 0;
};

// A process that stops handling anything for a while (a long GC or VM
// pause): while paused, its executor holds every posted task and tick
// instead of running it; Resume hands them back in order. Thread safety:
// every method from any thread.
class PauseGate {
 public:
  // True (and `task` kept) while paused.
  bool Hold(const node::GroupExecutor::Task& task);
  void Pause();
  std::vector<node::GroupExecutor::Task> Resume();
  bool paused() const;

 private:
  mutable std::mutex mu_;  // guards every member below
  bool paused_ = false;
  std::vector<node::GroupExecutor::Task> held_;
};

// Faults of one incarnation of a replica.
struct RestartFaults {
  // The process dies in the middle of its next snapshot install: after the
  // durable install marker and this many copy batches the install stops
  // (the group fail-stops on it); the next start finishes the install.
  std::optional<size_t> die_in_install_after_batches;
};

class HostCluster {
 public:
  explicit HostCluster(HostClusterOptions options);
  ~HostCluster();
  HostCluster(const HostCluster&) = delete;
  HostCluster& operator=(const HostCluster&) = delete;

  // Starts every replica on an empty disk. The store's or host's errors.
  Status Start();
  // Runs posted tasks, disk steps, deliveries and ticks in virtual-time
  // order until `done()` holds (true) or `budget_us` of virtual time passed
  // (false). `done` is asked between steps.
  template <typename Pred>
  bool RunUntil(Pred done, TimeUs budget_us) {
    const TimeUs deadline_us = loop_.now_us() + budget_us;
    for (;;) {
      Settle();
      if (done()) return true;
      const std::optional<uint64_t> next = loop_.NextTickUs();
      if (!next || *next > deadline_us) return false;
      loop_.AdvanceTo(*next);
    }
  }
  void RunFor(TimeUs duration_us) {
    RunUntil([] { return false; }, duration_us);
  }

  // The process of replica `id` dies: its messages stop, its disk keeps the
  // synced bytes plus a torn prefix of each file's unsynced tail drawn from
  // the seed (none when `torn` is false). Returns the unsynced bytes lost.
  uint64_t Crash(ReplicaId id, bool torn = true);
  // Starts replica `id` again from its disk.
  Status Restart(ReplicaId id, const RestartFaults& faults = {});
  bool up(ReplicaId id) const { return replicas_.at(id).host != nullptr; }
  // Cuts (or heals) every link to and from `id`.
  void Isolate(ReplicaId id, bool isolated);
  // The disk of `id` returns errors on every write and sync (or heals).
  void SetDiskFailing(ReplicaId id, bool failing);

  // Starts spare `id` (down, never provisioned before) on its empty disk
  // with `bootstrap` as its membership until its log says otherwise (the
  // membership that names it a learner, as the node's ReplicationHost
  // does); a log replica (GroupHostOptions::log_only) when `bootstrap`
  // marks it log-only. The store's or host's errors.
  Status Provision(ReplicaId id, const pb::Membership& bootstrap);
  bool provisioned(ReplicaId id) const {
    return id <= options_.replicas || replicas_.at(id).bootstrap.has_value();
  }
  // Asks replica `at` (up) to apply `step` for `replica` to the group's
  // membership (GroupHost::ChangeMembership); the outcome goes to `done`
  // and the trace.
  void ChangeMembership(ReplicaId at, consensus::MembershipStep step, ReplicaId replica,
                        node::GroupHost::MembershipCallback done);

  // The process of `id` (up) stops handling anything (messages, ticks,
  // store completions, requests) until Resume, which runs what it held in
  // order; a crash while paused drops it. StatusOf says nothing of a
  // paused replica (nullopt).
  void Pause(ReplicaId id);
  void Resume(ReplicaId id);
  bool paused(ReplicaId id) const;

  // Asks replica `at` (up) to hand leadership to `to`
  // (GroupHost::TransferLeadership); the outcome goes to the trace.
  void TransferLeadership(ReplicaId at, ReplicaId to);

  // Replica `id` (up) starts an election at once, skipping pre-vote
  // (GroupHost::CampaignNow).
  void Campaign(ReplicaId id);

  // The clock of `id` runs at (1 + rate_ppm / 1e6) times the virtual rate
  // from now on (clock drift; rate_ppm > -1'000'000). Up or down.
  void SetClockRate(ReplicaId id, int64_t rate_ppm);
  int64_t ClockRate(ReplicaId id) const { return replicas_.at(id).clock->rate_ppm(); }

  // Proposes `batch` at replica `id` (up); the outcome lands in `*result`
  // and in the trace.
  void Write(ReplicaId id, pb::KvBatch batch,
             std::shared_ptr<std::optional<Result<pb::KvApplyResult>>> result);
  // The same, the outcome passed to `done` (on the owner's thread, from a
  // task; a host that stops first answers with its stop status).
  void Write(ReplicaId id, pb::KvBatch batch,
             std::function<void(Result<pb::KvApplyResult>)> done);
  // Proposes any partition command (a KV batch or an S3 op) at replica
  // `id` (up), as a node's write path does; the outcome goes to `done` as
  // above.
  void Write(ReplicaId id, pb::KvCommand command,
             std::function<void(Result<pb::KvApplyResult>)> done);
  // Runs `read` on the applied state of replica `id` (up, not paused) as
  // an EVENTUAL read would see it, before returning; its status, or why
  // the state could not be read.
  Status ReadState(ReplicaId id,
                   const std::function<Status(const node::PartitionStateMachine&)>& read);
  // Reads `key` at replica `id` (up) through the host's read path: STRONG
  // is a lease read at the leader, EVENTUAL the replica's applied state.
  void Read(ReplicaId id, const std::string& key, pb::Consistency consistency,
            std::function<void(Result<std::optional<pb::KvRecord>>)> done);
  // The up, not stopped replicas that hold a lease at this instant, each on
  // its own clock (lease safety: at most one).
  std::vector<ReplicaId> LeaseHolders();
  std::optional<node::GroupStatus> StatusOf(ReplicaId id);
  // An up, not stopped replica holding the lease, or 0.
  ReplicaId Leader();
  // Every up replica applied everything the leader chose.
  bool CaughtUp();
  // The store of `id` (up) has a snapshot install marker: an install began
  // and did not finish.
  bool InstallPending(ReplicaId id);
  // The first slot of the log of `id` (up): above 1 once it compacted or
  // installed a snapshot.
  consensus::Slot LogStart(ReplicaId id);
  // What the disk of `id` (up) holds of the group's log: hard state, log
  // base, the entries from log_start and the applied index, as a restart
  // would recover them (NodeStore::RecoverGroup).
  Result<consensus::RecoveredState> DurableLog(ReplicaId id);
  // The state digest of `id` (GroupHost::StateDigest), as text.
  Result<std::string> Digest(ReplicaId id);
  std::optional<std::string> ValueAt(ReplicaId id, const std::string& key);

  // The first breach of ready.h's contract by any replica's consensus core
  // (ReadyContract on every Ready batch, through
  // GroupHostTestingOptions::on_ready); empty when none.
  const std::string& contract_violation() const { return contract_violation_; }

  // Adds `event` to the trace (the owner's own events: a split's sides).
  void Note(std::string event) { Trace(std::move(event)); }
  SimNetwork& network() { return network_; }
  node::VirtualTimeLoop& loop() { return loop_; }
  const std::vector<std::string>& trace() const { return trace_; }
  SimTransportStats transport_stats() const { return transport_.stats(); }

 private:
  struct Replica {
    std::shared_ptr<storage::CrashFileSystem> disk;
    std::shared_ptr<DriftClock> clock;
    std::optional<pb::Membership> bootstrap;  // a provisioned spare's
    bool log_only = false;                    // a spare provisioned as a log replica
    std::shared_ptr<PauseGate> gate;          // of the current incarnation
    std::shared_ptr<ReadyContract> contract;  // of the current incarnation
    std::unique_ptr<storage::NodeStore> store;
    std::shared_ptr<node::GroupHost> host;
    uint64_t incarnation = 0;
    bool disk_step_posted = false;
  };
  // Runs the queued tasks, and posts a disk step for every store that got
  // work, until nothing is queued.
  void Settle();
  void PostDiskStep(ReplicaId id, Replica& replica);
  void Trace(std::string event);

  const HostClusterOptions options_;
  node::VirtualTimeLoop loop_;
  SimNetwork network_;
  SimTransport transport_;
  Prng disk_prng_;
  Prng crash_prng_;
  Prng clock_prng_;
  JobThread scanner_{"sim-digest", 4};
  std::map<ReplicaId, Replica> replicas_;
  std::vector<std::string> trace_;
  std::string contract_violation_;
};

}  // namespace tessera::sim
