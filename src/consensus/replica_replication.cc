// Paxos phase 2 on the stable leader: pipelined, batched Accepts; durable
// acknowledgements; the chosen prefix; catch-up and snapshot transfer.
// See docs/consensus.md, "Replication".
#include <algorithm>

#include "common/check.h"
#include "common/limits.h"
#include "consensus/replica_impl.h"

namespace tessera::consensus {
namespace {

// A well-formed Accept carries contiguous entries under the sender's ballot.
bool WellFormed(const pb::Message& m) {
  const pb::Accept& a = m.accept();
  if (a.first_slot() == 0) return false;
  for (int i = 0; i < a.entries_size(); ++i) {
    const pb::Entry& e = a.entries(i);
    if (e.slot() != a.first_slot() + static_cast<Slot>(i) || !BallotEq(e.ballot(), m.ballot())) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<Slot> Replica::Impl::Append(pb::Entry entry) {
  if (role != Role::kLeader) return Status::NotLeader(leader);
  if (transfer) return Status::Throttled("leadership transfer in progress");
  if (log.last_slot() - chosen >= limits::kUncommittedSlotsMax) {
    return Status::Throttled("too many uncommitted slots");
  }
  entry.set_slot(log.last_slot() + 1);
  *entry.mutable_ballot() = promised;
  entry.set_proposer(opt.self);
  WriteEntry(entry);
  matched = entry.slot();
  if (entry.type() == pb::ENTRY_MEMBERSHIP) SyncPeers();
  return entry.slot();
}

// Follows the leader of ballot m.ballot() if it is at least our promise.
void Replica::Impl::OnAccept(const pb::Message& m) {
  const pb::Ballot& b = m.ballot();
  if (BallotLess(b, promised) || !WellFormed(m)) {
    pb::Message reply = NewMessage(m.from());
    *reply.mutable_ballot() = b;
    reply.mutable_accepted()->set_ok(false);
    *reply.mutable_accepted()->mutable_promised() = promised;
    Send(std::move(reply), false);
    return;
  }
  SetPromised(b);
  if (role != Role::kFollower || leader != m.from()) BecomeFollower(m.from());
  if (!BallotEq(matched_ballot, b)) {
    matched_ballot = b;
    matched = chosen;
  }
  last_leader_contact_us = now;
  ResetElectionTimer();

  const pb::Accept& a = m.accept();
  pb::Message reply = NewMessage(m.from());
  *reply.mutable_ballot() = b;
  pb::Accepted* acc = reply.mutable_accepted();
  *acc->mutable_promised() = promised;
  acc->set_seq(a.seq());
  if (a.first_slot() > matched + 1) {
    // A gap: we cannot vouch for the slots in between. Tell the leader where
    // to resume; this is not a durable acknowledgement of anything.
    acc->set_ok(false);
    acc->set_matched_slot(matched);
    acc->set_log_start(log.log_start());
    Send(std::move(reply), false);
    return;
  }
  for (const pb::Entry& e : a.entries()) {
    if (e.slot() <= chosen || e.slot() < log.log_start()) continue;
    const pb::Entry* held = log.At(e.slot());
    if (held == nullptr || !BallotEq(held->ballot(), b)) WriteEntry(e);
  }
  if (a.entries_size() > 0) matched = std::max(matched, a.entries(a.entries_size() - 1).slot());
  // Entries past the leader's log accepted under older ballots were not
  // chosen (the leader's phase 1 would have recovered them): drop them so a
  // stale membership entry cannot linger.
  const Slot leader_last = a.leader_last_slot();
  if (leader_last >= matched && leader_last < log.last_slot()) {
    bool all_stale = true;
    for (Slot s = leader_last + 1; s <= log.last_slot(); ++s) {
      all_stale = all_stale && BallotLess(log.At(s)->ballot(), b);
    }
    if (all_stale) {
      log.TruncateFrom(leader_last + 1);
      ready.truncate_from = std::min(ready.truncate_from.value_or(UINT64_MAX), leader_last + 1);
      // The host deletes before it writes: a pending write of a dropped slot
      // would resurrect it on disk (and leave a hole if slots were dropped
      // below it).
      std::erase_if(ready.entries, [&](const pb::Entry& e) { return e.slot() > leader_last; });
    }
  }
  SetChosen(std::min(a.commit_index(), matched));
  acc->set_ok(true);
  acc->set_matched_slot(matched);
  acc->set_log_start(log.log_start());
  Send(std::move(reply), true);  // acknowledges durability: after persist
}

void Replica::Impl::OnAccepted(const pb::Message& m) {
  const pb::Accepted& a = m.accepted();
  ObserveRound(a.promised());
  if (BallotLess(promised, a.promised())) {
    if (role == Role::kLeader || role == Role::kCandidate) BecomeFollower(0);
    return;
  }
  if (role != Role::kLeader || !BallotEq(m.ballot(), promised)) return;
  auto it = peers.find(m.from());
  if (it == peers.end()) return;
  PeerProgress& peer = it->second;
  peer.last_heard_us = now;
  peer.acked_seq = std::max(peer.acked_seq, a.seq());
  if (a.ok()) {
    peer.Acknowledged(a.matched_slot());
    peer.snapshot_requested = false;
    AdvanceCommit();
    // Committing our removal steps us down; committing the peer's removal
    // drops its progress: either way `peer` is gone.
    if (role != Role::kLeader || peers.count(m.from()) == 0) return;
    MaybeSendTimeoutNow();
  } else {
    // A gap report: resume right after what it holds of our ballot, even
    // below `match` — a restarted peer knows only its chosen prefix as ours,
    // and a heartbeat from match + 1 would otherwise gap again forever.
    peer.RewindTo(a.matched_slot() + 1);
  }
  lease_expiry_us = std::max(lease_expiry_us, LeaseExpiryUs());
  SendAppend(m.from(), peer);
}

void Replica::Impl::OnInstallSnapshot(const pb::Message& m) {
  const pb::Ballot& b = m.ballot();
  if (BallotLess(b, promised)) {
    pb::Message reply = NewMessage(m.from());
    *reply.mutable_ballot() = b;
    reply.mutable_accepted()->set_ok(false);
    *reply.mutable_accepted()->mutable_promised() = promised;
    Send(std::move(reply), false);
    return;
  }
  SetPromised(b);
  if (role != Role::kFollower || leader != m.from()) BecomeFollower(m.from());
  last_leader_contact_us = now;
  ResetElectionTimer();
  const pb::InstallSnapshot& snap = m.install_snapshot();
  if (snap.meta().last_slot() <= chosen || installing) return;  // have it, or busy
  installing = snap;
  ready.snapshot_to_install = snap;
}

// The leader keeps one PeerProgress for every replica of every active
// membership (learners included), adding newcomers and dropping the removed.
void Replica::Impl::SyncPeers() {
  const std::vector<ReplicaId> members = AllMembers(ActiveMemberships());
  for (auto it = peers.begin(); it != peers.end();) {
    it = std::find(members.begin(), members.end(), it->first) == members.end() ? peers.erase(it)
                                                                              : std::next(it);
  }
  for (ReplicaId id : members) {
    if (id == opt.self || peers.count(id)) continue;
    PeerProgress p;
    p.next = log.log_start();  // a newcomer needs everything (or a snapshot)
    p.last_heard_us = now;
    peers.emplace(id, p);
  }
}

void Replica::Impl::SendAppends() {
  for (auto& [id, peer] : peers) SendAppend(id, peer);
}

// Sends what `to` lacks, up to its in-flight window (PeerProgress), in
// batched Accepts.
void Replica::Impl::SendAppend(ReplicaId to, PeerProgress& peer) {
  if (peer.next < log.log_start()) {
    const bool retry = now >= peer.snapshot_requested_us + opt.election_timeout_min_us;
    if (!peer.snapshot_requested || retry) {
      peer.snapshot_requested = true;
      peer.snapshot_requested_us = now;
      if (PeerIsLogOnly(to)) {
        SendLogBase(to, peer);
      } else {
        ready.snapshot_requests.push_back(to);
      }
    }
    return;
  }
  while (peer.next <= log.last_slot() && peer.WindowOpen()) {
    pb::Message m = NewMessage(to);
    *m.mutable_ballot() = promised;
    pb::Accept* a = m.mutable_accept();
    a->set_first_slot(peer.next);
    size_t bytes = 0;
    for (Slot s = peer.next; s <= log.last_slot(); ++s) {
      const pb::Entry* e = log.At(s);
      if (a->entries_size() > 0 && (static_cast<size_t>(a->entries_size()) >=
                                        limits::kEntriesPerAcceptMax ||
                                    bytes + e->command().size() > limits::kAcceptBytesMax)) {
        break;
      }
      bytes += e->command().size();
      // Slots of our chosen prefix may carry the ballot they were chosen
      // under; a chosen value is safe to propose under any later ballot, and
      // a well-formed Accept carries one ballot throughout.
      pb::Entry* sent = a->add_entries();
      *sent = *e;
      *sent->mutable_ballot() = promised;
    }
    a->set_commit_index(chosen);
    a->set_leader_last_slot(log.last_slot());
    a->set_seq(heartbeat_seq);
    peer.RecordSent(peer.next + a->entries_size() - 1, bytes);
    Send(std::move(m), false);
  }
}

// A log replica needs no state, only the log from where ours starts: an
// InstallSnapshot without data at log_start - 1 (every slot below is
// chosen) makes its log start there too. It keeps what it accepts from
// then on; a candidate whose chosen prefix ends below that gets a partial
// promise from it, which does not count (OnPrepare), so a log replica
// never stands in for slots it does not hold.
void Replica::Impl::SendLogBase(ReplicaId to, PeerProgress& peer) {
  const Slot base = log.log_start() - 1;
  pb::Message m = NewMessage(to);
  *m.mutable_ballot() = promised;
  auto* snap = m.mutable_install_snapshot();
  snap->mutable_meta()->set_last_slot(base);
  *snap->mutable_meta()->mutable_membership() = log.MembershipAt(base);
  snap->set_commit_index(chosen);
  snap->set_seq(heartbeat_seq);
  Send(std::move(m), false);
  peer.SkipThrough(base);
}

// Heartbeats are empty Accepts from each peer's acknowledged point, so they
// never open a gap. A peer that acknowledged nothing since the previous
// heartbeat gets its unacknowledged window resent (lost messages).
void Replica::Impl::BroadcastHeartbeat() {
  RecordHeartbeatSend();
  for (auto& [id, peer] : peers) {
    if (peer.match == peer.match_at_last_heartbeat && peer.next > peer.match + 1) {
      peer.RewindTo(peer.match + 1);
    }
    peer.match_at_last_heartbeat = peer.match;
    pb::Message m = NewMessage(id);
    *m.mutable_ballot() = promised;
    pb::Accept* a = m.mutable_accept();
    a->set_first_slot(std::max<Slot>(peer.match + 1, 1));
    a->set_commit_index(chosen);
    a->set_leader_last_slot(log.last_slot());
    a->set_seq(heartbeat_seq);
    Send(std::move(m), false);
    SendAppend(id, peer);
  }
  next_heartbeat_us = now + opt.heartbeat_interval_us;
}

// Slots chosen under our ballot: a quorum (in every active membership) has
// them durable. Every slot above the chosen prefix carries our ballot, so a
// quorum match is a quorum acceptance of our value.
void Replica::Impl::AdvanceCommit() {
  if (role != Role::kLeader) return;
  const Slot quorum_match = QuorumValue(ActiveMemberships(), [&](ReplicaId id) -> uint64_t {
    if (id == opt.self) return self_durable;
    auto it = peers.find(id);
    return it == peers.end() ? 0 : it->second.match;
  });
  if (quorum_match > chosen) {
    const bool had_pending_membership = !log.MembershipSlotsAfter(chosen).empty();
    SetChosen(std::min(quorum_match, log.last_slot()));
    if (had_pending_membership && role == Role::kLeader) SyncPeers();
  }
}

}  // namespace tessera::consensus
