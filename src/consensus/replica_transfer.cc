// Leadership transfer. See docs/consensus.md, "Leadership transfer".
//
// The leader of ballot b gives up its lease for good (it never holds one
// under b again), stops taking proposals, waits until the target holds its
// whole log, and sends it TimeoutNow. The target campaigns at once with a
// Prepare naming b as released; an acceptor whose promise is exactly b
// promises without waiting out the lease window. That is safe because the
// only lease the window protects is the one of b's leader, which released
// it before any such Prepare could exist. An acceptor that has since
// promised a higher ballot (whose leader may hold a lease) ignores the
// release: it names another ballot.
#include "common/check.h"
#include "consensus/replica_impl.h"

namespace tessera::consensus {

Status Replica::Impl::StartTransfer(ReplicaId to) {
  if (role != Role::kLeader) return Status::NotLeader(leader);
  if (to == opt.self || !IsVoter(log.LatestMembership(), to) ||
      !IsVoter(log.MembershipAt(chosen), to)) {
    return Status::InvalidArgument("replica " + std::to_string(to) +
                                   " is not another voter of the group");
  }
  if (IsLogOnly(log.LatestMembership(), to)) {
    return Status::InvalidArgument("replica " + std::to_string(to) +
                                   " is a log replica: it never leads");
  }
  if (transfer) {
    if (transfer->to == to) return Status::Ok();
    return Status::Conflict("a transfer to replica " + std::to_string(transfer->to) +
                            " is in progress");
  }
  if (chosen < barrier_slot || !log.MembershipSlotsAfter(chosen).empty()) {
    return Status::Conflict("a membership change or the leader's opening slot is uncommitted");
  }
  lease_released = true;
  lease_expiry_us = 0;
  transfer = Transfer{to, now + opt.election_timeout_min_us, false};
  MaybeSendTimeoutNow();
  return Status::Ok();
}

void Replica::Impl::MaybeSendTimeoutNow() {
  if (role != Role::kLeader || !transfer || transfer->timeout_now_sent) return;
  const auto it = peers.find(transfer->to);
  if (it == peers.end() || it->second.match < log.last_slot()) return;
  pb::Message m = NewMessage(transfer->to);
  *m.mutable_ballot() = promised;
  m.mutable_timeout_now();
  Send(std::move(m), false);
  transfer->timeout_now_sent = true;
}

void Replica::Impl::OnTimeoutNow(const pb::Message& m) {
  // Only the leader of the ballot we follow may hand over to us.
  if (role == Role::kLeader || !BallotEq(m.ballot(), promised) ||
      m.ballot().replica() != m.from() || !MayLead()) {
    return;
  }
  const pb::Ballot released = promised;
  StartElection(&released);
}

// The target did not take over in time: its election failed or the message
// was lost. The lease under our ballot is gone for good, so win a fresh
// one, naming our own ballot as released.
void Replica::Impl::CheckTransfer() {
  if (role != Role::kLeader || !transfer || now < transfer->deadline_us) return;
  const pb::Ballot released = promised;
  BecomeFollower(0);
  if (MayLead()) StartElection(&released);
}

}  // namespace tessera::consensus
