#include "meta/placement.h"

namespace tessera::meta {

Result<std::vector<pb::ReplicaPlacement>> PlaceReplicas(
    const std::vector<NodeInfo>& nodes, const std::vector<std::string>& azs,
    std::map<uint32_t, size_t>& replicas_by_node) {
  std::vector<pb::ReplicaPlacement> placed;
  for (const std::string& az : azs) {
    const NodeInfo* best = nullptr;
    size_t best_load = 0;
    for (const NodeInfo& n : nodes) {
      if (n.az != az) continue;
      const size_t load = replicas_by_node[n.id];
      if (!best || load < best_load || (load == best_load && n.id < best->id)) {
        best = &n;
        best_load = load;
      }
    }
    if (!best) return Status::Unavailable("no storage node in AZ " + az);
    pb::ReplicaPlacement r;
    r.set_node_id(best->id);
    r.set_az(az);
    placed.push_back(std::move(r));
  }
  for (const pb::ReplicaPlacement& r : placed) ++replicas_by_node[r.node_id()];
  return placed;
}

}  // namespace tessera::meta
