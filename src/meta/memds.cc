#include "meta/memds.h"

#include <mutex>

#include "meta/meta_keys.h"

namespace tessera::meta {

Status MemDs::ApplyChange(const KeyChange& change, Tables_& tables) {
  if (auto name = ParseTableKey(change.key)) {
    if (!change.value) {
      tables[*name].descriptor.reset();
    } else {
      pb::TableDescriptor d;
      if (!d.ParseFromString(*change.value)) {
        return Status::Corruption("meta key t/" + *name + ": bad TableDescriptor");
      }
      tables[*name].descriptor = std::move(d);
    }
  } else if (auto part = ParsePartitionKey(change.key)) {
    auto& partitions = tables[part->first].partitions;
    if (!change.value) {
      partitions.erase(part->second);
    } else {
      pb::PartitionDescriptor d;
      if (!d.ParseFromString(*change.value) || d.table() != part->first ||
          d.start_key() != part->second) {
        return Status::Corruption("meta key p/" + part->first + ": bad PartitionDescriptor");
      }
      partitions[part->second] = std::move(d);
    }
  } else {
    return Status::Ok();  // counters and future prefixes
  }
  return Status::Ok();
}

Result<std::optional<pb::BlobSlotAssignments>> MemDs::BlobSlotsChange(
    const std::vector<KeyChange>& changes) {
  std::optional<pb::BlobSlotAssignments> result;
  for (const KeyChange& c : changes) {
    if (c.key != kBlobSlotsKey) continue;
    result.emplace();
    if (c.value && !result->ParseFromString(*c.value)) {
      return Status::Corruption("meta key a/blob_slots: bad BlobSlotAssignments");
    }
  }
  return result;
}

Status MemDs::Reset(const std::vector<KeyChange>& state, uint64_t version) {
  Tables_ fresh;
  for (const KeyChange& c : state) TESSERA_RETURN_IF_ERROR(ApplyChange(c, fresh));
  auto slots = BlobSlotsChange(state);
  if (!slots.ok()) return slots.status();
  std::unique_lock lock(mu_);
  tables_ = std::move(fresh);
  blob_slots_ = slots->value_or(pb::BlobSlotAssignments());
  version_ = version;
  return Status::Ok();
}

Status MemDs::Update(const std::vector<KeyChange>& changes, uint64_t version) {
  auto slots = BlobSlotsChange(changes);
  if (!slots.ok()) return slots.status();
  std::unique_lock lock(mu_);
  // All or nothing: stage on a copy of the touched tables only.
  Tables_ staged;
  for (const KeyChange& c : changes) {
    std::string table;
    if (auto t = ParseTableKey(c.key)) table = *t;
    else if (auto p = ParsePartitionKey(c.key)) table = p->first;
    else continue;
    if (!staged.count(table)) {
      auto it = tables_.find(table);
      staged[table] = it == tables_.end() ? TableEntry{} : it->second;
    }
  }
  for (const KeyChange& c : changes) TESSERA_RETURN_IF_ERROR(ApplyChange(c, staged));
  for (auto& [name, entry] : staged) {
    if (!entry.descriptor && entry.partitions.empty()) tables_.erase(name);
    else tables_[name] = std::move(entry);
  }
  if (*slots) blob_slots_ = std::move(**slots);
  if (version > version_) version_ = version;
  return Status::Ok();
}

pb::BlobSlotAssignments MemDs::BlobSlots() const {
  std::shared_lock lock(mu_);
  return blob_slots_;
}

Result<pb::LookupResponse> MemDs::Lookup(const std::string& table, const std::string& key) const {
  std::shared_lock lock(mu_);
  auto t = tables_.find(table);
  if (t == tables_.end() || !t->second.descriptor) {
    return Status::NotFound("table '" + table + "' does not exist");
  }
  const auto& parts = t->second.partitions;
  auto it = parts.upper_bound(key);  // first partition starting after key
  if (it == parts.begin()) return Status::NotFound("no partition of '" + table + "' holds the key");
  --it;
  const pb::PartitionDescriptor& p = it->second;
  if (!p.end_key().empty() && !(key < p.end_key())) {
    return Status::NotFound("no partition of '" + table + "' holds the key");
  }
  pb::LookupResponse response;
  *response.mutable_partition() = p;
  response.set_map_version(version_);
  return response;
}

pb::TablesResponse MemDs::Tables() const {
  std::shared_lock lock(mu_);
  pb::TablesResponse response;
  for (const auto& [name, entry] : tables_) {
    if (!entry.descriptor) continue;
    *response.add_tables() = *entry.descriptor;
    for (const auto& [start, p] : entry.partitions) *response.add_partitions() = p;
  }
  return response;
}

std::optional<std::pair<pb::TableDescriptor, std::vector<pb::PartitionDescriptor>>> MemDs::Table(
    const std::string& table) const {
  std::shared_lock lock(mu_);
  auto t = tables_.find(table);
  if (t == tables_.end() || !t->second.descriptor) return std::nullopt;
  std::vector<pb::PartitionDescriptor> parts;
  for (const auto& [start, p] : t->second.partitions) parts.push_back(p);
  return std::make_pair(*t->second.descriptor, std::move(parts));
}

std::map<uint32_t, size_t> MemDs::ReplicasByNode() const {
  std::shared_lock lock(mu_);
  std::map<uint32_t, size_t> load;
  for (const auto& [name, entry] : tables_) {
    for (const auto& [start, p] : entry.partitions) {
      for (const pb::ReplicaPlacement& r : p.replicas()) ++load[r.node_id()];
    }
  }
  return load;
}

uint64_t MemDs::version() const {
  std::shared_lock lock(mu_);
  return version_;
}

}  // namespace tessera::meta
