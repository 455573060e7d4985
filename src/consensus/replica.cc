// Replica lifecycle, the public API, and Ready assembly.
#include "consensus/replica.h"

#include <algorithm>

#include "common/check.h"
#include "common/limits.h"
#include "consensus/replica_impl.h"

namespace tessera::consensus {

const char* RoleName(Role role) {
  switch (role) {
    case Role::kFollower: return "follower";
    case Role::kPreCandidate: return "pre-candidate";
    case Role::kCandidate: return "candidate";
    case Role::kLeader: return "leader";
  }
  return "?";
}

Replica::Impl::Impl(const Options& options, RecoveredState recovered, TimeUs start_us)
    : opt(options),
      rng(options.random_seed ^ (uint64_t{options.self} * 0x9E3779B97F4A7C15ull)),
      now(start_us),
      promised(recovered.hard_state.promised()),
      chosen(recovered.hard_state.chosen_index()),
      log(recovered.log_base.log_start(), recovered.log_base.base_membership()) {
  TESSERA_CHECK(opt.Validate().empty());
  for (const pb::Entry& e : recovered.entries) log.Put(e);
  // A recovered chosen index can exceed the recovered log only when the
  // entries were compacted into the applied state.
  applied = std::max(recovered.applied_index, log.log_start() - 1);
  chosen = std::max(chosen, applied);
  TESSERA_CHECK(chosen <= log.last_slot());
  matched = chosen;
  max_round_seen = promised.round();
  // Restart guard: we may have acknowledged a leader just before stopping.
  last_leader_contact_us = now;
  ResetElectionTimer();
}

void Replica::Impl::SetPromised(const pb::Ballot& ballot) {
  TESSERA_CHECK(!BallotLess(ballot, promised));
  if (BallotEq(ballot, promised)) return;
  promised = ballot;
  ObserveRound(ballot);
  promised_dirty = true;
}

void Replica::Impl::SetChosen(Slot new_chosen) {
  if (new_chosen <= chosen) return;
  TESSERA_CHECK(new_chosen <= log.last_slot());
  chosen = new_chosen;
  chosen_dirty = true;
  // A leader removed from the voters hands over once the removal is chosen.
  if (role == Role::kLeader && !IsVoter(log.MembershipAt(chosen), opt.self) &&
      log.MembershipSlotsAfter(chosen).empty()) {
    BecomeFollower(0);
  }
}

void Replica::Impl::ObserveRound(const pb::Ballot& ballot) {
  max_round_seen = std::max(max_round_seen, ballot.round());
}

void Replica::Impl::BecomeFollower(ReplicaId new_leader) {
  role = Role::kFollower;
  leader = new_leader;
  election.reset();
  pre_vote.reset();
  peers.clear();
  lease_expiry_us = 0;
  transfer.reset();
  ResetElectionTimer();
}

void Replica::Impl::ResetElectionTimer() {
  election_deadline_us =
      now + rng.Uniform(opt.election_timeout_min_us, opt.election_timeout_max_us);
}

void Replica::Impl::WriteEntry(const pb::Entry& entry) {
  log.Put(entry);
  ready.entries.push_back(entry);
  if (BallotEq(entry.ballot(), promised)) {
    ready_last_own_slot = std::max(ready_last_own_slot, entry.slot());
  }
}

pb::Message Replica::Impl::NewMessage(ReplicaId to) const {
  pb::Message m;
  m.set_group_id(opt.group_id);
  m.set_from(opt.self);
  m.set_to(to);
  return m;
}

void Replica::Impl::Send(pb::Message message, bool after_persist) {
  (after_persist ? ready.messages_after_persist : ready.messages).push_back(std::move(message));
}

std::vector<const pb::Membership*> Replica::Impl::ActiveMemberships() const {
  std::vector<const pb::Membership*> set{&log.MembershipAt(chosen)};
  for (Slot s : log.MembershipSlotsAfter(chosen)) set.push_back(&log.At(s)->membership());
  return set;
}

bool Replica::Impl::IsVoterNow() const { return IsVoter(log.LatestMembership(), opt.self); }

bool Replica::Impl::PeerIsLogOnly(ReplicaId id) const {
  for (const pb::Membership* m : ActiveMemberships()) {
    if (IsLogOnly(*m, id)) return true;
  }
  return false;
}

bool Replica::Impl::MayLead() const {
  return IsVoterNow() && !IsLogOnly(log.LatestMembership(), opt.self);
}

bool Replica::Impl::HasReady() const {
  if (!ready.empty() || promised_dirty || applied < DurableChosen()) return true;
  if (role != Role::kLeader) return false;
  for (const auto& [id, peer] : peers) {
    if (peer.next <= log.last_slot() && peer.next >= log.log_start() && peer.WindowOpen()) {
      return true;
    }
  }
  return false;
}

Slot Replica::Impl::DurableChosen() const {
  Slot limit = chosen;
  for (const PendingPersist& p : pending_persists) {
    if (p.min_slot <= limit) limit = p.min_slot - 1;
  }
  return limit;
}

Ready Replica::Impl::TakeReady() {
  if (role == Role::kLeader) SendAppends();
  const bool writes = ready.truncate_from || !ready.entries.empty();
  if (promised_dirty || (chosen_dirty && writes)) {
    pb::HardState hs;
    *hs.mutable_promised() = promised;
    hs.set_chosen_index(chosen);
    ready.hard_state = std::move(hs);
    promised_dirty = chosen_dirty = false;
  }
  if (!ready.hard_state && !writes && pending_persists.empty()) {
    // Nothing of ours awaits durability: the barrier holds already, so the
    // replies (e.g. heartbeat acknowledgements) need no write of their own.
    for (pb::Message& m : ready.messages_after_persist) ready.messages.push_back(std::move(m));
    ready.messages_after_persist.clear();
  }
  const bool persists = ready.hard_state || writes || !ready.messages_after_persist.empty();
  if (persists) {
    ready.persist_seq = next_persist_seq++;
    PendingPersist p{ready.persist_seq, promised, ready_last_own_slot, UINT64_MAX};
    for (const pb::Entry& e : ready.entries) p.min_slot = std::min(p.min_slot, e.slot());
    pending_persists.push_back(p);
    if (election && election->self_promise_seq == 0 && role == Role::kCandidate) {
      election->self_promise_seq = ready.persist_seq;
    }
  }
  ready_last_own_slot = 0;
  // Chosen slots not written by any unpersisted Ready are durable here, so
  // the host may apply them as soon as it takes this Ready.
  const Slot apply_to = DurableChosen();
  for (Slot s = applied + 1; s <= apply_to; ++s) {
    const pb::Entry* e = log.At(s);
    TESSERA_CHECK(e != nullptr);
    ready.committed.push_back(*e);
  }
  applied = std::max(applied, apply_to);
  Ready out = std::move(ready);
  ready = Ready();
  return out;
}

void Replica::Impl::OnPersisted(uint64_t seq) {
  while (!pending_persists.empty() && pending_persists.front().seq <= seq) {
    const PendingPersist& p = pending_persists.front();
    if (role == Role::kLeader && BallotEq(p.ballot, promised)) {
      self_durable = std::max(self_durable, p.last_own_slot);
    }
    pending_persists.pop_front();
  }
  if (role == Role::kCandidate && election && election->self_promise_seq != 0 &&
      election->self_promise_seq <= seq) {
    election->self_promised = true;
    MaybeWinElection();
  } else if (role == Role::kLeader) {
    AdvanceCommit();
  }
}

// --- public API ----------------------------------------------------------------

Replica::Replica(const Options& options, RecoveredState recovered, TimeUs now)
    : impl_(std::make_unique<Impl>(options, std::move(recovered), now)) {}

Replica::~Replica() = default;

void Replica::Tick(TimeUs now) {
  Impl& s = *impl_;
  s.now = std::max(s.now, now);
  if (s.role == Role::kLeader) s.CheckTransfer();
  if (s.role == Role::kLeader) {
    if (s.now >= s.next_heartbeat_us) s.BroadcastHeartbeat();
    s.CheckQuorum();
    return;
  }
  if (s.role == Role::kCandidate && s.election &&
      s.now >= s.election->started_us + s.opt.election_timeout_min_us) {
    s.BecomeFollower(0);  // lost or stalled: retry from pre-vote later
    return;
  }
  if (s.role == Role::kPreCandidate && s.pre_vote &&
      s.now >= s.pre_vote->started_us + s.opt.election_timeout_min_us) {
    s.BecomeFollower(0);
    return;
  }
  if (s.role == Role::kFollower && s.now >= s.election_deadline_us && s.MayLead()) {
    s.StartPreVote();
  }
}

void Replica::Step(TimeUs now, const pb::Message& m) {
  Impl& s = *impl_;
  s.now = std::max(s.now, now);
  if (m.to() != s.opt.self || m.from() == s.opt.self || m.group_id() != s.opt.group_id) return;
  // A pre-vote names a round nobody has used yet: it changes no state.
  if (!m.has_pre_vote() && !m.has_pre_vote_reply()) s.ObserveRound(m.ballot());
  switch (m.body_case()) {
    case pb::Message::kPrepare: s.OnPrepare(m); break;
    case pb::Message::kPromise: s.OnPromise(m); break;
    case pb::Message::kAccept: s.OnAccept(m); break;
    case pb::Message::kAccepted: s.OnAccepted(m); break;
    case pb::Message::kPreVote: s.OnPreVote(m); break;
    case pb::Message::kPreVoteReply: s.OnPreVoteReply(m); break;
    case pb::Message::kInstallSnapshot: s.OnInstallSnapshot(m); break;
    case pb::Message::kTimeoutNow: s.OnTimeoutNow(m); break;
    case pb::Message::BODY_NOT_SET: break;
  }
}

Result<Slot> Replica::Propose(TimeUs now, std::string command, uint64_t request_id) {
  Impl& s = *impl_;
  s.now = std::max(s.now, now);
  if (command.size() > limits::kCommandBytesMax) {
    return Status::InvalidArgument("command exceeds kCommandBytesMax");
  }
  pb::Entry e;
  e.set_type(pb::ENTRY_COMMAND);
  e.set_command(std::move(command));
  e.set_request_id(request_id);
  return s.Append(std::move(e));
}

Result<Slot> Replica::ProposeMembership(TimeUs now, const pb::Membership& next,
                                        uint64_t request_id) {
  Impl& s = *impl_;
  s.now = std::max(s.now, now);
  if (s.role != Role::kLeader) return Status::NotLeader(s.leader);
  if (s.chosen < s.barrier_slot || !s.log.MembershipSlotsAfter(s.chosen).empty()) {
    return Status::Conflict("a membership change or the leader's opening slot is uncommitted");
  }
  if (static_cast<size_t>(next.voters_size() + next.learners_size()) >
          limits::kGroupReplicasMax ||
      !IsSingleStepChange(s.log.LatestMembership(), next)) {
    return Status::InvalidArgument("membership must change by exactly one replica");
  }
  pb::Entry e;
  e.set_type(pb::ENTRY_MEMBERSHIP);
  *e.mutable_membership() = next;
  e.set_request_id(request_id);
  return s.Append(std::move(e));
}

void Replica::OnPersisted(uint64_t persist_seq) { impl_->OnPersisted(persist_seq); }

void Replica::SendSnapshot(TimeUs now, ReplicaId to, Slot applied_slot, std::string data) {
  Impl& s = *impl_;
  s.now = std::max(s.now, now);
  if (s.role != Role::kLeader || applied_slot + 1 < s.log.log_start() ||
      applied_slot > s.applied) {
    return;  // stale request: the next heartbeat asks again if still needed
  }
  pb::Message m = s.NewMessage(to);
  *m.mutable_ballot() = s.promised;
  auto* snap = m.mutable_install_snapshot();
  snap->mutable_meta()->set_last_slot(applied_slot);
  *snap->mutable_meta()->mutable_membership() = s.log.MembershipAt(applied_slot);
  snap->set_data(std::move(data));
  snap->set_commit_index(s.chosen);
  snap->set_seq(s.heartbeat_seq);
  s.Send(std::move(m), false);
  auto it = s.peers.find(to);
  if (it != s.peers.end()) it->second.SkipThrough(applied_slot);
}

void Replica::OnSnapshotRefused(TimeUs now, const pb::SnapshotMeta& meta) {
  Impl& s = *impl_;
  s.now = std::max(s.now, now);
  TESSERA_CHECK(s.installing && s.installing->meta().last_slot() == meta.last_slot());
  s.installing.reset();
}

void Replica::OnSnapshotInstalled(TimeUs now, const pb::SnapshotMeta& meta) {
  Impl& s = *impl_;
  s.now = std::max(s.now, now);
  TESSERA_CHECK(s.installing && s.installing->meta().last_slot() == meta.last_slot());
  s.installing.reset();
  if (meta.last_slot() <= s.chosen) return;  // overtaken while installing
  s.log.InstallBase(meta.last_slot(), meta.membership());
  s.chosen = s.applied = s.matched = meta.last_slot();
  s.matched_ballot = s.promised;
  s.chosen_dirty = true;
  pb::Message reply = s.NewMessage(s.leader);
  *reply.mutable_ballot() = s.promised;
  auto* acc = reply.mutable_accepted();
  acc->set_ok(true);
  *acc->mutable_promised() = s.promised;
  acc->set_matched_slot(s.matched);
  acc->set_log_start(s.log.log_start());
  if (s.leader != 0) s.Send(std::move(reply), true);
}

void Replica::CompactLog(Slot upto) {
  Impl& s = *impl_;
  TESSERA_CHECK(upto <= s.applied);
  s.log.CompactThrough(std::min(upto, s.log.last_slot()));
}

Status Replica::TransferLeadership(TimeUs now, ReplicaId to) {
  Impl& s = *impl_;
  s.now = std::max(s.now, now);
  return s.StartTransfer(to);
}

void Replica::Campaign(TimeUs now) {
  Impl& s = *impl_;
  s.now = std::max(s.now, now);
  if (s.role != Role::kLeader && s.MayLead()) s.StartElection();
}

bool Replica::HasReady() const { return impl_->HasReady(); }
Ready Replica::TakeReady() { return impl_->TakeReady(); }
bool Replica::HoldsLease(TimeUs now) const { return impl_->HoldsLease(now); }

Result<Slot> Replica::LeaseReadIndex(TimeUs now) const {
  const Impl& s = *impl_;
  if (s.role != Role::kLeader) return Status::NotLeader(s.leader);
  if (s.transfer) return Status::Throttled("leadership transfer in progress");
  if (!s.HoldsLease(now)) return Status::Unavailable("leader holds no lease");
  return s.chosen;
}

ReplicaId Replica::id() const { return impl_->opt.self; }
Role Replica::role() const { return impl_->role; }
ReplicaId Replica::leader_hint() const {
  return impl_->role == Role::kLeader ? impl_->opt.self : impl_->leader;
}
ReplicaId Replica::transfer_target() const {
  return impl_->transfer ? impl_->transfer->to : 0;
}
const pb::Ballot& Replica::promised() const { return impl_->promised; }
Slot Replica::chosen_index() const { return impl_->chosen; }
Slot Replica::applied_index() const { return impl_->applied; }
Slot Replica::last_slot() const { return impl_->log.last_slot(); }
Slot Replica::log_start() const { return impl_->log.log_start(); }
const pb::Membership& Replica::membership() const { return impl_->log.LatestMembership(); }
pb::Membership Replica::MembershipAt(Slot slot) const { return impl_->log.MembershipAt(slot); }
const pb::Entry* Replica::EntryAt(Slot slot) const { return impl_->log.At(slot); }

}  // namespace tessera::consensus
