// GroupHost: drives one consensus::Replica with real I/O, as ready.h
// prescribes: ticks and time from its GroupExecutor (group_executor.h: an
// Asio strand and the monotonic clock in production, a virtual clock in
// tests and simulation), log writes through the node's
// group-commit writer, messages to the node's transport, committed entries
// applied to the PartitionStateMachine, snapshots streamed in chunks from
// and staged/installed into the NodeStore (snapshot_sender.h,
// snapshot_receiver.h), and log compaction (never past a snapshot in
// flight). Nothing waits for a synced write on the strand: log writes and
// compactions are queued to the group-commit writer, snapshot staging and
// installs run on the store's snapshot thread; while an install runs the
// group is frozen (no ticks or pumps, consensus messages dropped, reads
// refused with Unavailable).
//
// Clients: Write proposes a KvBatch and completes once it is applied on
// this replica (or fails: NotLeader with a hint, Throttled, Aborted when
// another value took its slot — safe to retry —, Timeout when the outcome is
// unknown). Read and Scan serve STRONG reads under the leader's lease (after
// the applied index reaches the lease read index) and EVENTUAL reads from
// this replica's applied state.
//
// Thread safety: every public method may be called from any thread; all
// Replica calls run on the group's strand (the executor's serial context).
// Callbacks run on the strand and must not block.
#pragma once

#include <boost/asio/io_context.hpp>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "common/job_thread.h"
#include "consensus/membership_step.h"
#include "consensus/replica.h"
#include "knobs/knobs.h"
#include "node/group_executor.h"
#include "node/group_host_types.h"
#include "node/partition_state_machine.h"
#include "node/snapshot_receiver.h"
#include "node/snapshot_sender.h"
#include "storage/node_store.h"
#include "tessera/kv.pb.h"

namespace tessera::node {

// Bugs a test or the simulator plants in a GroupHost to show that its
// checkers catch them (docs/decisions.md D115). Testing only: no
// layout field, knob or flag sets them; the node never fills this struct.
struct GroupHostTestingOptions {
  // Acknowledge a write once this replica's own log write of its entry is
  // durable, without waiting for the entry to be chosen and applied
  // (the answer is an empty KvApplyResult).
  bool ack_before_quorum = false;
  // Called on the strand with every Ready batch the consensus core hands
  // over, before the host acts on it: the simulator checks the core keeps
  // ready.h's contract (sim/ready_contract.h). Must not block.
  std::function<void(const consensus::Ready&)> on_ready;
};

struct GroupHostOptions {
  consensus::Options consensus;  // self, group_id, timings
  pb::Membership bootstrap_membership;  // used when the store has no state
  // This replica is a log replica (its placement in the group's descriptor
  // says so; docs/consensus.md, "Log replicas"): it keeps the log and
  // votes, applies nothing (committed entries only advance its applied
  // index), installs only snapshots without data (the leader's log base),
  // answers every read NotLeader with the leader's hint, and has no state
  // digest.
  bool log_only = false;
  // Compaction: once this many applied slots are held, keep the newest
  // compaction_keep_slots and drop the rest.
  uint64_t compaction_trigger_slots = knobs::kNodeCompactionTriggerSlots.default_value;
  uint64_t compaction_keep_slots = knobs::kNodeCompactionKeepSlots.default_value;
  uint64_t write_timeout_ms = 5'000;
  uint64_t read_timeout_ms = 2'000;
  // Observers, called on the group's strand (must not block): after each
  // batch of committed entries is applied to the state (in slot order), and
  // after a snapshot replaced the whole state. The metadata service keeps
  // its in-memory copy (MemDS) current with them.
  std::function<void(const std::vector<pb::Entry>& applied)> on_applied;
  std::function<void()> on_state_replaced;
  // Splits (docs/partition-splits.md "Apply"), on the group's strand: the
  // descriptor writes of a split entry, asked for just before its apply
  // (the replication host narrows the parent's range there), and a call
  // once the split applied (it starts the child). May be empty.
  std::function<Result<std::vector<storage::GroupMutation>>(const pb::KvSplit&)> split_descriptors;
  std::function<void(const pb::KvSplit&)> on_split_applied;
  // Called with the group's range end when a snapshot install left one
  // stored (the snapshot's state was split), and on a log replica when a
  // split entry commits (it applies nothing, but its range must narrow
  // too); the replication host narrows the group's descriptor. Must be
  // idempotent; an error stops the replica like a failed apply. May be empty.
  std::function<Status(const std::string& end_key)> on_range_narrowed;
  // Streamed snapshot transfer (snapshot_sender.h, snapshot_receiver.h),
  // and its process-wide counters (may be null; must outlive the host).
  SnapshotTransferOptions snapshot;
  SnapshotCounters* snapshot_counters = nullptr;
  GroupHostTestingOptions testing;  // off; never set outside tests
};

struct GroupStatus {
  consensus::Role role = consensus::Role::kFollower;
  consensus::ReplicaId leader = 0;
  pb::Ballot ballot;
  consensus::Slot chosen = 0;
  consensus::Slot applied = 0;
  consensus::Slot last_slot = 0;
  consensus::Slot log_start = 0;
  bool holds_lease = false;
  pb::Membership membership;        // the latest in this replica's log
  bool membership_pending = false;  // a membership entry above the chosen prefix
  // The group stopped on this replica for good (a failed log write, apply
  // or snapshot install: fail-stop until the process restarts); it answers
  // every request NotLeader without a hint and reports itself a follower.
  bool stopped = false;
  bool log_only = false;  // a log replica (GroupHostOptions::log_only)
};

using consensus::MembershipStep;

class GroupHost : public std::enable_shared_from_this<GroupHost> {
 public:
  using WriteCallback = std::function<void(Result<pb::KvApplyResult>)>;
  using ReadCallback = std::function<void(Result<std::optional<pb::KvRecord>>)>;
  using ScanCallback = std::function<void(Result<pb::KvScanResponse>)>;
  using StatusCallback = std::function<void(GroupStatus)>;
  // Called on the group's strand with the state machine (valid only during
  // the call), or with the error that kept the read from being served.
  using StateReader = std::function<void(Result<const PartitionStateMachine*>)>;

  // Recovers the group from `store` (or bootstraps it) and starts ticking.
  // `store` and `sender` must outlive the host. Runs on a strand of `io`
  // (AsioGroupExecutor).
  static Result<std::shared_ptr<GroupHost>> Start(boost::asio::io_context& io,
                                                  storage::NodeStore* store, MessageSender* sender,
                                                  GroupHostOptions options);
  // The same on `executor`, which the host owns from then on.
  static Result<std::shared_ptr<GroupHost>> Start(std::unique_ptr<GroupExecutor> executor,
                                                  storage::NodeStore* store, MessageSender* sender,
                                                  GroupHostOptions options);
  ~GroupHost();

  // Consensus messages go to the replica; SnapshotChunk and
  // SnapshotChunkAck to the snapshot receiver and sender.
  void Deliver(pb::Message message);
  void Write(pb::KvBatch batch, WriteCallback done);
  // Proposes any partition command (a KV batch or an S3 op).
  void Write(pb::KvCommand command, WriteCallback done);
  // Runs `read` once a read of `consistency` may be served: STRONG under the
  // leader's lease after the applied index reached the lease read index,
  // EVENTUAL at once from this replica's applied state.
  void ReadState(pb::Consistency consistency, StateReader read);
  void Read(std::string key, pb::Consistency consistency, ReadCallback done);
  void Scan(pb::KvScanRequest request, ScanCallback done);
  void GetStatus(StatusCallback done);
  // Applies `step` for `replica` to the latest membership and proposes the
  // result; `done` gets the new membership once its entry is chosen and
  // applied here. When the step is already in effect (the learner exists,
  // is a voter, is gone) `done` gets the membership at once with
  // changed = false, so a retried step is harmless. Errors: NotLeader (with
  // hint), Conflict while another change is uncommitted or before the
  // leader committed in its ballot, InvalidArgument for a step that does not
  // apply (promote a replica that is not a learner, remove the last voter),
  // Timeout when the outcome is unknown.
  struct MembershipResult {
    pb::Membership membership;
    bool changed = false;
  };
  using MembershipCallback = std::function<void(Result<MembershipResult>)>;
  void ChangeMembership(MembershipStep step, consensus::ReplicaId replica,
                        MembershipCallback done);
  // Hands leadership to voter `to` (consensus::Replica::TransferLeadership);
  // `done` gets true once the transfer started, false when `to` already
  // leads as far as this replica knows (a repeated request). Errors:
  // NotLeader (with hint) when this replica does not lead, and the core's
  // InvalidArgument / Conflict.
  void TransferLeadership(consensus::ReplicaId to, std::function<void(Result<bool>)> done);
  // Starts an election at once, skipping pre-vote (consensus::Replica::
  // Campaign): a replica that lost patience, as the simulator's campaigns
  // play it. Tests and the simulator only; an operator moves leadership
  // with TransferLeadership. Nothing when stopped, installing, leading, or
  // not a voter.
  void CampaignNow();
  // A digest of this replica's applied state: applied_index, pair_count,
  // total_bytes and checksum of a SnapshotManifest (the rest unset). Equal
  // digests mean equal states. The consistent snapshot is taken on the
  // strand; the scan of the whole state runs as a job of `scanner`, never
  // on the strand (Throttled when its queue is full). `done` runs on the
  // strand (errors before the scan) or on the scanner's thread.
  using DigestCallback = std::function<void(Result<pb::SnapshotManifest>)>;
  void StateDigest(JobThread& scanner, DigestCallback done);
  // Stops the group for good before its data is removed: on the strand,
  // unless a snapshot install is running (false: nothing changed, try
  // later). Once true, the group submits no further store write; the log
  // writes it submitted before are ahead in the store's FIFO writer. Blocks
  // until decided: never call it on an io thread.
  bool StopForRemoval();
  // Whether the group stopped because its store refused or failed a write
  // (a log write or an apply): ReplicationHost::RestartFailedGroups starts
  // it afresh from the store once the store writes again.
  bool StoppedOnDiskError() const { return stopped_on_disk_error_.load(); }
  // Stops ticking; pending callbacks fail with Aborted. Idempotent.
  // Releases the snapshots pinned by outbound transfers before returning,
  // so the NodeStore may be closed after Stop even if the io_context never
  // runs again.
  void Stop();

  uint64_t group_id() const { return options_.consensus.group_id; }

 private:
  // A committed entry is this host's pending proposal only when both the
  // proposer and the request id match: request ids are unique per proposer,
  // not across a group's replicas (a deposed leader's pending slot may hold
  // another replica's entry with an equal id).
  bool IsOwnProposal(consensus::ReplicaId proposer, uint64_t entry_request_id,
                     uint64_t pending_request_id) const {
    return proposer == options_.consensus.self && entry_request_id == pending_request_id;
  }

  struct PendingWrite {
    uint64_t request_id;
    WriteCallback done;
    uint64_t deadline_us;
  };
  struct PendingRead {
    consensus::Slot read_index;
    std::function<void(Status)> serve;  // OK: serve now; else fail
    uint64_t deadline_us;
  };

  GroupHost(std::unique_ptr<GroupExecutor> executor, storage::NodeStore* store,
            MessageSender* sender, GroupHostOptions options);
  uint64_t NowUs() const;
  void ScheduleTick();
  void OnTick();
  // Drains every Ready the replica has, doing what ready.h says.
  void Pump();
  // Pumps once, after the handlers already queued on the strand, however
  // many ask: writes, messages and persist completions that arrive together
  // leave as one Ready (one Accept per peer carrying all their entries, one
  // log write, one apply batch) instead of one each. Writes, delivered
  // messages and persist completions use it; ticks pump at once.
  void SchedulePump();
  void Persist(consensus::Ready& ready);
  // A log write's outcome, reported to the replica on the strand.
  struct PersistDone {
    std::shared_ptr<std::vector<pb::Message>> messages_after;
    uint64_t seq;
    Status status;
    consensus::Slot last_entry_slot = 0;  // of the write's entries; 0: none
  };
  void OnPersistDone(const PersistDone& done);
  // The ack-before-quorum bug (GroupHostTestingOptions): answers every
  // pending write at or below `slot` as if it were applied.
  void AckBeforeQuorum(consensus::Slot slot);
  void ApplyCommitted(const std::vector<pb::Entry>& entries);
  void StopOnApplyError(const Status& status);
  void AnswerSnapshotRequests(const std::vector<consensus::ReplicaId>& to);
  void OnSnapshotAck(const pb::Message& message);
  void StageChunk(pb::Message chunk);
  void StartInstall(pb::InstallSnapshot snapshot);
  Status InstallLogBase(const pb::InstallSnapshot& snapshot) const;
  void FinishInstall(const pb::InstallSnapshot& snapshot, const Status& installed);
  void ReportInstall(const pb::InstallSnapshot& snapshot, const Status& installed);
  // A log replica's part of a split entry: narrow the range (on_range_narrowed).
  Status NarrowOnLogSplits(const std::vector<pb::Entry>& entries);
  void MaybeCompact();
  void ServeReadyReads();
  void ExpireDeadlines();
  // Runs `serve` once a strong read may proceed, or fails it.
  void WhenReadable(std::function<void(Status)> serve, uint64_t timeout_ms);
  void FailAll(const Status& status);

  // Declared first: destroyed last, after every member a task may touch.
  const std::unique_ptr<GroupExecutor> executor_;
  storage::NodeStore* store_;
  MessageSender* sender_;
  const GroupHostOptions options_;
  std::unique_ptr<consensus::Replica> replica_;
  PartitionStateMachine state_;
  SnapshotSender snapshot_sender_;
  SnapshotReceiver snapshot_receiver_;
  bool stopped_ = false;
  std::atomic<bool> stopped_on_disk_error_{false};  // see StoppedOnDiskError
  bool pump_scheduled_ = false;  // a SchedulePump handler is queued
  bool compaction_in_flight_ = false;  // a queued store compaction is not durable yet
  bool installing_ = false;  // a snapshot install runs on the snapshot thread
  // Log writes that became durable while installing_, reported after it.
  std::vector<PersistDone> persisted_during_install_;
  uint64_t next_request_id_ = 1;
  std::map<consensus::Slot, PendingWrite> writes_by_slot_;
  // The proposed membership change awaiting its entry's apply (one at a time).
  struct PendingMembership {
    consensus::Slot slot = 0;
    uint64_t request_id = 0;
    MembershipCallback done;
    uint64_t deadline_us = 0;
  };
  std::optional<PendingMembership> membership_change_;
  std::deque<PendingRead> reads_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace tessera::node
