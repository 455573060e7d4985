// `tessera cluster drain NODE...`: asks meta to drain storage nodes
// (meta.set_drain); the autoadmin then moves each of their replicas to
// another node, as it replaces a dead node's (docs/autoadmin.md). Unless
// --no-wait, waits until no partition names the nodes and they host no
// group, printing progress. --undo stops draining.
//
// Exit codes: 0 done, 1 not drained within --timeout (or meta unreachable),
// 2 a target that is not a storage node of the layout (nothing changed).
#pragma once

#include <ostream>

#include "cli/cluster_command.h"
#include "cli/cluster_session.h"

namespace tessera::cli {

int Drain(ClusterSession& s, const ClusterCommandArgs& args, std::ostream& out, std::ostream& err);

// Asks meta to drain storage node `node_id` (drain) or to stop draining it.
Status SetDrain(cluster::ClusterClient& client, uint32_t node_id, bool drain);

// What a node still holds: replicas that partitions name on it, and groups
// it hosts (-1 when it does not answer: a stopped node may still hold data).
struct ReplicasLeft {
  int named = 0;
  int hosted = 0;
};
Result<ReplicasLeft> ReplicasOn(cluster::ClusterClient& client, const cluster::ProcessEntry& node);

}  // namespace tessera::cli
