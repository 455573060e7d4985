// Leader leases and check-quorum. See docs/consensus.md, "Leases".
//
// A follower that accepts an Accept at its local time t refuses promises
// until t + L. The leader records when it sent each heartbeat (sequence
// number); once a quorum (itself included) acknowledged a sequence sent at s,
// no other leader can be elected before s + L' on the leader's clock, with
// L' = Options::LeaderLeaseUs() (drift and tick margins). Lease reads further
// wait until the leader's opening no-op is chosen, so every write
// acknowledged by an earlier leader is applied before the first read.
#include <algorithm>

#include "consensus/replica_impl.h"

namespace tessera::consensus {
namespace {
constexpr size_t kHeartbeatHistoryMax = 256;
}  // namespace

void Replica::Impl::RecordHeartbeatSend() {
  ++heartbeat_seq;
  heartbeat_send_us.emplace_back(heartbeat_seq, now);
  if (heartbeat_send_us.size() > kHeartbeatHistoryMax) heartbeat_send_us.pop_front();
  last_leader_contact_us = now;  // as an acceptor we refuse promises too
  lease_expiry_us = std::max(lease_expiry_us, LeaseExpiryUs());  // one-voter groups
}

TimeUs Replica::Impl::LeaseExpiryUs() const {
  auto sent_at = [&](uint64_t seq) -> TimeUs {
    // Sequence numbers are dense; the history is ordered by them.
    if (heartbeat_send_us.empty() || seq < heartbeat_send_us.front().first) return 0;
    const size_t index = seq - heartbeat_send_us.front().first;
    return index < heartbeat_send_us.size() ? heartbeat_send_us[index].second : 0;
  };
  const TimeUs quorum_sent = QuorumValue(ActiveMemberships(), [&](ReplicaId id) -> uint64_t {
    if (id == opt.self) return heartbeat_send_us.empty() ? 0 : heartbeat_send_us.back().second;
    auto it = peers.find(id);
    return it == peers.end() ? 0 : sent_at(it->second.acked_seq);
  });
  return quorum_sent == 0 ? 0 : quorum_sent + opt.LeaderLeaseUs();
}

bool Replica::Impl::HoldsLease(TimeUs at) const {
  return role == Role::kLeader && !lease_released && chosen >= barrier_slot &&
         at < lease_expiry_us;
}

// An isolated leader steps down once it has not heard a quorum for
// check_quorum_timeout; its lease (shorter) has expired by then.
void Replica::Impl::CheckQuorum() {
  const TimeUs heard = QuorumValue(ActiveMemberships(), [&](ReplicaId id) -> uint64_t {
    if (id == opt.self) return now;
    auto it = peers.find(id);
    return it == peers.end() ? 0 : it->second.last_heard_us;
  });
  if (now > heard + opt.check_quorum_timeout_us) BecomeFollower(0);
}

}  // namespace tessera::consensus
