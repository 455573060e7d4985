// Voters lost for good, and the autoadmin's planner replacing them: the
// production decision logic (autoadmin::Plan) driven by the simulator in
// place of the random membership actor. A lost voter crashes and never
// returns; every autoadmin round the simulator builds the ClusterView the
// autoadmin would see (hosts as nodes in AZs az1..az3 by id, the group's
// descriptor as meta would hold it, each live replica's report), plans,
// and carries the actions out: descriptor updates as meta, a new replica
// as a fresh disk bootstrapped from the descriptor, membership steps
// through the leader, dropped replicas never restarted.
#include <algorithm>
#include <set>

#include <google/protobuf/util/message_differencer.h>

#include "autoadmin/cluster_view.h"
#include "common/check.h"
#include "consensus/membership_step.h"
#include "sim/simulation.h"

namespace tessera::sim {
namespace {

std::string AzOf(ReplicaId id) { return "az" + std::to_string((id - 1) % 3 + 1); }

}  // namespace

void Simulation::OnLoseReplica() {
  if (healed_) return;
  // Only while every other voter (in the chosen and the leader's latest
  // membership) is still alive: two voters of three lost for good is data
  // loss by definition, not something a replacement can undo.
  const ReplicaId leader = CurrentLeader();
  std::set<ReplicaId> voters(chosen_membership_.voters().begin(), chosen_membership_.voters().end());
  if (leader != 0) {
    const pb::Membership& latest = Host(leader).replica->membership();
    voters.insert(latest.voters().begin(), latest.voters().end());
  }
  std::vector<ReplicaId> alive;
  for (ReplicaId id : voters) {
    if (Host(id).lost) return;  // a loss is still being repaired
    alive.push_back(id);
  }
  // A log replica stands in: the group already tolerates its one failure.
  if (static_cast<uint32_t>(chosen_membership_.voters_size()) != config_.replicas ||
      chosen_membership_.learners_size() > 0 || chosen_membership_.log_only_size() > 0 ||
      alive.empty()) {
    // Mid-replacement: try again later.
    ScheduleSimple(now_ + nemesis_prng_.Range(200'000, 600'000), EventKind::kLoseReplica, 0);
    return;
  }
  ReplicaHost& host = Host(alive[nemesis_prng_.Below(alive.size())]);
  tracer_.Event(now_, Who(host.id), 70, 0, 0, [] { return std::string("LOST for good"); });
  if (host.up()) Crash(host);
  host.lost = true;
  host.provisioned = false;
  ++host.incarnation;  // pending restarts are void
  ++result_.stats.replicas_lost;
}

void Simulation::OnAutoadminStep() {
  if (done_) return;
  ScheduleSimple(now_ + nemesis_prng_.Range(100'000, 400'000), EventKind::kMembership, 0);
  autoadmin::ClusterView view;
  for (const auto& host : hosts_) {
    autoadmin::NodeView& node = view.nodes[host->id];
    node.id = host->id;
    node.az = AzOf(host->id);
    if (host->lost) {
      node.health = autoadmin::NodeHealth::kDead;
    } else if (!host->provisioned) {
      node.health = autoadmin::NodeHealth::kHealthy;  // an empty spare
    } else if (!host->up() || host->paused(now_)) {
      node.health = autoadmin::NodeHealth::kUnreachable;
    }
    if (!host->up() || host->lost || host->paused(now_)) continue;
    const consensus::Replica& r = *host->replica;
    autoadmin::ReplicaReport& report = node.groups[descriptor_.group_id()];
    report.role = consensus::RoleName(r.role());
    report.applied = host->kv.applied_index();
    report.chosen = r.chosen_index();
    report.ballot_round = r.promised().round();
    report.ballot_replica = r.promised().replica();
    report.membership = r.membership();
    report.membership_pending = !google::protobuf::util::MessageDifferencer::Equals(
        r.membership(), r.MembershipAt(r.chosen_index()));
  }
  view.groups[descriptor_.group_id()].descriptor = descriptor_;
  autoadmin::FindLeaders(view);
  autoadmin::PlannerOptions options;
  options.replication_factor = config_.replicas;
  options.max_concurrent = 1;
  for (const autoadmin::Action& action : autoadmin::Plan(view, options)) ExecuteAutoadmin(action);
}

void Simulation::ExecuteAutoadmin(const autoadmin::Action& action) {
  tracer_.Event(now_, "autoadmin", 71, static_cast<uint64_t>(action.kind), action.replica, [&] {
    return std::string("autoadmin ") + autoadmin::ActionKindName(action.kind) + " " +
           Who(action.replica) + ": " + action.reason;
  });
  switch (action.kind) {
    case autoadmin::ActionKind::kAddReplica:
    case autoadmin::ActionKind::kSyncDescriptor:
      TESSERA_CHECK(action.descriptor.epoch() == descriptor_.epoch() + 1);
      descriptor_ = action.descriptor;
      return;
    case autoadmin::ActionKind::kCreateReplica: {
      pb::Membership bootstrap;
      for (const pb::ReplicaPlacement& r : action.descriptor.replicas()) {
        if (r.role() == pb::REPLICA_LEARNER) bootstrap.add_learners(r.node_id());
        else bootstrap.add_voters(r.node_id());
        if (r.log_only()) bootstrap.add_log_only(r.node_id());
      }
      ReplicaHost& host = Host(action.replica);
      TESSERA_CHECK(!host.lost && !host.provisioned);
      ProvisionSpare(host.id, bootstrap);
      return;
    }
    case autoadmin::ActionKind::kAddLearner:
    case autoadmin::ActionKind::kPromote:
    case autoadmin::ActionKind::kRemove: {
      ReplicaHost& leader = Host(action.node);
      if (!leader.up()) return;
      const consensus::MembershipStep step =
          action.kind == autoadmin::ActionKind::kAddLearner
              ? (action.log_only ? consensus::MembershipStep::kAddLogLearner
                                 : consensus::MembershipStep::kAddLearner)
          : action.kind == autoadmin::ActionKind::kPromote ? consensus::MembershipStep::kPromote
                                                           : consensus::MembershipStep::kRemove;
      auto next = consensus::NextMembership(leader.replica->membership(), step, action.replica);
      if (!next.ok() || !next->has_value()) return;  // does not apply, or already in effect
      ProposeMembership(leader, **next, autoadmin::ActionKindName(action.kind));
      return;
    }
    case autoadmin::ActionKind::kDropStale: {
      ReplicaHost& host = Host(action.replica);
      if (host.up()) Crash(host);
      host.lost = host.ever_named;
      host.provisioned = false;
      ++host.incarnation;
      return;
    }
    case autoadmin::ActionKind::kTransferLeader: {
      ReplicaHost& leader = Host(action.node);
      if (!leader.up() || leader.paused(now_)) return;
      (void)leader.replica->TransferLeadership(LocalNow(leader), action.replica);
      Drain(leader);
      return;
    }
    case autoadmin::ActionKind::kMoveBlobSlots:
      TESSERA_CHECK(false && "Plan never moves blob slots (blob_slot_planner.h)");
      return;
  }
}

std::string Simulation::MembershipNotConverged() const {
  const pb::Membership& m = chosen_membership_;
  if (static_cast<uint32_t>(m.voters_size()) != config_.replicas) {
    return std::to_string(m.voters_size()) + " voters";
  }
  if (m.learners_size() > 0) return "a learner remains";
  if (m.log_only_size() > 0) return "a log replica remains";
  std::set<std::string> azs;
  for (uint32_t id : m.voters()) {
    if (hosts_[id - 1]->lost) return "lost voter " + Who(id);
    azs.insert(AzOf(id));
  }
  // As many AZs as the voters can span: an AZ whose every host was lost
  // cannot hold one.
  std::set<std::string> live_azs;
  for (const auto& host : hosts_) {
    if (!host->lost) live_azs.insert(AzOf(host->id));
  }
  if (azs.size() != std::min<size_t>({3, config_.replicas, live_azs.size()})) {
    return "voters in " + std::to_string(azs.size()) + " AZs";
  }
  std::set<uint32_t> voters(m.voters().begin(), m.voters().end()), described;
  for (const pb::ReplicaPlacement& r : descriptor_.replicas()) {
    if (r.role() == pb::REPLICA_VOTER) described.insert(r.node_id());
  }
  if (voters != described || static_cast<size_t>(descriptor_.replicas_size()) != described.size()) {
    return "meta's descriptor lags the membership";
  }
  return std::string();
}

}  // namespace tessera::sim
