// MemDs: a meta replica's in-memory copy of the partition map (every table
// and every partition descriptor), built from the meta group's applied KV
// state (docs/formats/meta-keys.md) and kept current as entries apply. It
// serves lookups and table listings on any replica, leader or not, with no
// consensus round: reads are as fresh as this replica's applied index.
//
// Invariants (of a state written by the meta leader, rule 2 of the format):
//  1. version() never decreases across Update calls; Reset may set any.
//  2. Lookup(t, k) returns the partition of t whose [start_key, end_key)
//     holds k (empty end_key: unbounded), or NotFound.
//
// Thread safety: every method may be called from any thread. mu_ guards the
// maps; writers (the meta group's strand) hold it exclusively, readers
// (rpc handlers) shared, for the length of one map operation.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::meta {

// One key of the meta state after a change: its value, or nullopt when the
// key was deleted. Values are the user values (not KvRecords).
struct KeyChange {
  std::string key;
  std::optional<std::string> value;
};

class MemDs {
 public:
  // Replaces everything with `state` (every meta key and its value) at
  // `version`. Keys outside "t/", "p/" and "a/blob_slots" are ignored. Corruption, naming
  // the key, when a descriptor does not parse; the map is then unchanged.
  Status Reset(const std::vector<KeyChange>& state, uint64_t version);
  // Applies `changes` (keys whose value changed) and sets version. Same
  // errors as Reset, same all-or-nothing effect.
  Status Update(const std::vector<KeyChange>& changes, uint64_t version);

  // The partition of `table` holding `key`, with the map version. NotFound
  // for an unknown table (message names it) or a key in no range.
  Result<pb::LookupResponse> Lookup(const std::string& table, const std::string& key) const;
  // Every table and every partition, tables by name, partitions in range
  // order per table.
  pb::TablesResponse Tables() const;
  // One table's descriptor and its partitions in range order; nullopt when
  // unknown.
  std::optional<std::pair<pb::TableDescriptor, std::vector<pb::PartitionDescriptor>>> Table(
      const std::string& table) const;
  // The blob slot assignments ("a/blob_slots"; version 0 and none when
  // never written).
  pb::BlobSlotAssignments BlobSlots() const;
  // Replicas per storage node id, over every partition (placement load).
  std::map<uint32_t, size_t> ReplicasByNode() const;
  uint64_t version() const;

 private:
  struct TableEntry {
    std::optional<pb::TableDescriptor> descriptor;
    std::map<std::string, pb::PartitionDescriptor> partitions;  // by start_key
  };
  using Tables_ = std::map<std::string, TableEntry>;

  // Applies one change to `tables`.
  static Status ApplyChange(const KeyChange& change, Tables_& tables);

  // The value of "a/blob_slots" in `changes`, if they change it: parsed
  // (empty when deleted), or Corruption.
  static Result<std::optional<pb::BlobSlotAssignments>> BlobSlotsChange(
      const std::vector<KeyChange>& changes);

  mutable std::shared_mutex mu_;  // guards tables_, blob_slots_ and version_
  Tables_ tables_;
  pb::BlobSlotAssignments blob_slots_;
  uint64_t version_ = 0;
};

}  // namespace tessera::meta
