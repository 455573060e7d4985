// Pre-vote and Paxos phase 1: promises, recovery of accepted values, and the
// transition to leader. See docs/consensus.md, "Elections".
#include <algorithm>

#include "common/check.h"
#include "common/limits.h"
#include "consensus/replica_impl.h"

namespace tessera::consensus {

// An acceptor that heard a leader within the lease (or restarted within one)
// refuses to support another ballot: that leader may still serve lease reads.
bool Replica::Impl::WithinLeaseWindow() const {
  return now < last_leader_contact_us + opt.lease_duration_us;
}

void Replica::Impl::StartPreVote() {
  role = Role::kPreCandidate;
  leader = 0;
  pre_vote = PreVoteRound{max_round_seen + 1, {}, now};
  if (!WithinLeaseWindow()) pre_vote->granted.insert(opt.self);
  for (ReplicaId id : AllMembers(ActiveMemberships())) {
    if (id == opt.self) continue;
    pb::Message m = NewMessage(id);
    m.mutable_ballot()->set_round(pre_vote->round);
    m.mutable_ballot()->set_replica(opt.self);
    m.mutable_pre_vote()->set_next_round(pre_vote->round);
    m.mutable_pre_vote()->set_chosen_index(chosen);
    Send(std::move(m), false);
  }
  ResetElectionTimer();
  OnPreVoteReply(pb::Message());  // a one-voter group wins at once
}

void Replica::Impl::OnPreVote(const pb::Message& m) {
  // Granted only when we too have not heard a leader for an election
  // timeout: a replica with one bad link cannot depose a healthy leader.
  const bool leader_silent =
      role != Role::kLeader && now >= last_leader_contact_us + opt.election_timeout_min_us;
  pb::Message reply = NewMessage(m.from());
  *reply.mutable_ballot() = m.ballot();
  reply.mutable_pre_vote_reply()->set_granted(leader_silent && !WithinLeaseWindow());
  Send(std::move(reply), false);
}

void Replica::Impl::OnPreVoteReply(const pb::Message& m) {
  if (role != Role::kPreCandidate || !pre_vote) return;
  if (m.has_pre_vote_reply()) {
    if (m.ballot().round() != pre_vote->round || !m.pre_vote_reply().granted()) return;
    pre_vote->granted.insert(m.from());
  }
  // A majority of the latest membership suffices here: pre-vote guards
  // against disrupting a healthy leader, not safety, and the election
  // proper learns from the promises whether a pending change was chosen
  // (LearnChosen), which a pre-vote cannot.
  const auto& granted = pre_vote->granted;
  if (HasQuorum({&log.LatestMembership()}, [&](ReplicaId id) { return granted.count(id) > 0; })) {
    StartElection();
  }
}

void Replica::Impl::StartElection(const pb::Ballot* released) {
  const bool lease_waived = released != nullptr && BallotEq(*released, promised);
  if (!lease_waived && WithinLeaseWindow()) return;  // our promise would break a lease
  role = Role::kCandidate;
  leader = 0;
  pre_vote.reset();
  const pb::Ballot ballot = MakeBallot(max_round_seen + 1, opt.self);
  SetPromised(ballot);
  election = Election{};
  election->ballot = ballot;
  election->from_slot = chosen + 1;
  election->started_us = now;
  // Prepares go out once our own promise is durable (after persist); our own
  // promise counts from OnPersisted of that Ready.
  for (ReplicaId id : AllMembers(ActiveMemberships())) {
    if (id == opt.self) continue;
    pb::Message m = NewMessage(id);
    *m.mutable_ballot() = ballot;
    m.mutable_prepare()->set_from_slot(election->from_slot);
    m.mutable_prepare()->set_chosen_index(chosen);
    if (lease_waived) *m.mutable_prepare()->mutable_released_ballot() = *released;
    Send(std::move(m), true);
  }
  ResetElectionTimer();
}

void Replica::Impl::OnPrepare(const pb::Message& m) {
  const pb::Ballot& b = m.ballot();
  pb::Message reply = NewMessage(m.from());
  *reply.mutable_ballot() = b;
  pb::Promise* p = reply.mutable_promise();
  const bool fresh = BallotLess(promised, b);
  const bool repeat = BallotEq(promised, b) && b.replica() == m.from();
  if (!fresh && !repeat) {
    p->set_granted(false);
    *p->mutable_promised() = promised;
    Send(std::move(reply), false);
    return;
  }
  // The lease we protect is the one of our promise's leader; it may have
  // released it (leadership transfer, replica_transfer.cc).
  const bool released = m.prepare().has_released_ballot() &&
                        BallotEq(m.prepare().released_ballot(), promised);
  if (fresh && WithinLeaseWindow() && !released) {
    p->set_granted(false);
    p->set_lease_active(true);
    *p->mutable_promised() = promised;
    Send(std::move(reply), false);
    return;
  }
  if (fresh) {
    SetPromised(b);
    if (role != Role::kFollower || leader != 0) BecomeFollower(0);
  }
  p->set_granted(true);
  *p->mutable_promised() = promised;
  p->set_chosen_index(chosen);
  p->set_log_start(log.log_start());
  const Slot from = m.prepare().from_slot();
  if (from < log.log_start()) {
    p->set_partial(true);  // compacted away: the candidate needs a snapshot
  } else {
    for (Slot s = from; s <= log.last_slot(); ++s) {
      if (static_cast<size_t>(p->entries_size()) >= limits::kEntriesPerPromiseMax) {
        p->set_partial(true);
        break;
      }
      *p->add_entries() = *log.At(s);
    }
  }
  Send(std::move(reply), true);  // the promise must be durable first
}

void Replica::Impl::OnPromise(const pb::Message& m) {
  const pb::Promise& p = m.promise();
  if (!p.granted()) {
    ObserveRound(p.promised());
    if (role == Role::kCandidate && election && BallotLess(election->ballot, p.promised()) &&
        !p.lease_active()) {
      BecomeFollower(0);
    }
    return;
  }
  if (role != Role::kCandidate || !election || !BallotEq(m.ballot(), election->ballot)) return;
  if (p.partial()) return;  // cannot vouch for every slot: does not count
  // An honest promise reports slots from from_slot on, at most
  // kEntriesPerPromiseMax of them; recovery fills every slot up to the
  // highest reported, so a corrupt one must not make it fill billions.
  for (const pb::Entry& e : p.entries()) {
    if (e.slot() < election->from_slot ||
        e.slot() - election->from_slot >= limits::kEntriesPerPromiseMax) {
      return;
    }
  }
  election->promises[m.from()] = p;
  LearnChosen(p);
  MaybeWinElection();
}

// An acceptor's log below its chosen index holds the chosen values, so a
// promise reporting a higher chosen index than ours hands us those values:
// we write them and advance our chosen prefix. That shrinks the
// memberships the election needs a quorum of: a removal chosen after we
// last heard the leader no longer requires the removed voter's quorum (a
// group that lost its leader right after removing a dead voter elects a
// new one among the survivors).
void Replica::Impl::LearnChosen(const pb::Promise& p) {
  const Slot target = p.chosen_index();
  if (target <= chosen || target < election->from_slot) return;
  // The entries run contiguously from from_slot (checked in OnPromise).
  if (p.entries_size() == 0 || target - election->from_slot >= static_cast<Slot>(p.entries_size())) {
    return;
  }
  for (Slot s = chosen + 1; s <= target; ++s) {
    const pb::Entry& e = p.entries(static_cast<int>(s - election->from_slot));
    if (e.slot() != s) return;  // not contiguous: learn nothing more
    WriteEntry(e);
    SetChosen(s);
  }
}

// The quorum must hold in every membership the candidate can see: its own
// active set plus any membership entry a promise reported. A membership this
// candidate has not seen cannot be in force without a quorum of the ones it
// has seen knowing it (docs/consensus.md, "Membership").
void Replica::Impl::MaybeWinElection() {
  if (!election || !election->self_promised) return;
  std::vector<const pb::Membership*> sets = ActiveMemberships();
  for (const auto& [id, p] : election->promises) {
    for (const pb::Entry& e : p.entries()) {
      if (e.type() == pb::ENTRY_MEMBERSHIP && e.slot() > chosen) sets.push_back(&e.membership());
    }
  }
  const auto& promises = election->promises;
  auto promised_to_us = [&](ReplicaId id) { return id == opt.self || promises.count(id) > 0; };
  if (HasQuorum(sets, promised_to_us)) BecomeLeader();
}

void Replica::Impl::BecomeLeader() {
  // Slots up to our chosen prefix need no recovery; it may have grown past
  // the Prepare's from_slot during the election (LearnChosen), and the
  // host may have applied and compacted what it learned.
  const Slot from = std::max(election->from_slot, chosen + 1);
  const pb::Ballot ballot = election->ballot;
  // For each slot >= from: the value accepted under the highest ballot among
  // the promises (ours included); a gap becomes a no-op.
  std::map<Slot, pb::Entry> best;
  auto consider = [&](const pb::Entry& e) {
    if (e.slot() < from) return;
    auto [it, inserted] = best.emplace(e.slot(), e);
    if (!inserted && BallotLess(it->second.ballot(), e.ballot())) it->second = e;
  };
  for (Slot s = from; s <= log.last_slot(); ++s) consider(*log.At(s));
  for (const auto& [id, p] : election->promises) {
    for (const pb::Entry& e : p.entries()) consider(e);
  }
  election.reset();
  lease_released = false;  // a new ballot: its lease is ours to win
  transfer.reset();
  const Slot last = best.empty() ? from - 1 : best.rbegin()->first;
  TESSERA_CHECK(log.last_slot() <= last);  // our own log is among the promises
  role = Role::kLeader;
  leader = opt.self;
  for (Slot s = from; s <= last + 1; ++s) {
    pb::Entry e;
    auto it = best.find(s);
    if (it != best.end()) {
      e = std::move(it->second);
    } else {
      e.set_type(pb::ENTRY_NOOP);  // a gap, or our opening no-op at last + 1
    }
    e.set_slot(s);
    *e.mutable_ballot() = ballot;
    WriteEntry(e);
  }
  barrier_slot = last + 1;
  self_durable = chosen;
  matched_ballot = ballot;
  matched = log.last_slot();
  peers.clear();
  SyncPeers();
  for (auto& [id, peer] : peers) {
    peer.RewindTo(from);
    peer.last_heard_us = now;
  }
  next_heartbeat_us = now;
  BroadcastHeartbeat();
}

}  // namespace tessera::consensus
