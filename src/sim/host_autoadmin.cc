#include "sim/host_autoadmin.h"

#include <algorithm>

namespace tessera::sim {

std::string HostAzOf(ReplicaId id) { return "az" + std::to_string((id - 1) % 3 + 1); }

pb::PartitionDescriptor HostInitialDescriptor(uint64_t group_id, uint32_t voters) {
  pb::PartitionDescriptor descriptor;
  descriptor.set_table("sim");
  descriptor.set_group_id(group_id);
  descriptor.set_epoch(1);
  for (ReplicaId id = 1; id <= voters; ++id) {
    pb::ReplicaPlacement* r = descriptor.add_replicas();
    r->set_node_id(id);
    r->set_az(HostAzOf(id));
    r->set_role(pb::REPLICA_VOTER);
  }
  return descriptor;
}

autoadmin::ClusterView HostClusterView(HostCluster& cluster,
                                       const pb::PartitionDescriptor& descriptor,
                                       uint32_t nodes, const std::set<ReplicaId>& gone) {
  autoadmin::ClusterView view;
  for (ReplicaId id = 1; id <= nodes; ++id) {
    autoadmin::NodeView& node = view.nodes[id];
    node.id = id;
    node.az = HostAzOf(id);
    if (gone.count(id) > 0) {
      node.health = autoadmin::NodeHealth::kDead;
      continue;
    }
    if (!cluster.provisioned(id)) continue;  // a healthy empty node
    const std::optional<node::GroupStatus> status = cluster.StatusOf(id);
    if (!status) {  // down or paused: it misses the poll
      node.health = autoadmin::NodeHealth::kUnreachable;
      continue;
    }
    autoadmin::ReplicaReport& report = node.groups[descriptor.group_id()];
    report.role = consensus::RoleName(status->role);
    report.applied = status->applied;
    report.chosen = status->chosen;
    report.ballot_round = status->ballot.round();
    report.ballot_replica = status->ballot.replica();
    report.membership = status->membership;
    report.membership_pending = status->membership_pending;
    report.stopped = status->stopped;
  }
  view.groups[descriptor.group_id()].descriptor = descriptor;
  autoadmin::FindLeaders(view);
  return view;
}

std::string ReplacementNotConverged(const pb::Membership& membership,
                                    const pb::PartitionDescriptor& descriptor, uint32_t replicas,
                                    uint32_t nodes, const std::set<ReplicaId>& gone) {
  if (static_cast<uint32_t>(membership.voters_size()) != replicas) {
    return std::to_string(membership.voters_size()) + " voters";
  }
  if (membership.learners_size() > 0) return "a learner remains";
  if (membership.log_only_size() > 0) return "a log replica remains";
  std::set<std::string> azs;
  for (uint32_t id : membership.voters()) {
    if (gone.count(id) > 0) return "lost voter " + std::to_string(id);
    azs.insert(HostAzOf(id));
  }
  std::set<std::string> live_azs;  // an AZ whose every node is gone holds no voter
  for (ReplicaId id = 1; id <= nodes; ++id) {
    if (gone.count(id) == 0) live_azs.insert(HostAzOf(id));
  }
  if (azs.size() != std::min<size_t>({3, replicas, live_azs.size()})) {
    return "voters in " + std::to_string(azs.size()) + " AZs";
  }
  std::set<uint32_t> voters(membership.voters().begin(), membership.voters().end());
  std::set<uint32_t> described;
  for (const pb::ReplicaPlacement& r : descriptor.replicas()) {
    if (r.role() == pb::REPLICA_VOTER && !r.log_only()) described.insert(r.node_id());
  }
  if (voters != described || static_cast<size_t>(descriptor.replicas_size()) != described.size()) {
    return "meta's descriptor lags the membership";
  }
  return "";
}

}  // namespace tessera::sim
