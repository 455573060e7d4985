// Replica placement for new partitions: one replica per AZ, on the node of
// that AZ with the fewest replicas (ties: the lowest node id).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::meta {

struct NodeInfo {
  uint32_t id = 0;
  std::string az;
};

// One ReplicaPlacement per AZ of `azs` (in that order), each the least
// loaded node of its AZ by `replicas_by_node` (absent: 0), which is then
// incremented for the chosen nodes so that repeated calls spread a table's
// partitions. Unavailable, naming the AZ, when an AZ has no node.
Result<std::vector<pb::ReplicaPlacement>> PlaceReplicas(
    const std::vector<NodeInfo>& nodes, const std::vector<std::string>& azs,
    std::map<uint32_t, size_t>& replicas_by_node);

}  // namespace tessera::meta
