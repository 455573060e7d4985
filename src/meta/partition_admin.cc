#include "meta/partition_admin.h"

#include <google/protobuf/util/message_differencer.h>
#include <spdlog/spdlog.h>

#include <map>

#include "cluster/added_nodes.h"
#include "cluster/process_table.h"
#include "common/limits.h"
#include "meta/meta_group_calls.h"
#include "meta/meta_keys.h"

namespace tessera::meta {
namespace {

// A condition holding `key` at the version read (absent when not read).
void AddCondition(pb::KvBatch& batch, std::string_view key, std::optional<uint64_t> version) {
  pb::KvCondition* c = batch.add_conditions();
  c->set_key(std::string(key));
  if (version) c->set_version(*version);
  else c->set_absent(true);
}

// Writes `value` at `key` in one batch conditioned on `key` at `key_version`
// (absent when nullopt) and on the autoadmin lease record at
// `lease_version`: a fenced autoadmin write. Conflict, naming `what`, when
// either moved since it was read.
Status WriteFenced(node::GroupHost& group, const std::string& key,
                   std::optional<uint64_t> key_version, uint64_t lease_version, std::string value,
                   const std::string& what) {
  pb::KvBatch batch;
  AddCondition(batch, key, key_version);
  AddCondition(batch, kAutoadminLeaseKey, lease_version);
  pb::KvWrite* w = batch.add_writes();
  w->set_key(key);
  w->set_value(std::move(value));
  auto written = WriteSync(group, std::move(batch));
  if (!written.ok()) return written.status();
  if (!written->applied()) {
    return Status::Conflict(what + " or the autoadmin lease changed meanwhile (condition " +
                            std::to_string(written->failed_condition()) + ")");
  }
  return Status::Ok();
}

Status CheckReplicas(const pb::PartitionDescriptor& d, const std::set<uint32_t>& storage_nodes) {
  if (d.replicas_size() == 0 || static_cast<size_t>(d.replicas_size()) > limits::kGroupReplicasMax) {
    return Status::InvalidArgument("a partition needs 1.." + std::to_string(limits::kGroupReplicasMax) +
                                   " replicas");
  }
  std::set<uint32_t> seen;
  bool voter = false;
  for (const pb::ReplicaPlacement& r : d.replicas()) {
    if (!storage_nodes.count(r.node_id())) {
      return Status::InvalidArgument("replica " + std::to_string(r.node_id()) +
                                     " is not a storage node of the cluster");
    }
    if (!seen.insert(r.node_id()).second) {
      return Status::InvalidArgument("replica " + std::to_string(r.node_id()) + " named twice");
    }
    if (r.role() != pb::REPLICA_VOTER && r.role() != pb::REPLICA_LEARNER) {
      return Status::InvalidArgument("unknown replica role");
    }
    voter = voter || r.role() == pb::REPLICA_VOTER;
  }
  if (!voter) return Status::InvalidArgument("a partition needs a voter");
  return Status::Ok();
}

}  // namespace

LeaseDecision DecideLease(const std::optional<pb::AutoadminLease>& stored, uint32_t holder,
                          uint32_t duration_ms, uint64_t now_unix_ms) {
  LeaseDecision d;
  const uint64_t expiry = now_unix_ms + duration_ms;
  if (!stored) {
    d.granted = d.write = true;
    d.lease.set_holder(holder);
    d.lease.set_epoch(1);
    d.lease.set_expires_unix_ms(expiry);
    return d;
  }
  d.lease = *stored;
  if (stored->holder() == holder) {
    d.granted = d.write = true;
    d.lease.set_expires_unix_ms(std::max(expiry, stored->expires_unix_ms()));
    return d;
  }
  if (stored->expires_unix_ms() <= now_unix_ms) {
    d.granted = d.write = true;
    d.lease.set_holder(holder);
    d.lease.set_epoch(stored->epoch() + 1);
    d.lease.set_expires_unix_ms(expiry);
  }
  return d;
}

PartitionAdmin::PartitionAdmin(node::GroupHost& group, pb::ClusterLayout layout)
    : group_(group), layout_(std::move(layout)) {}

Result<std::pair<pb::BlobSlotAssignments, std::optional<uint64_t>>> PartitionAdmin::ReadNodeMap() {
  auto record = ReadStrongSync(group_, std::string(kBlobSlotsKey));
  if (!record.ok()) return record.status();
  pb::BlobSlotAssignments stored;
  if (!*record) return std::make_pair(stored, std::optional<uint64_t>());
  if (!stored.ParseFromString((*record)->value())) {
    return Status::Corruption("meta: the blob slot record does not parse");
  }
  return std::make_pair(std::move(stored), std::optional<uint64_t>((*record)->version()));
}

std::set<uint32_t> PartitionAdmin::StorageNodesOf(const pb::BlobSlotAssignments& map) const {
  std::set<uint32_t> nodes;
  for (const cluster::ProcessEntry& e : cluster::ProcessTable(layout_).OfRole(cluster::ProcessRole::kNode)) {
    nodes.insert(e.id);
  }
  for (const pb::AddedNode& added : map.added_nodes()) nodes.insert(added.id());
  return nodes;
}

Result<std::set<uint32_t>> PartitionAdmin::StorageNodes() {
  auto map = ReadNodeMap();
  if (!map.ok()) return map.status();
  return StorageNodesOf(map->first);
}

Result<pb::AddedNode> PartitionAdmin::AddNode(const pb::AddNodeRequest& request) {
  auto stored = ReadNodeMap();
  if (!stored.ok()) return stored.status();
  pb::BlobSlotAssignments& map = stored->first;
  auto next = cluster::NextAddedNode(layout_, map.added_nodes(), request.node());
  if (!next.ok()) return next.status();
  for (const pb::AddedNode& added : map.added_nodes()) {
    if (added.id() == next->id()) return next;  // added before: idempotent
  }
  *map.add_added_nodes() = *next;
  map.set_version(map.version() + 1);
  pb::KvBatch batch;
  AddCondition(batch, kBlobSlotsKey, stored->second);
  pb::KvWrite* w = batch.add_writes();
  w->set_key(std::string(kBlobSlotsKey));
  w->set_value(map.SerializeAsString());
  auto written = WriteSync(group_, std::move(batch));
  if (!written.ok()) return written.status();
  if (!written->applied()) return Status::Conflict("the storage node map changed meanwhile; retry");
  spdlog::info("meta.node_added id={} name={} az={} host={} peer_port={} map_version={}", next->id(),
               next->spec().name(), next->spec().az(), next->spec().host(), next->spec().peer_port(),
               map.version());
  return next;
}

Result<pb::PlacementWeights> PartitionAdmin::SetPlacementWeights(
    const pb::SetPlacementWeightsRequest& request, uint64_t now_unix_ms) {
  if (request.partitions().empty()) return Status::InvalidArgument("placement weights name no partition");
  if (static_cast<size_t>(request.partitions_size()) > limits::kPlacementWeightsPartitionsMax) {
    return Status::InvalidArgument("placement weights name more than " +
                                   std::to_string(limits::kPlacementWeightsPartitionsMax) + " partitions");
  }
  std::map<uint64_t, uint64_t> keys;  // group id -> keys, ascending
  for (const pb::PartitionKeys& p : request.partitions()) {
    if (p.group_id() == 0) return Status::InvalidArgument("placement weights name group 0");
    if (!keys.emplace(p.group_id(), p.keys()).second) {
      return Status::InvalidArgument("placement weights name group " + std::to_string(p.group_id()) +
                                     " twice");
    }
  }
  auto lease_version = CheckEpoch(request.autoadmin_epoch(), "placement_weights");
  if (!lease_version.ok()) return lease_version.status();
  auto stored = ReadStrongSync(group_, std::string(kPlacementWeightsKey));
  if (!stored.ok()) return stored.status();
  pb::PlacementWeights next;
  for (const auto& [group, count] : keys) {
    pb::PartitionKeys* p = next.add_partitions();
    p->set_group_id(group);
    p->set_keys(count);
  }
  next.set_written_unix_ms(now_unix_ms);
  next.set_autoadmin_epoch(request.autoadmin_epoch());
  const std::optional<uint64_t> version =
      *stored ? std::optional<uint64_t>((*stored)->version()) : std::nullopt;
  TESSERA_RETURN_IF_ERROR(WriteFenced(group_, std::string(kPlacementWeightsKey), version, *lease_version,
                                      next.SerializeAsString(), "the placement weights"));
  spdlog::debug("meta.placement_weights_set partitions={} autoadmin_epoch={}", next.partitions_size(),
                request.autoadmin_epoch());
  return next;
}

Result<std::optional<std::pair<pb::AutoadminLease, uint64_t>>> PartitionAdmin::ReadLease() {
  auto record = ReadStrongSync(group_, std::string(kAutoadminLeaseKey));
  if (!record.ok()) return record.status();
  if (!*record) return std::optional<std::pair<pb::AutoadminLease, uint64_t>>();
  pb::AutoadminLease lease;
  if (!lease.ParseFromString((*record)->value())) {
    return Status::Corruption("meta: the autoadmin lease record does not parse");
  }
  return std::optional<std::pair<pb::AutoadminLease, uint64_t>>(
      std::make_pair(std::move(lease), (*record)->version()));
}

Result<pb::AutoadminLeaseResponse> PartitionAdmin::Lease(const pb::AutoadminLeaseRequest& request,
                                                         uint64_t now_unix_ms) {
  if (request.holder() == 0) return Status::InvalidArgument("autoadmin lease: holder is 0");
  if (request.duration_ms() < limits::kAutoadminLeaseMsMin ||
      request.duration_ms() > limits::kAutoadminLeaseMsMax) {
    return Status::InvalidArgument("autoadmin lease: duration_ms must be " +
                                   std::to_string(limits::kAutoadminLeaseMsMin) + ".." +
                                   std::to_string(limits::kAutoadminLeaseMsMax));
  }
  auto stored = ReadLease();
  if (!stored.ok()) return stored.status();
  std::optional<pb::AutoadminLease> lease;
  std::optional<uint64_t> version;
  if (*stored) {
    lease = (*stored)->first;
    version = (*stored)->second;
  }
  const LeaseDecision d = DecideLease(lease, request.holder(), request.duration_ms(), now_unix_ms);
  pb::AutoadminLeaseResponse response;
  response.set_granted(d.granted);
  *response.mutable_lease() = d.lease;
  if (!d.write) return response;
  pb::KvBatch batch;
  AddCondition(batch, kAutoadminLeaseKey, version);
  pb::KvWrite* w = batch.add_writes();
  w->set_key(std::string(kAutoadminLeaseKey));
  w->set_value(d.lease.SerializeAsString());
  auto written = WriteSync(group_, std::move(batch));
  if (!written.ok()) return written.status();
  if (!written->applied()) return Status::Conflict("autoadmin lease changed meanwhile");
  if (!lease || lease->epoch() != d.lease.epoch()) {
    spdlog::info("meta.autoadmin_lease_granted holder={} epoch={}", d.lease.holder(),
                 d.lease.epoch());
  }
  return response;
}

Result<pb::UpdatePartitionResponse> PartitionAdmin::UpdatePartition(
    const pb::UpdatePartitionRequest& request) {
  const pb::PartitionDescriptor& next = request.partition();
  auto storage_nodes = StorageNodes();
  if (!storage_nodes.ok()) return storage_nodes.status();
  TESSERA_RETURN_IF_ERROR(CheckReplicas(next, *storage_nodes));
  const std::string key = PartitionKey(next.table(), next.start_key());
  auto record = ReadStrongSync(group_, key);
  if (!record.ok()) return record.status();
  if (!*record) {
    return Status::NotFound("no partition of table '" + next.table() + "' starts at that key");
  }
  pb::PartitionDescriptor stored;
  if (!stored.ParseFromString((*record)->value())) {
    return Status::Corruption("meta: stored descriptor of group does not parse");
  }
  pb::UpdatePartitionResponse response;
  if (google::protobuf::util::MessageDifferencer::Equals(stored, next)) {
    *response.mutable_partition() = stored;
    return response;
  }
  if (stored.group_id() != next.group_id() || stored.end_key() != next.end_key()) {
    return Status::InvalidArgument("update of group " + std::to_string(next.group_id()) +
                                   " may not change its range or group id");
  }
  if (next.epoch() != stored.epoch() + 1) {
    return Status::Conflict("partition of group " + std::to_string(stored.group_id()) +
                            " is at epoch " + std::to_string(stored.epoch()) + ", not " +
                            std::to_string(next.epoch() - 1));
  }
  auto lease_version = CheckEpoch(request.autoadmin_epoch(), "group=" + std::to_string(next.group_id()));
  if (!lease_version.ok()) return lease_version.status();
  TESSERA_RETURN_IF_ERROR(WriteFenced(group_, key, (*record)->version(), *lease_version,
                                      next.SerializeAsString(), "the partition"));
  spdlog::info("meta.partition_updated group={} epoch={} replicas={} autoadmin_epoch={}",
               next.group_id(), next.epoch(), next.replicas_size(), request.autoadmin_epoch());
  *response.mutable_partition() = next;
  return response;
}

Result<uint64_t> PartitionAdmin::CheckEpoch(uint64_t autoadmin_epoch, const std::string& what) {
  auto lease = ReadLease();
  if (!lease.ok()) return lease.status();
  if (*lease && (*lease)->first.epoch() == autoadmin_epoch) return (*lease)->second;
  const uint64_t current = *lease ? (*lease)->first.epoch() : 0;
  spdlog::warn("meta.autoadmin_stale_epoch {} epoch={} lease_epoch={}", what, autoadmin_epoch, current);
  return Status(StatusCode::kStaleEpoch, "autoadmin epoch " + std::to_string(autoadmin_epoch) +
                                             " is not the lease's (" + std::to_string(current) + ")");
}

Result<pb::BlobSlotAssignments> PartitionAdmin::UpdateBlobSlots(
    const pb::UpdateBlobSlotsRequest& request) {
  if (request.slots().empty()) return Status::InvalidArgument("no blob slot to update");
  auto read = ReadNodeMap();
  if (!read.ok()) return read.status();
  const pb::BlobSlotAssignments& stored = read->first;
  const std::set<uint32_t> storage_nodes = StorageNodesOf(stored);
  std::map<uint32_t, pb::BlobSlotReplicas> changes;
  for (const pb::BlobSlotReplicas& r : request.slots()) {
    const std::string slot = "blob slot " + std::to_string(r.slot());
    if (r.slot() >= limits::kBlobSlots) return Status::InvalidArgument(slot + " does not exist");
    if (r.node_ids().empty() || r.node_ids_size() > 3) {
      return Status::InvalidArgument(slot + " needs 1..3 replicas");
    }
    std::set<uint32_t> seen;
    for (uint32_t node : r.node_ids()) {
      if (!storage_nodes.count(node)) {
        return Status::InvalidArgument(slot + ": " + std::to_string(node) + " is not a storage node");
      }
      if (!seen.insert(node).second) return Status::InvalidArgument(slot + " names a node twice");
    }
    if (!changes.emplace(r.slot(), r).second) return Status::InvalidArgument(slot + " named twice");
  }
  if (stored.version() != request.expected_version()) {
    return Status::Conflict("blob slot assignments are at version " + std::to_string(stored.version()) +
                            ", not " + std::to_string(request.expected_version()));
  }
  auto lease_version = CheckEpoch(request.autoadmin_epoch(), "blob_slots");
  if (!lease_version.ok()) return lease_version.status();
  for (const pb::BlobSlotReplicas& r : stored.slots()) changes.emplace(r.slot(), r);  // kept
  pb::BlobSlotAssignments next;
  next.set_version(stored.version() + 1);
  for (auto& [slot, r] : changes) *next.add_slots() = std::move(r);
  *next.mutable_added_nodes() = stored.added_nodes();
  TESSERA_RETURN_IF_ERROR(WriteFenced(group_, std::string(kBlobSlotsKey), read->second, *lease_version,
                                      next.SerializeAsString(), "the blob slot assignments"));
  spdlog::info("meta.blob_slots_updated version={} slots_changed={} assigned={} autoadmin_epoch={}",
               next.version(), request.slots_size(), next.slots_size(), request.autoadmin_epoch());
  return next;
}

Result<std::pair<pb::NodeDrains, std::optional<uint64_t>>> PartitionAdmin::ReadDrains() {
  auto record = ReadStrongSync(group_, std::string(kNodeDrainsKey));
  if (!record.ok()) return record.status();
  pb::NodeDrains drains;
  if (!*record) return std::make_pair(drains, std::optional<uint64_t>());
  if (!drains.ParseFromString((*record)->value())) {
    return Status::Corruption("meta: the drained-node record does not parse");
  }
  return std::make_pair(drains, std::optional<uint64_t>((*record)->version()));
}

Result<pb::NodeDrains> PartitionAdmin::Drains() {
  auto drains = ReadDrains();
  if (!drains.ok()) return drains.status();
  return drains->first;
}

Result<pb::NodeDrains> PartitionAdmin::SetDrain(const pb::SetDrainRequest& request) {
  auto storage_nodes = StorageNodes();
  if (!storage_nodes.ok()) return storage_nodes.status();
  if (!storage_nodes->count(request.node_id())) {
    return Status::InvalidArgument("node " + std::to_string(request.node_id()) +
                                   " is not a storage node of the cluster");
  }
  auto stored = ReadDrains();
  if (!stored.ok()) return stored.status();
  std::set<uint32_t> nodes(stored->first.nodes().begin(), stored->first.nodes().end());
  const bool changed = request.drain() ? nodes.insert(request.node_id()).second
                                       : nodes.erase(request.node_id()) > 0;
  pb::NodeDrains next;
  for (uint32_t n : nodes) next.add_nodes(n);
  if (!changed) return next;
  pb::KvBatch batch;
  AddCondition(batch, kNodeDrainsKey, stored->second);
  pb::KvWrite* w = batch.add_writes();
  w->set_key(std::string(kNodeDrainsKey));
  w->set_value(next.SerializeAsString());
  auto written = WriteSync(group_, std::move(batch));
  if (!written.ok()) return written.status();
  if (!written->applied()) return Status::Conflict("the drained set changed meanwhile; retry");
  spdlog::info("meta.node_drain node={} drain={} drained={}", request.node_id(), request.drain(),
               next.nodes_size());
  return next;
}

}  // namespace tessera::meta
