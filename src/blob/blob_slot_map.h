// BlobSlotMap: which storage nodes hold the blobs of each blob slot
// (docs/formats/blobs.md, "Slot map"). Every router and node builds the same
// map from the same node list (the cluster layout's storage nodes), so a
// blob's nodes follow from its id alone.
//
// Contract:
//  1. Build is deterministic in the *set* of nodes: the input order does not
//     matter (nodes are sorted by AZ, then node id).
//  2. With three or more AZs every slot has three replicas in three distinct
//     AZs. The AZs a slot uses rotate with the slot (with exactly three AZs,
//     every slot uses all three); within an AZ, slots go to its nodes round
//     robin, so every node of an AZ holds the same number of slots (+-1).
//  3. With fewer than three AZs every slot has min(3, nodes) distinct
//     replicas: the nodes are interleaved across the AZs and slot s takes
//     three consecutive nodes of that order starting at 3s, so every node
//     holds the same number of slots (+-1) and a slot spans both AZs when
//     there are two (unless one AZ has far fewer nodes).
//  4. ReplicasOf lists a slot's replicas in (az, node id) order; readers
//     choose among them (BlobClient: same AZ first).
//  5. The layout's map is version 0. WithAssignments gives the map with the
//     autoadmin's assignments (meta key "a/blob_slots") applied: the named
//     slots take the named replicas, every other slot keeps its own; the
//     result carries the assignments' version. The storage nodes added to
//     the cluster (assignments.added_nodes) join the map's nodes; the
//     layout's slots keep their replicas, so only assigned slots name them.
//
// Thread safety: immutable after Build; copyable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::blob {

struct NodeRef {
  uint32_t node_id = 0;  // not 0
  std::string az;        // not empty
};

class BlobSlotMap {
 public:
  // InvalidArgument for an empty list, a node id 0, an empty AZ, or a
  // duplicate node id.
  static Result<BlobSlotMap> Build(std::vector<NodeRef> nodes);

  // This map with `assignments` applied (contract 5). InvalidArgument, the
  // slot named, for a slot >= limits::kBlobSlots or named twice, a node not
  // in this map, a node named twice, or a replica count other than
  // replicas_per_slot().
  Result<BlobSlotMap> WithAssignments(const pb::BlobSlotAssignments& assignments) const;

  // The replicas (node ids) of `slot` (CHECKed < limits::kBlobSlots):
  // replicas_per_slot() distinct nodes.
  const std::vector<uint32_t>& ReplicasOf(uint32_t slot) const;

  // The AZ of `node_id`; nullopt for a node not in the map.
  std::optional<std::string> AzOf(uint32_t node_id) const;

  // The slots whose replicas include `node_id`, ascending (for a repairer).
  std::vector<uint32_t> SlotsOf(uint32_t node_id) const;

  // min(3, number of nodes).
  size_t replicas_per_slot() const { return replicas_per_slot_; }
  // 0 for the layout's map, else the applied assignments' version.
  uint64_t version() const { return version_; }
  // The nodes, sorted by (az, node_id).
  const std::vector<NodeRef>& nodes() const { return nodes_; }

 private:
  BlobSlotMap() = default;

  std::vector<NodeRef> nodes_;
  std::unordered_map<uint32_t, std::string> az_of_;
  std::vector<std::vector<uint32_t>> replicas_;  // per slot
  size_t replicas_per_slot_ = 0;
  uint64_t version_ = 0;
};

}  // namespace tessera::blob
