#include "autoadmin/blob_slot_planner.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "common/limits.h"

namespace tessera::autoadmin {
namespace {

bool Lost(const std::map<uint32_t, NodeView>& nodes, uint32_t id) {
  auto it = nodes.find(id);
  return it != nodes.end() && (it->second.health == NodeHealth::kDead || it->second.draining);
}

bool Target(const NodeView& node) { return node.health == NodeHealth::kHealthy && !node.draining; }

// Rule 1 and 2: the best target for the replica of `slot_replicas` on `lost`.
std::optional<uint32_t> ChooseTarget(const blob::BlobSlotMap& map,
                                     const std::map<uint32_t, NodeView>& nodes,
                                     const std::vector<uint32_t>& slot_replicas, uint32_t lost,
                                     const std::map<uint32_t, size_t>& slots_held) {
  const std::string lost_az = map.AzOf(lost).value_or("");
  std::set<std::string> azs_kept;
  for (uint32_t r : slot_replicas) {
    if (r != lost) azs_kept.insert(map.AzOf(r).value_or(""));
  }
  std::optional<uint32_t> best;
  auto rank = [&](uint32_t id) {
    const std::string az = map.AzOf(id).value_or("");
    // Lower is better: same AZ first, then an AZ the slot does not use yet.
    const int az_rank = az == lost_az ? 0 : (azs_kept.count(az) ? 2 : 1);
    auto held = slots_held.find(id);
    return std::make_tuple(az_rank, held == slots_held.end() ? 0 : held->second, id);
  };
  for (const blob::NodeRef& ref : map.nodes()) {
    auto view = nodes.find(ref.node_id);
    if (view == nodes.end() || !Target(view->second)) continue;
    if (std::find(slot_replicas.begin(), slot_replicas.end(), ref.node_id) != slot_replicas.end()) {
      continue;
    }
    if (!best || rank(ref.node_id) < rank(*best)) best = ref.node_id;
  }
  return best;
}

}  // namespace

std::vector<pb::BlobSlotReplicas> PlanBlobSlots(const blob::BlobSlotMap& map,
                                                const std::map<uint32_t, NodeView>& nodes) {
  std::map<uint32_t, size_t> slots_held;
  for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
    for (uint32_t r : map.ReplicasOf(slot)) ++slots_held[r];
  }
  std::vector<pb::BlobSlotReplicas> changes;
  for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
    std::vector<uint32_t> replicas = map.ReplicasOf(slot);
    bool changed = false;
    for (uint32_t& r : replicas) {
      if (!Lost(nodes, r)) continue;
      const auto target = ChooseTarget(map, nodes, replicas, r, slots_held);
      if (!target) continue;
      --slots_held[r];
      ++slots_held[*target];
      r = *target;
      changed = true;
    }
    if (!changed) continue;
    std::sort(replicas.begin(), replicas.end(), [&map](uint32_t a, uint32_t b) {
      const std::string az_a = map.AzOf(a).value_or(""), az_b = map.AzOf(b).value_or("");
      return az_a != az_b ? az_a < az_b : a < b;
    });
    pb::BlobSlotReplicas& change = changes.emplace_back();
    change.set_slot(slot);
    for (uint32_t r : replicas) change.add_node_ids(r);
  }
  return changes;
}

}  // namespace tessera::autoadmin
