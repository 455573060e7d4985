#include "blob/blob_slot_map.h"

#include <algorithm>
#include <unordered_set>

#include "common/check.h"
#include "common/limits.h"
#include "common/splitmix64.h"

namespace tessera::blob {
namespace {

constexpr size_t kReplicasMax = 3;

// The nodes grouped by AZ: AZs in name order, each AZ's node ids ascending
// (`sorted` is sorted by (az, node_id)).
std::vector<std::vector<uint32_t>> GroupByAz(const std::vector<NodeRef>& sorted) {
  std::vector<std::vector<uint32_t>> azs;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i == 0 || sorted[i].az != sorted[i - 1].az) azs.emplace_back();
    azs.back().push_back(sorted[i].node_id);
  }
  return azs;
}

// A fixed pseudo-random function of (AZ index, round). Part of the
// placement: it must never change (blob_slot_map_test pins it).
uint64_t RoundShift(uint64_t az, uint64_t round) { return SplitMix64Hash(az << 32 | round); }

// Contract 2: slot s uses AZs s, s+1, s+2 (mod A); within AZ a (n nodes) the
// c-th slot using it gets node (c + RoundShift(a, c / n)) mod n: round robin
// over the AZ's nodes (each round of n slots covers every node once),
// rotated by a pseudo-random amount per AZ and round, so that which nodes
// share slots varies (a node's slots spread over the other AZs' nodes).
std::vector<std::vector<uint32_t>> PlaceOnePerAz(const std::vector<std::vector<uint32_t>>& azs) {
  const size_t az_count = azs.size();
  std::vector<size_t> used(az_count, 0);
  std::vector<std::vector<uint32_t>> replicas(limits::kBlobSlots);
  for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
    for (size_t j = 0; j < kReplicasMax; ++j) {
      const size_t a = (slot + j) % az_count;
      const size_t n = azs[a].size();
      const size_t c = used[a]++;
      replicas[slot].push_back(azs[a][(c + RoundShift(a, c / n)) % n]);
    }
  }
  return replicas;
}

// Contract 3: the nodes interleaved across AZs (first node of each AZ, then
// the second of each, ...); slot s takes positions 3s, 3s+1, 3s+2 mod N.
std::vector<std::vector<uint32_t>> PlaceInterleaved(const std::vector<std::vector<uint32_t>>& azs,
                                                    size_t node_count) {
  std::vector<uint32_t> order;
  for (size_t round = 0; order.size() < node_count; ++round) {
    for (const auto& az : azs) {
      if (round < az.size()) order.push_back(az[round]);
    }
  }
  const size_t per_slot = std::min(kReplicasMax, node_count);
  std::vector<std::vector<uint32_t>> replicas(limits::kBlobSlots);
  for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
    for (size_t k = 0; k < per_slot; ++k) {
      replicas[slot].push_back(order[(size_t{slot} * kReplicasMax + k) % node_count]);
    }
  }
  return replicas;
}

}  // namespace

Result<BlobSlotMap> BlobSlotMap::Build(std::vector<NodeRef> nodes) {
  if (nodes.empty()) return Status::InvalidArgument("blob slot map: no storage nodes");
  std::unordered_set<uint32_t> ids;
  for (const NodeRef& node : nodes) {
    if (node.node_id == 0) return Status::InvalidArgument("blob slot map: node id 0");
    if (node.az.empty()) {
      return Status::InvalidArgument("blob slot map: node " + std::to_string(node.node_id) + " has no AZ");
    }
    if (!ids.insert(node.node_id).second) {
      return Status::InvalidArgument("blob slot map: duplicate node id " + std::to_string(node.node_id));
    }
  }
  std::sort(nodes.begin(), nodes.end(), [](const NodeRef& a, const NodeRef& b) {
    return a.az != b.az ? a.az < b.az : a.node_id < b.node_id;
  });
  BlobSlotMap map;
  const std::vector<std::vector<uint32_t>> azs = GroupByAz(nodes);
  map.replicas_ = azs.size() >= kReplicasMax ? PlaceOnePerAz(azs) : PlaceInterleaved(azs, nodes.size());
  std::unordered_map<uint32_t, size_t> rank;  // position in the sorted node list
  for (size_t i = 0; i < nodes.size(); ++i) rank[nodes[i].node_id] = i;
  for (std::vector<uint32_t>& r : map.replicas_) {
    std::sort(r.begin(), r.end(), [&rank](uint32_t a, uint32_t b) { return rank[a] < rank[b]; });
    TESSERA_CHECK(std::adjacent_find(r.begin(), r.end()) == r.end());
  }
  for (const NodeRef& node : nodes) map.az_of_[node.node_id] = node.az;
  map.replicas_per_slot_ = std::min(kReplicasMax, nodes.size());
  map.nodes_ = std::move(nodes);
  return map;
}

Result<BlobSlotMap> BlobSlotMap::WithAssignments(const pb::BlobSlotAssignments& assignments) const {
  BlobSlotMap map = *this;
  for (const pb::AddedNode& added : assignments.added_nodes()) {
    const std::string& az = added.spec().az();
    if (added.id() == 0 || az.empty()) {
      return Status::InvalidArgument("added storage node " + std::to_string(added.id()) +
                                     " has no id or no AZ");
    }
    if (!map.az_of_.emplace(added.id(), az).second) {
      return Status::InvalidArgument("added storage node " + std::to_string(added.id()) +
                                     " is in the map already");
    }
    map.nodes_.push_back(NodeRef{added.id(), az});
  }
  std::sort(map.nodes_.begin(), map.nodes_.end(), [](const NodeRef& a, const NodeRef& b) {
    return a.az != b.az ? a.az < b.az : a.node_id < b.node_id;
  });
  std::unordered_map<uint32_t, size_t> rank;  // contract 4's order
  for (size_t i = 0; i < map.nodes_.size(); ++i) rank[map.nodes_[i].node_id] = i;
  std::vector<bool> seen(limits::kBlobSlots, false);
  for (const pb::BlobSlotReplicas& assigned : assignments.slots()) {
    const std::string slot = "blob slot " + std::to_string(assigned.slot());
    if (assigned.slot() >= limits::kBlobSlots) return Status::InvalidArgument(slot + " does not exist");
    if (seen[assigned.slot()]) return Status::InvalidArgument(slot + " assigned twice");
    seen[assigned.slot()] = true;
    if (static_cast<size_t>(assigned.node_ids_size()) != replicas_per_slot_) {
      return Status::InvalidArgument(slot + " needs " + std::to_string(replicas_per_slot_) +
                                     " replicas");
    }
    std::vector<uint32_t> replicas(assigned.node_ids().begin(), assigned.node_ids().end());
    for (uint32_t node : replicas) {
      if (!rank.count(node)) {
        return Status::InvalidArgument(slot + ": node " + std::to_string(node) +
                                       " is not a storage node of the map");
      }
    }
    std::sort(replicas.begin(), replicas.end(), [&rank](uint32_t a, uint32_t b) { return rank[a] < rank[b]; });
    if (std::adjacent_find(replicas.begin(), replicas.end()) != replicas.end()) {
      return Status::InvalidArgument(slot + " names a node twice");
    }
    map.replicas_[assigned.slot()] = std::move(replicas);
  }
  map.version_ = assignments.version();
  return map;
}

const std::vector<uint32_t>& BlobSlotMap::ReplicasOf(uint32_t slot) const {
  TESSERA_CHECK(slot < replicas_.size());
  return replicas_[slot];
}

std::optional<std::string> BlobSlotMap::AzOf(uint32_t node_id) const {
  const auto it = az_of_.find(node_id);
  if (it == az_of_.end()) return std::nullopt;
  return it->second;
}

std::vector<uint32_t> BlobSlotMap::SlotsOf(uint32_t node_id) const {
  std::vector<uint32_t> slots;
  for (uint32_t slot = 0; slot < replicas_.size(); ++slot) {
    const std::vector<uint32_t>& r = replicas_[slot];
    if (std::find(r.begin(), r.end(), node_id) != r.end()) slots.push_back(slot);
  }
  return slots;
}

}  // namespace tessera::blob
