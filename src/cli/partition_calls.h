// How operator commands reach the partitions of a table: the partition map
// from the metadata service, and one call to a partition's leader.
//
// Thread safety: as the ClusterClient (one caller at a time).
#pragma once

#include <string>
#include <vector>

#include "cluster/cluster_client.h"
#include "common/result.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::cli {

// Every partition of `table` (meta.tables on any meta replica), in the
// map's order; NotFound when the table has none.
Result<std::vector<pb::PartitionDescriptor>> TablePartitions(cluster::ClusterClient& client,
                                                             const std::string& table);

// `method(payload)` on the partition's leader: the hinted leader first,
// then each replica, following NotLeader hints (at most 16 attempts). The
// last error, prefixed with the group, when none answers.
Result<std::string> CallPartition(cluster::ClusterClient& client, const pb::PartitionDescriptor& p,
                                  const std::string& method, const std::string& payload);

}  // namespace tessera::cli
