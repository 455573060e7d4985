// PartitionAdmin: the meta service's side of the autoadmin
// (docs/autoadmin.md): the autoadmin lease and partition descriptor updates,
// both in the meta group's KV state (docs/formats/meta-keys.md, "a/lease"
// and "p/").
//
//   meta.autoadmin_lease    grant or renew the lease (DecideLease); every
//                           answer that grants writes the record, so the
//                           meta group's log orders every grant and renewal
//   meta.update_partition   replace one descriptor (UpdatePartition), fenced
//                           by the lease epoch
//   meta.split_partition    reserve, commit or abandon a partition split
//                           (SplitPartition, partition_split.cc), fenced by
//                           the lease epoch
//   meta.update_blob_slots  move blob slots to other replicas
//                           (UpdateBlobSlots), fenced by the lease epoch
//   meta.set_drain          add a storage node to (or remove it from) the
//                           drained set (SetDrain); meta.drains reads it
//   meta.add_node           add a storage node beyond the layout to the
//                           storage node map (AddNode; cluster/added_nodes.h)
//   meta.set_placement_weights  the `_s3` partitions' keys for bucket
//                           placement (SetPlacementWeights), fenced by the
//                           lease epoch
//
// The storage nodes a descriptor, a slot or a drain may name are the
// layout's and those the storage node map ("a/blob_slots") has added.
//
// Both run on the meta worker thread (a strong read, then one conditional
// batch whose conditions hold the records at the versions read, so two
// callers racing cannot both win). A follower answers NotLeader; the meta
// service forwards those to the leader.
//
// Thread safety: the member functions block on the meta group; call them
// from a worker thread, never an io thread. DecideLease is pure.
#pragma once

#include <cstdint>
#include <optional>
#include <set>

#include "common/result.h"
#include "node/group_host.h"
#include "tessera/cluster.pb.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::meta {

struct LeaseDecision {
  bool granted = false;
  pb::AutoadminLease lease;  // the record as it stands after the decision
  bool write = false;        // the record must be written (granted)
};

// Contract: no stored lease -> granted at epoch 1; stored holder == holder ->
// renewed (same epoch, expiry now + duration); another holder whose expiry
// has passed -> taken over at epoch + 1; otherwise not granted and the
// stored lease is answered.
LeaseDecision DecideLease(const std::optional<pb::AutoadminLease>& stored, uint32_t holder,
                          uint32_t duration_ms, uint64_t now_unix_ms);

class PartitionAdmin {
 public:
  // `group` is the meta group (outlives this); `layout` the cluster's.
  PartitionAdmin(node::GroupHost& group, pb::ClusterLayout layout);

  // InvalidArgument for holder 0 or a duration outside
  // limits::kAutoadminLeaseMs{Min,Max}; Conflict when another meta write of
  // the record won the race; the group's errors (NotLeader with hint).
  Result<pb::AutoadminLeaseResponse> Lease(const pb::AutoadminLeaseRequest& request,
                                           uint64_t now_unix_ms);

  // See cluster_rpc.proto, UpdatePartitionRequest. InvalidArgument for a
  // descriptor that changes table, range or group id, or names replicas
  // that are not distinct storage nodes (1..kGroupReplicasMax, at least one
  // voter); NotFound for an unknown partition; Conflict when the stored
  // epoch is not one below the request's; StaleEpoch when autoadmin_epoch
  // is not the lease's.
  Result<pb::UpdatePartitionResponse> UpdatePartition(const pb::UpdatePartitionRequest& request);

  // See cluster_rpc.proto, SplitPartitionRequest. NotFound when the parent
  // group does not start at parent_start_key (or, on commit, when no such
  // split was reserved and none is done); InvalidArgument for a split key
  // not strictly inside the parent's range, or inside one object's records
  // for `_s3` (node/split_key.h); Conflict when the parent's epoch is not
  // parent_epoch (reserve) or changed since the reserve (commit), when
  // another split of the parent is reserved, or when a record moved
  // meanwhile; StaleEpoch as UpdatePartition.
  Result<pb::SplitPartitionResponse> SplitPartition(const pb::SplitPartitionRequest& request);

  // See cluster_rpc.proto, RequestSplitRequest. `holder` is the partition
  // of the table holding request.key as the caller's MemDs sees it; it is
  // checked against the stored descriptor (Conflict when the map moved).
  Result<pb::SplitRequestRecord> RequestSplit(const pb::RequestSplitRequest& request,
                                              const pb::PartitionDescriptor& holder);
  // The split intents and requested splits (strong reads), at most
  // limits::kSplitIntentsListedMax and kSplitRequestsMax.
  Result<pb::SplitsResponse> Splits();

  // See cluster_rpc.proto, UpdateBlobSlotsRequest: the stored assignments
  // after the change (version + 1). InvalidArgument for no slot, a slot >=
  // limits::kBlobSlots or named twice, or replicas that are not 1..3
  // distinct storage nodes; Conflict when the stored version is not
  // expected_version (or the record moved meanwhile); StaleEpoch as
  // UpdatePartition.
  Result<pb::BlobSlotAssignments> UpdateBlobSlots(const pb::UpdateBlobSlotsRequest& request);

  // The drained set after the change (idempotent). InvalidArgument for a
  // node id that is not a storage node; Conflict when another write of the
  // set won the race.
  Result<pb::NodeDrains> SetDrain(const pb::SetDrainRequest& request);
  // A strong read of the drained set (empty when never written).
  Result<pb::NodeDrains> Drains();

  // The added node (cluster::NextAddedNode: the one added before under the
  // same spec, or the next id), recorded in the storage node map with its
  // version + 1 in one conditional write. InvalidArgument for a node that
  // does not fit the layout and the nodes added before; Conflict when the
  // map changed meanwhile.
  Result<pb::AddedNode> AddNode(const pb::AddNodeRequest& request);

  // See cluster_rpc.proto, SetPlacementWeightsRequest: writes
  // a/placement_weights (partitions by ascending group id, written_unix_ms
  // = now_unix_ms) in one batch conditioned on the record's version read
  // and the lease; answers the record. Conflict when either moved meanwhile.
  Result<pb::PlacementWeights> SetPlacementWeights(const pb::SetPlacementWeightsRequest& request,
                                                   uint64_t now_unix_ms);

 private:
  Result<std::optional<std::pair<pb::AutoadminLease, uint64_t>>> ReadLease();
  // The records a split step reads (strongly): the parent's descriptor and
  // the intent, with their versions.
  struct SplitRecords {
    std::string parent_key;
    std::string intent_key;
    std::optional<pb::KvRecord> parent_record;
    std::optional<pb::KvRecord> intent_record;
    pb::PartitionDescriptor parent;
    pb::SplitPartitionResponse intent;
    std::string request_key;  // the parent's requested split, if any
    std::optional<pb::KvRecord> request_record;
  };
  Result<SplitRecords> ReadSplitRecords(const pb::SplitPartitionRequest& request);
  Result<pb::SplitPartitionResponse> ReserveSplit(const pb::SplitPartitionRequest& request,
                                                  const SplitRecords& records);
  Result<pb::SplitPartitionResponse> CommitSplit(const pb::SplitPartitionRequest& request,
                                                 const SplitRecords& records);
  // Deletes the parent's requested split (if read) in `batch`, conditioned
  // on its version.
  static void DropRequest(pb::KvBatch& batch, const SplitRecords& records);
  Result<pb::SplitPartitionResponse> AbandonSplit(const pb::SplitPartitionRequest& request,
                                                  const SplitRecords& records);
  // The lease record's version when `autoadmin_epoch` is the lease's epoch;
  // StaleEpoch (logged, naming `what`) otherwise.
  Result<uint64_t> CheckEpoch(uint64_t autoadmin_epoch, const std::string& what);
  // The storage node map ("a/blob_slots") and its record's version
  // (nullopt: never written), by a strong read.
  Result<std::pair<pb::BlobSlotAssignments, std::optional<uint64_t>>> ReadNodeMap();
  std::set<uint32_t> StorageNodesOf(const pb::BlobSlotAssignments& map) const;
  Result<std::set<uint32_t>> StorageNodes();
  // The drained set and its record's version (nullopt: never written).
  Result<std::pair<pb::NodeDrains, std::optional<uint64_t>>> ReadDrains();

  node::GroupHost& group_;
  const pb::ClusterLayout layout_;
};

}  // namespace tessera::meta
