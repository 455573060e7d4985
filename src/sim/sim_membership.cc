// The membership actor, a stand-in for autoadmin's replica replacement:
// during the fault phase it replaces voters one single-step change at a time
// through whichever replica leads: add a spare as a learner (a fresh node
// with an empty disk, so it catches up by snapshot or log), promote it, then
// remove a voter (possibly the leader itself).
#include <algorithm>

#include "common/check.h"
#include "consensus/quorum.h"
#include "sim/simulation.h"

namespace tessera::sim {

namespace {

bool Contains(const google::protobuf::RepeatedField<uint32_t>& ids, ReplicaId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

std::string DescribeMembership(const pb::Membership& membership) {
  std::string text = "voters{";
  for (uint32_t id : membership.voters()) text += " r" + std::to_string(id);
  text += " } learners{";
  for (uint32_t id : membership.learners()) text += " r" + std::to_string(id);
  return text + " }";
}

}  // namespace

bool Simulation::IsFinalMember(ReplicaId id) const {
  return Contains(chosen_membership_.voters(), id) || Contains(chosen_membership_.learners(), id);
}

void Simulation::OnMembershipStep() {
  if (healed_) return;
  ScheduleSimple(now_ + nemesis_prng_.Range(300'000, 1'500'000), EventKind::kMembership, 0);
  const ReplicaId leader_id = CurrentLeader();
  if (leader_id == 0 || Host(leader_id).paused(now_)) return;
  ReplicaHost& leader = Host(leader_id);
  const pb::Membership current = leader.replica->membership();
  pb::Membership next = current;
  if (current.learners_size() > 0) {
    // Promote once it caught up, or (sometimes) before: only availability suffers.
    const ReplicaId learner = current.learners(0);
    const ReplicaHost& host = Host(learner);
    const bool caught_up = host.up() && host.kv.applied_index() + 50 >= leader.kv.applied_index();
    if (!caught_up && !nemesis_prng_.Chance(30)) return;
    next.mutable_learners()->erase(next.mutable_learners()->begin());
    next.add_voters(learner);
    ProposeMembership(leader, next, "promote " + Who(learner));
    return;
  }
  if (static_cast<uint32_t>(current.voters_size()) > config_.replicas) {
    const int index = static_cast<int>(nemesis_prng_.Below(current.voters_size()));
    const ReplicaId removed = current.voters(index);
    next.mutable_voters()->erase(next.mutable_voters()->begin() + index);
    ProposeMembership(leader, next, "remove " + Who(removed));
    return;
  }
  for (const auto& host : hosts_) {
    if (host->provisioned) continue;
    next.add_learners(host->id);
    ProposeMembership(leader, next, "add learner " + Who(host->id));
    return;
  }
}

void Simulation::ProposeMembership(ReplicaHost& leader, const pb::Membership& next,
                                   const std::string& what) {
  const uint64_t request_id = next_membership_request_++;  // client 0: the actor
  Result<Slot> slot = leader.replica->ProposeMembership(LocalNow(leader), next, request_id);
  TESSERA_CHECK(slot.ok() || slot.status().code() != StatusCode::kInvalidArgument);
  tracer_.Event(now_, Who(leader.id), 60, slot.ok() ? *slot : 0, request_id, [&] {
    return "membership: " + what + " -> " + DescribeMembership(next) +
           (slot.ok() ? " at slot " + std::to_string(*slot) : " refused: " + slot.status().ToString());
  });
  if (!slot.ok()) return;
  for (uint32_t id : next.voters()) Host(id).ever_named = true;
  for (uint32_t id : next.learners()) {
    Host(id).ever_named = true;
    if (!Host(id).provisioned) ProvisionSpare(id, next);
  }
  Drain(leader);
}

// A fresh node: an empty disk that knows the membership it joins.
void Simulation::ProvisionSpare(ReplicaId id, const pb::Membership& next) {
  ReplicaHost& host = Host(id);
  host.provisioned = true;
  host.log_only = consensus::IsLogOnly(next, id);
  if (host.log_only) ++result_.stats.log_replicas;
  host.disk = SimDisk(next);
  StartReplica(host);
}

}  // namespace tessera::sim
