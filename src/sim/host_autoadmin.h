// The autoadmin on the production host's seeds: the ClusterView the
// active autoadmin would build for a HostCluster (nodes in AZs az1..az3 by
// id, meta's descriptor as the seed keeps it, each live replica's status
// as admin.status reports it), and the check that a replacement the
// planner (autoadmin::Plan) carried out is finished. RunHostSeed plans
// from the view every autoadmin round and carries the actions out through
// the host's own paths (Provision, GroupHost::ChangeMembership,
// TransferLeadership); the decisions are the production planner's.
//
// Thread safety: none; the owner's thread (HostClusterView calls into the
// cluster).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "autoadmin/cluster_view.h"
#include "sim/host_cluster.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::sim {

// The AZ of node `id`: az1, az2, az3, az1, ... by id.
std::string HostAzOf(ReplicaId id);

// Meta's descriptor of the group at the start: voters 1..voters, epoch 1.
pb::PartitionDescriptor HostInitialDescriptor(uint64_t group_id, uint32_t voters);

// The view of nodes 1..nodes: a node in `gone` (lost for good, or whose
// replica was dropped) is dead; one never provisioned is a healthy empty
// node; one down or paused is unreachable (no report); every other reports
// its replica's status.
autoadmin::ClusterView HostClusterView(HostCluster& cluster,
                                       const pb::PartitionDescriptor& descriptor,
                                       uint32_t nodes, const std::set<ReplicaId>& gone);

// Empty once `membership` (chosen) is `replicas` voters, none of them in
// `gone`, no learner and no log replica, spread over as many AZs as the
// live nodes 1..nodes allow (at most 3), and meta's descriptor names
// exactly these voters; else what is still missing.
std::string ReplacementNotConverged(const pb::Membership& membership,
                                    const pb::PartitionDescriptor& descriptor, uint32_t replicas,
                                    uint32_t nodes, const std::set<ReplicaId>& gone);

}  // namespace tessera::sim
