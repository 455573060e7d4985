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

// Rules 1, 2 and 4: the best target for the replica of `slot_replicas` on
// `lost`: its own AZ when no other replica of the slot uses it, then an AZ
// the slot does not use, then any other.
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
    // Lower is better: its own AZ (when the slot keeps none there), then an
    // AZ the slot does not use yet, then the rest.
    const int az_rank = azs_kept.count(az) ? 2 : (az == lost_az ? 0 : 1);
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

// Rule 4: of two replicas sharing an AZ, the one on the node holding more
// slots (ties: the higher id); nullopt when every replica has its own AZ.
std::optional<uint32_t> Doubled(const blob::BlobSlotMap& map, const std::vector<uint32_t>& replicas,
                                const std::map<uint32_t, size_t>& slots_held) {
  for (size_t i = 0; i < replicas.size(); ++i) {
    for (size_t j = i + 1; j < replicas.size(); ++j) {
      if (map.AzOf(replicas[i]) != map.AzOf(replicas[j])) continue;
      auto held = [&](uint32_t id) {
        auto it = slots_held.find(id);
        return std::make_pair(it == slots_held.end() ? size_t{0} : it->second, id);
      };
      return held(replicas[i]) > held(replicas[j]) ? replicas[i] : replicas[j];
    }
  }
  return std::nullopt;
}

// Rule 5's condition: every replica of every slot is on a node that answers
// and is not lost.
bool NothingToRepair(const blob::BlobSlotMap& map, const std::map<uint32_t, NodeView>& nodes) {
  for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
    for (uint32_t r : map.ReplicasOf(slot)) {
      auto it = nodes.find(r);
      if (it != nodes.end() && (Lost(nodes, r) || !Answered(it->second.health))) return false;
    }
  }
  return true;
}

// Rule 5: the emptiest healthy, not draining node of `from`'s AZ not holding
// the slot, when it holds at least two slots fewer than `from`.
std::optional<uint32_t> SpreadTarget(const blob::BlobSlotMap& map,
                                     const std::map<uint32_t, NodeView>& nodes,
                                     const std::vector<uint32_t>& replicas, uint32_t from,
                                     const std::map<uint32_t, size_t>& slots_held) {
  auto held = [&](uint32_t id) {
    auto it = slots_held.find(id);
    return it == slots_held.end() ? size_t{0} : it->second;
  };
  std::optional<std::pair<size_t, uint32_t>> best;
  for (const blob::NodeRef& ref : map.nodes()) {
    auto view = nodes.find(ref.node_id);
    if (view == nodes.end() || !Target(view->second) || map.AzOf(ref.node_id) != map.AzOf(from) ||
        std::find(replicas.begin(), replicas.end(), ref.node_id) != replicas.end() ||
        held(ref.node_id) + 2 > held(from)) {
      continue;
    }
    const auto rank = std::make_pair(held(ref.node_id), ref.node_id);
    if (!best || rank < *best) best = rank;
  }
  if (!best) return std::nullopt;
  return best->second;
}

bool IsUnusedAz(const blob::BlobSlotMap& map, const std::vector<uint32_t>& replicas, uint32_t node) {
  const auto az = map.AzOf(node);
  return std::none_of(replicas.begin(), replicas.end(),
                      [&](uint32_t r) { return map.AzOf(r) == az; });
}

}  // namespace

std::vector<pb::BlobSlotReplicas> PlanBlobSlots(const blob::BlobSlotMap& map,
                                                const std::map<uint32_t, NodeView>& nodes) {
  std::map<uint32_t, size_t> slots_held;
  for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
    for (uint32_t r : map.ReplicasOf(slot)) ++slots_held[r];
  }
  std::vector<pb::BlobSlotReplicas> changes;
  size_t spread_budget = NothingToRepair(map, nodes) ? kSpreadSlotsPerRound : 0;
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
    if (auto doubled = Doubled(map, replicas, slots_held)) {
      if (auto target = ChooseTarget(map, nodes, replicas, *doubled, slots_held);
          target && IsUnusedAz(map, replicas, *target)) {
        --slots_held[*doubled];
        ++slots_held[*target];
        *std::find(replicas.begin(), replicas.end(), *doubled) = *target;
        changed = true;
      }
    }
    for (uint32_t& r : replicas) {
      if (changed || spread_budget == 0) break;
      if (auto target = SpreadTarget(map, nodes, replicas, r, slots_held)) {
        --slots_held[r];
        ++slots_held[*target];
        r = *target;
        changed = true;
        --spread_budget;
      }
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
