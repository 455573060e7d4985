// Private state of consensus::Replica, shared by its implementation files:
// replica.cc (lifecycle, API, Ready), replica_election.cc (pre-vote, phase 1),
// replica_replication.cc (phase 2, commit, catch-up, snapshots), and
// replica_lease.cc (leases and check-quorum), replica_transfer.cc
// (leadership transfer).
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "consensus/ballot.h"
#include "common/splitmix64.h"
#include "consensus/log_window.h"
#include "consensus/peer_progress.h"
#include "consensus/quorum.h"
#include "consensus/replica.h"

namespace tessera::consensus {

// splitmix64: the core's only source of variation, seeded by the host.
class SeededRng {
 public:
  explicit SeededRng(uint64_t seed) : state_(seed) {}
  uint64_t Next() { return SplitMix64Next(state_); }
  uint64_t Uniform(uint64_t lo, uint64_t hi) { return lo + Next() % (hi - lo); }  // [lo, hi)

 private:
  uint64_t state_;
};

// One phase-1 attempt.
struct Election {
  pb::Ballot ballot;
  Slot from_slot = 1;
  bool self_promised = false;      // our own promise is durable
  uint64_t self_promise_seq = 0;   // ... once this persist_seq is durable
  std::map<ReplicaId, pb::Promise> promises;  // granted, non-partial, from others
  TimeUs started_us = 0;
};

// A leadership transfer the leader started (replica_transfer.cc).
struct Transfer {
  ReplicaId to = 0;
  TimeUs deadline_us = 0;     // abandoned (and a fresh election run) after it
  bool timeout_now_sent = false;
};

struct PreVoteRound {
  uint64_t round = 0;
  std::set<ReplicaId> granted;
  TimeUs started_us = 0;
};

// What one persist_seq makes durable for the leader's own acceptance.
struct PendingPersist {
  uint64_t seq = 0;
  pb::Ballot ballot;
  Slot last_own_slot = 0;  // highest slot written under `ballot`, 0 if none
  Slot min_slot = UINT64_MAX;  // lowest slot written, UINT64_MAX if none
};

struct Replica::Impl {
  Impl(const Options& options, RecoveredState recovered, TimeUs now);

  // --- replica.cc -----------------------------------------------------------
  void SetPromised(const pb::Ballot& ballot);
  void SetChosen(Slot chosen);
  void ObserveRound(const pb::Ballot& ballot);
  void BecomeFollower(ReplicaId leader);
  void ResetElectionTimer();
  void WriteEntry(const pb::Entry& entry);
  void Send(pb::Message message, bool after_persist);
  pb::Message NewMessage(ReplicaId to) const;
  // Memberships whose quorums a decision at or after `chosen_` needs.
  std::vector<const pb::Membership*> ActiveMemberships() const;
  bool IsVoterNow() const;
  // A voter that holds the state (not a log replica): only it campaigns,
  // takes a transfer or leads.
  bool MayLead() const;
  // `id` is a log replica: marked so in any active membership (a mark
  // never changes while its member stays, so the one still naming a
  // replica being removed is authoritative).
  bool PeerIsLogOnly(ReplicaId id) const;
  Ready TakeReady();
  bool HasReady() const;
  // Highest chosen slot that is also durable here: committed entries are
  // handed out only up to it, so the host may apply them at once.
  Slot DurableChosen() const;
  void OnPersisted(uint64_t seq);

  // --- replica_election.cc ----------------------------------------------------
  void StartPreVote();
  // `released`: the ballot whose leader gave up its lease (leadership
  // transfer); when it is our promise, the lease window does not hold us.
  void StartElection(const pb::Ballot* released = nullptr);
  void OnPreVote(const pb::Message& m);
  void OnPreVoteReply(const pb::Message& m);
  void OnPrepare(const pb::Message& m);
  void OnPromise(const pb::Message& m);
  void LearnChosen(const pb::Promise& p);
  void MaybeWinElection();
  void BecomeLeader();
  bool WithinLeaseWindow() const;

  // --- replica_replication.cc -----------------------------------------------
  void OnAccept(const pb::Message& m);
  void OnAccepted(const pb::Message& m);
  void OnInstallSnapshot(const pb::Message& m);
  void SendAppends();
  void SendAppend(ReplicaId to, PeerProgress& peer);
  void SendLogBase(ReplicaId to, PeerProgress& peer);
  void BroadcastHeartbeat();
  void AdvanceCommit();
  void SyncPeers();
  Result<Slot> Append(pb::Entry entry);

  // --- replica_lease.cc -------------------------------------------------------
  void RecordHeartbeatSend();
  TimeUs LeaseExpiryUs() const;
  bool HoldsLease(TimeUs now) const;
  void CheckQuorum();

  // --- replica_transfer.cc ----------------------------------------------------
  Status StartTransfer(ReplicaId to);
  void MaybeSendTimeoutNow();
  void OnTimeoutNow(const pb::Message& m);
  void CheckTransfer();

  // --- state ------------------------------------------------------------------
  Options opt;
  SeededRng rng;
  TimeUs now = 0;
  Role role = Role::kFollower;
  ReplicaId leader = 0;

  // Durable acceptor state (mirrored in every Ready's hard_state when dirty).
  pb::Ballot promised;
  Slot chosen = 0;
  LogWindow log;
  // `promised` changed: the next Ready must persist the hard state before
  // any message that relies on it. `chosen` alone changing is only a lower
  // bound worth keeping: it rides along with the next write.
  bool promised_dirty = false;
  bool chosen_dirty = false;

  Slot applied = 0;  // committed entries handed to the host
  uint64_t max_round_seen = 0;

  // Acceptor side of the current leader's ballot: every slot in
  // (chosen, matched] holds that leader's value.
  pb::Ballot matched_ballot;
  Slot matched = 0;

  // Timers.
  TimeUs last_leader_contact_us = 0;  // lease refusal window starts here
  TimeUs election_deadline_us = 0;

  // Candidate / pre-candidate.
  std::optional<Election> election;
  std::optional<PreVoteRound> pre_vote;

  // Leader.
  std::map<ReplicaId, PeerProgress> peers;
  Slot barrier_slot = 0;  // our ballot's opening no-op; lease reads need it chosen
  Slot self_durable = 0;
  uint64_t heartbeat_seq = 0;
  std::deque<std::pair<uint64_t, TimeUs>> heartbeat_send_us;  // bounded history
  TimeUs next_heartbeat_us = 0;
  TimeUs lease_expiry_us = 0;
  // This ballot's lease was given up for a transfer: never held again under
  // it (acceptors may then promise a successor at once; replica_transfer.cc).
  bool lease_released = false;
  std::optional<Transfer> transfer;

  // Output accumulation.
  Ready ready;
  uint64_t next_persist_seq = 1;
  std::deque<PendingPersist> pending_persists;
  Slot ready_last_own_slot = 0;
  std::optional<pb::InstallSnapshot> installing;  // handed out, not yet installed
};

}  // namespace tessera::consensus
