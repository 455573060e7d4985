// Goal: builders of hand-made inputs and an exact one-line text form of outputs, for tests.
// Exact-sequence tests drive single Replicas and compare the messages, entries
// and hard state they emit as readable strings (in the spirit of etcd raft's
// interaction tests). Test-only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "consensus/ballot.h"
#include "consensus/replica.h"
#include "consensus/test_group.h"

namespace tessera::consensus::testing {

inline constexpr uint64_t kGroup = 7;  // TestOptions' group id
// Past the restart guard (one lease) of every replica constructed at time 0,
// and before anything else happens in a single-replica test.
inline constexpr TimeUs kT0 = 1'000'000;

inline pb::Ballot B(uint64_t round, ReplicaId replica) { return MakeBallot(round, replica); }

inline pb::Membership Members(std::vector<ReplicaId> voters, std::vector<ReplicaId> learners = {}) {
  pb::Membership m = Voters(std::move(voters));
  for (ReplicaId id : learners) m.add_learners(id);
  return m;
}

// --- entries ---------------------------------------------------------------

inline pb::Entry Cmd(Slot slot, const pb::Ballot& ballot, std::string command,
                     uint64_t request_id = 0) {
  pb::Entry e;
  e.set_slot(slot);
  *e.mutable_ballot() = ballot;
  e.set_type(pb::ENTRY_COMMAND);
  e.set_command(std::move(command));
  e.set_request_id(request_id);
  return e;
}

inline pb::Entry Noop(Slot slot, const pb::Ballot& ballot) {
  pb::Entry e;
  e.set_slot(slot);
  *e.mutable_ballot() = ballot;
  e.set_type(pb::ENTRY_NOOP);
  return e;
}

inline pb::Entry MembershipEntry(Slot slot, const pb::Ballot& ballot, const pb::Membership& m) {
  pb::Entry e;
  e.set_slot(slot);
  *e.mutable_ballot() = ballot;
  e.set_type(pb::ENTRY_MEMBERSHIP);
  *e.mutable_membership() = m;
  return e;
}

// Durable state of a replica that accepted `entries` (contiguous) and
// promised `promised`; its host applied every slot <= chosen.
inline RecoveredState Recovered(const pb::Membership& base, std::vector<pb::Entry> entries = {},
                                const pb::Ballot& promised = {}, Slot chosen = 0) {
  RecoveredState rs;
  *rs.hard_state.mutable_promised() = promised;
  rs.hard_state.set_chosen_index(chosen);
  rs.log_base.set_log_start(entries.empty() ? chosen + 1 : entries.front().slot());
  *rs.log_base.mutable_base_membership() = base;
  rs.entries = std::move(entries);
  rs.applied_index = chosen;
  return rs;
}

inline std::unique_ptr<Replica> NewReplica(ReplicaId self, RecoveredState rs, TimeUs now = 0) {
  return std::make_unique<Replica>(TestOptions(self), std::move(rs), now);
}

// --- messages --------------------------------------------------------------

inline pb::Message Msg(ReplicaId from, ReplicaId to, const pb::Ballot& ballot) {
  pb::Message m;
  m.set_group_id(kGroup);
  m.set_from(from);
  m.set_to(to);
  *m.mutable_ballot() = ballot;
  return m;
}

inline pb::Message PrepareMsg(ReplicaId from, ReplicaId to, const pb::Ballot& ballot,
                              Slot from_slot, Slot chosen_index) {
  pb::Message m = Msg(from, to, ballot);
  m.mutable_prepare()->set_from_slot(from_slot);
  m.mutable_prepare()->set_chosen_index(chosen_index);
  return m;
}

// A granted, complete promise of `ballot` carrying `entries`.
inline pb::Message PromiseMsg(ReplicaId from, ReplicaId to, const pb::Ballot& ballot,
                              Slot chosen_index, std::vector<pb::Entry> entries = {},
                              Slot log_start = 1) {
  pb::Message m = Msg(from, to, ballot);
  pb::Promise* p = m.mutable_promise();
  p->set_granted(true);
  *p->mutable_promised() = ballot;
  p->set_chosen_index(chosen_index);
  p->set_log_start(log_start);
  for (pb::Entry& e : entries) *p->add_entries() = std::move(e);
  return m;
}

inline pb::Message RefusedPromiseMsg(ReplicaId from, ReplicaId to, const pb::Ballot& ballot,
                                     const pb::Ballot& promised, bool lease_active) {
  pb::Message m = Msg(from, to, ballot);
  m.mutable_promise()->set_granted(false);
  *m.mutable_promise()->mutable_promised() = promised;
  m.mutable_promise()->set_lease_active(lease_active);
  return m;
}

inline pb::Message AcceptMsg(ReplicaId from, ReplicaId to, const pb::Ballot& ballot,
                             Slot first_slot, std::vector<pb::Entry> entries, Slot commit_index,
                             Slot leader_last_slot, uint64_t seq) {
  pb::Message m = Msg(from, to, ballot);
  pb::Accept* a = m.mutable_accept();
  a->set_first_slot(first_slot);
  for (pb::Entry& e : entries) *a->add_entries() = std::move(e);
  a->set_commit_index(commit_index);
  a->set_leader_last_slot(leader_last_slot);
  a->set_seq(seq);
  return m;
}

// A durable acknowledgement of every slot <= matched under `ballot`.
inline pb::Message AckMsg(ReplicaId from, ReplicaId to, const pb::Ballot& ballot, Slot matched,
                          uint64_t seq, Slot log_start = 1) {
  pb::Message m = Msg(from, to, ballot);
  pb::Accepted* a = m.mutable_accepted();
  a->set_ok(true);
  *a->mutable_promised() = ballot;
  a->set_matched_slot(matched);
  a->set_seq(seq);
  a->set_log_start(log_start);
  return m;
}

// ok = false: a gap report (promised == ballot) or a refusal (promised higher).
inline pb::Message NackMsg(ReplicaId from, ReplicaId to, const pb::Ballot& ballot,
                           const pb::Ballot& promised, Slot matched, uint64_t seq) {
  pb::Message m = Msg(from, to, ballot);
  pb::Accepted* a = m.mutable_accepted();
  a->set_ok(false);
  *a->mutable_promised() = promised;
  a->set_matched_slot(matched);
  a->set_seq(seq);
  a->set_log_start(1);
  return m;
}

inline pb::Message PreVoteMsg(ReplicaId from, ReplicaId to, uint64_t round, Slot chosen_index) {
  pb::Message m = Msg(from, to, B(round, from));
  m.mutable_pre_vote()->set_next_round(round);
  m.mutable_pre_vote()->set_chosen_index(chosen_index);
  return m;
}

inline pb::Message PreVoteReplyMsg(ReplicaId from, ReplicaId to, const pb::Ballot& ballot,
                                   bool granted) {
  pb::Message m = Msg(from, to, ballot);
  m.mutable_pre_vote_reply()->set_granted(granted);
  return m;
}

// --- text forms --------------------------------------------------------------

inline std::string Str(const pb::Ballot& b) {
  return std::to_string(b.round()) + "." + std::to_string(b.replica());
}

inline std::string Str(const pb::Membership& m) {
  std::string out = "v";
  for (int i = 0; i < m.voters_size(); ++i) out += (i ? "," : "") + std::to_string(m.voters(i));
  if (m.learners_size() > 0) out += "+l";
  for (int i = 0; i < m.learners_size(); ++i) {
    out += (i ? "," : "") + std::to_string(m.learners(i));
  }
  if (m.log_only_size() > 0) out += "+o";
  for (int i = 0; i < m.log_only_size(); ++i) {
    out += (i ? "," : "") + std::to_string(m.log_only(i));
  }
  return out;
}

// "3@1.1 noop", "4@1.1 cmd=x#7" (request id 7), "5@1.1 members=v1,2,3+l4".
inline std::string Str(const pb::Entry& e) {
  std::string out = std::to_string(e.slot()) + "@" + Str(e.ballot());
  switch (e.type()) {
    case pb::ENTRY_NOOP: out += " noop"; break;
    case pb::ENTRY_COMMAND: out += " cmd=" + e.command(); break;
    case pb::ENTRY_MEMBERSHIP: out += " members=" + Str(e.membership()); break;
    default: out += " type=" + std::to_string(e.type()); break;
  }
  if (e.request_id() != 0) out += "#" + std::to_string(e.request_id());
  return out;
}

inline std::string Str(const google::protobuf::RepeatedPtrField<pb::Entry>& entries) {
  if (entries.empty()) return "";
  std::string out = " [";
  for (int i = 0; i < entries.size(); ++i) out += (i ? ", " : "") + Str(entries[i]);
  return out + "]";
}

// Every field of the message, so a comparison of strings is exact.
inline std::string Str(const pb::Message& m) {
  std::string out = std::to_string(m.from()) + "->" + std::to_string(m.to()) + " ";
  if (m.group_id() != kGroup) out += "group=" + std::to_string(m.group_id()) + " ";
  const std::string b = "b=" + Str(m.ballot());
  auto yes_no = [](bool v, const char* yes, const char* no) { return std::string(v ? yes : no); };
  switch (m.body_case()) {
    case pb::Message::kPrepare:
      return out + "prepare " + b + " from=" + std::to_string(m.prepare().from_slot()) +
             " chosen=" + std::to_string(m.prepare().chosen_index()) +
             (m.prepare().has_released_ballot()
                  ? " released=" + Str(m.prepare().released_ballot())
                  : std::string());
    case pb::Message::kPromise: {
      const pb::Promise& p = m.promise();
      return out + "promise " + b + " " + yes_no(p.granted(), "granted", "refused") +
             " promised=" + Str(p.promised()) + " chosen=" + std::to_string(p.chosen_index()) +
             " start=" + std::to_string(p.log_start()) + yes_no(p.partial(), " partial", "") +
             yes_no(p.lease_active(), " lease", "") + Str(p.entries());
    }
    case pb::Message::kAccept: {
      const pb::Accept& a = m.accept();
      return out + "accept " + b + " first=" + std::to_string(a.first_slot()) +
             " commit=" + std::to_string(a.commit_index()) +
             " last=" + std::to_string(a.leader_last_slot()) + " seq=" + std::to_string(a.seq()) +
             Str(a.entries());
    }
    case pb::Message::kAccepted: {
      const pb::Accepted& a = m.accepted();
      return out + "accepted " + b + " " + yes_no(a.ok(), "ok", "nack") +
             " promised=" + Str(a.promised()) + " matched=" + std::to_string(a.matched_slot()) +
             " seq=" + std::to_string(a.seq()) + " start=" + std::to_string(a.log_start());
    }
    case pb::Message::kPreVote:
      return out + "prevote " + b + " round=" + std::to_string(m.pre_vote().next_round()) +
             " chosen=" + std::to_string(m.pre_vote().chosen_index());
    case pb::Message::kPreVoteReply:
      return out + "prevote_reply " + b + " " +
             yes_no(m.pre_vote_reply().granted(), "granted", "refused");
    case pb::Message::kInstallSnapshot: {
      const pb::InstallSnapshot& s = m.install_snapshot();
      return out + "snapshot " + b + " last=" + std::to_string(s.meta().last_slot()) +
             " members=" + Str(s.meta().membership()) +
             " commit=" + std::to_string(s.commit_index()) + " seq=" + std::to_string(s.seq()) +
             " data=" + s.data();
    }
    case pb::Message::kTimeoutNow: return out + "timeout_now " + b;
    case pb::Message::BODY_NOT_SET: break;
  }
  return out + "empty " + b;
}

inline std::vector<std::string> Strs(const std::vector<pb::Message>& messages) {
  std::vector<std::string> out;
  for (const pb::Message& m : messages) out.push_back(Str(m));
  return out;
}

inline std::vector<std::string> Strs(const std::vector<pb::Entry>& entries) {
  std::vector<std::string> out;
  for (const pb::Entry& e : entries) out.push_back(Str(e));
  return out;
}

inline std::string Str(const std::optional<pb::HardState>& hs) {
  if (!hs) return "none";
  return "promised=" + Str(hs->promised()) + " chosen=" + std::to_string(hs->chosen_index());
}

// --- driving a replica -----------------------------------------------------

// Takes the next Ready and reports everything it asked to persist durable.
inline Ready TakeAndPersist(Replica& r) {
  Ready rd = r.TakeReady();
  if (rd.persist_seq != 0) r.OnPersisted(rd.persist_seq);
  return rd;
}

// Replica `self` of a fresh group with membership `m`, elected at kT0 with
// ballot (1, self) by empty promises from `promisers`. Its opening no-op at
// slot 1 is durable on it and acknowledged (heartbeat seq 1) by `ackers`;
// every Ready has been taken and persisted.
inline std::unique_ptr<Replica> ElectedLeader(ReplicaId self, const pb::Membership& m,
                                              const std::vector<ReplicaId>& promisers,
                                              const std::vector<ReplicaId>& ackers) {
  auto r = NewReplica(self, Recovered(m));
  r->Campaign(kT0);
  TakeAndPersist(*r);
  for (ReplicaId id : promisers) r->Step(kT0, PromiseMsg(id, self, B(1, self), 0));
  TakeAndPersist(*r);
  for (ReplicaId id : ackers) r->Step(kT0, AckMsg(id, self, B(1, self), 1, 1));
  TakeAndPersist(*r);
  return r;
}

}  // namespace tessera::consensus::testing
