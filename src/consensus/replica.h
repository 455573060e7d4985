// Replica: one member of a Multi-Paxos replication group, as a deterministic
// state machine. It owns no sockets, threads, clocks, randomness or disk: the
// host feeds it inputs (Tick, Step, Propose, OnPersisted, ...) with the
// current monotonic time and drains Ready batches of outputs (ready.h).
//
// Protocol (docs/consensus.md has the full argument):
//  * Ballot = (round, replica id). A candidate runs phase 1 once for every
//    slot above its chosen prefix, takes for each slot the value accepted
//    under the highest ballot among a quorum of promises, fills gaps with
//    no-ops, and re-proposes all of them under its own ballot.
//  * The stable leader runs phase 2 per slot, pipelined and batched, with the
//    commit index piggybacked on every Accept (heartbeats are empty Accepts).
//  * A slot is chosen once a quorum has made it durable under the leader's
//    ballot; only chosen slots are handed out as `committed`.
//  * Leases: acceptors refuse promises for lease_duration after hearing a
//    leader; the leader serves reads while a quorum acknowledged it within
//    its (shorter, drift-adjusted) lease and it has committed in its ballot.
//  * Pre-vote and check-quorum guard against one replica's bad link deposing
//    a healthy leader, and against an isolated leader lingering.
//  * Membership changes one replica at a time through log entries (effective
//    when appended); while one is uncommitted, quorums are needed in both the
//    old and the new membership. Learners never count toward a quorum.
//
// Invariants (checked with TESSERA_CHECK):
//  1. The log is contiguous from log_start to last_slot.
//  2. chosen_index <= last_slot, and applied (handed out) <= chosen_index.
//  3. A leader proposes at most one value per slot under its ballot.
//  4. promised never decreases.
//
// Thread safety: none; the host serialises all calls (one executor per group).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "consensus/options.h"
#include "consensus/ready.h"
#include "tessera/consensus.pb.h"

namespace tessera::consensus {

enum class Role { kFollower, kPreCandidate, kCandidate, kLeader };
const char* RoleName(Role role);

// Durable state the host recovered from storage (or the bootstrap state of a
// new group: default hard state, log_start 1, no entries, applied_index 0).
struct RecoveredState {
  pb::HardState hard_state;
  pb::LogBase log_base;            // log_start defaults to 1 when 0
  std::vector<pb::Entry> entries;  // contiguous from log_base.log_start
  Slot applied_index = 0;          // >= log_start - 1; the host's state covers it
};

class Replica {
 public:
  // `now` starts the restart guard: a recovered replica refuses promises for
  // one lease, as it may have acknowledged a leader just before it stopped.
  Replica(const Options& options, RecoveredState recovered, TimeUs now);
  ~Replica();
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  // --- inputs ---------------------------------------------------------------
  void Tick(TimeUs now);
  void Step(TimeUs now, const pb::Message& message);
  // Appends a command at the next slot. NotLeader (with hint) when not the
  // leader, Throttled when kUncommittedSlotsMax slots are not yet chosen,
  // InvalidArgument when the command exceeds kCommandBytesMax. The returned
  // slot commits with this command only if the committed entry there carries
  // the same request_id.
  Result<Slot> Propose(TimeUs now, std::string command, uint64_t request_id);
  // Proposes the next membership: it must differ from the current one by one
  // replica (add learner, promote learner, remove). Conflict while another
  // change is uncommitted or before the leader committed in its ballot.
  Result<Slot> ProposeMembership(TimeUs now, const pb::Membership& next,
                                 uint64_t request_id);
  // Everything the Ready with this persist_seq asked to persist is durable.
  void OnPersisted(uint64_t persist_seq);
  // The host built a snapshot of its applied state, covering every slot
  // <= applied_slot, for replica `to` (in answer to snapshot_requests).
  void SendSnapshot(TimeUs now, ReplicaId to, Slot applied_slot, std::string data);
  // The host replaced its applied state with snapshot_to_install (and
  // persisted LogBase{meta.last_slot + 1, meta.membership}).
  void OnSnapshotInstalled(TimeUs now, const pb::SnapshotMeta& meta);
  // The host could not install snapshot_to_install (its data did not match
  // what the host holds, e.g. a streamed transfer that another replaced):
  // nothing changed, and the next InstallSnapshot is handed out again.
  void OnSnapshotRefused(TimeUs now, const pb::SnapshotMeta& meta);
  // Forgets log slots <= upto (upto <= applied). The host deletes them from
  // storage and persists LogBase{upto + 1, MembershipAt(upto)}.
  void CompactLog(Slot upto);
  // Starts an election now, skipping pre-vote (tests).
  void Campaign(TimeUs now);
  // Hands leadership to voter `to` (docs/consensus.md, "Leadership
  // transfer"): gives up the lease at once (reads and proposals answer
  // Throttled meanwhile), waits until `to` holds the whole log, then asks
  // it to campaign. If `to` has not taken over within
  // election_timeout_min, runs an election of its own at once.
  // NotLeader when not the leader; InvalidArgument when `to` is not another
  // voter; Conflict while a membership change or the opening no-op is not
  // chosen. Asking again for the same target is Ok; for another, Conflict.
  Status TransferLeadership(TimeUs now, ReplicaId to);

  // --- outputs --------------------------------------------------------------
  bool HasReady() const;
  Ready TakeReady();

  // --- reads ----------------------------------------------------------------
  // True while this replica is the leader and holds its lease at `now`.
  bool HoldsLease(TimeUs now) const;
  // The slot the host must have applied before serving a strongly consistent
  // local read; NotLeader / Unavailable when no valid lease.
  Result<Slot> LeaseReadIndex(TimeUs now) const;

  // --- introspection --------------------------------------------------------
  ReplicaId id() const;
  Role role() const;
  ReplicaId leader_hint() const;  // 0 when unknown
  ReplicaId transfer_target() const;  // leader: the transfer's target, else 0
  const pb::Ballot& promised() const;
  Slot chosen_index() const;
  Slot applied_index() const;
  Slot last_slot() const;
  Slot log_start() const;
  const pb::Membership& membership() const;  // latest in the log
  pb::Membership MembershipAt(Slot slot) const;
  const pb::Entry* EntryAt(Slot slot) const;  // nullptr outside the log

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::consensus
