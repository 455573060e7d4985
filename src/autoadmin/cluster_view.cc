#include "autoadmin/cluster_view.h"

#include <tuple>

namespace tessera::autoadmin {

const char* NodeHealthName(NodeHealth health) {
  switch (health) {
    case NodeHealth::kHealthy: return "healthy";
    case NodeHealth::kGray: return "gray";
    case NodeHealth::kUnreachable: return "unreachable";
    case NodeHealth::kDead: return "dead";
  }
  return "?";
}

void FindLeaders(ClusterView& view) {
  for (auto& [group_id, group] : view.groups) {
    group.leader = 0;
    group.stopped_voters.clear();
    group.state_bytes = 0;
    group.state_keys = 0;
    group.load = LoadReport{};
    std::tuple<uint64_t, uint32_t> best{0, 0};
    for (const auto& [node_id, node] : view.nodes) {
      if (!Answered(node.health)) continue;
      const auto it = node.groups.find(group_id);
      if (it == node.groups.end()) continue;
      if (it->second.stopped) {
        group.stopped_voters.insert(node_id);
        continue;
      }
      if (it->second.role != "leader") continue;
      const std::tuple<uint64_t, uint32_t> ballot{it->second.ballot_round, it->second.ballot_replica};
      if (group.leader == 0 || ballot > best) {
        group.leader = node_id;
        group.state_bytes = it->second.state_bytes;
        group.state_keys = it->second.state_keys;
        group.load = it->second.load;
        best = ballot;
      }
    }
  }
}

}  // namespace tessera::autoadmin
