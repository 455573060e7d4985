// GroupSnapshot: a consistent, streaming read of one group's whole applied
// state, for snapshot transfer. It pins a RocksDB snapshot, so the applied
// index and every key/value it yields are as of one instant, whatever is
// written meanwhile.
//
// Lifetime: obtained from NodeStore::OpenSnapshot and must be destroyed
// before the NodeStore (checked); destroying it releases the RocksDB
// snapshot. Long-lived snapshots keep old versions alive in RocksDB.
//
// Thread safety: none; use one GroupSnapshot from one thread at a time.
// Distinct snapshots are independent.
#pragma once

#include <rocksdb/db.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "common/result.h"
#include "storage/applied_state.h"
#include "storage/column_families.h"
#include "storage/key_codec.h"

namespace tessera::storage {

class GroupSnapshot {
 public:
  // Pins a snapshot of `group`; `open_snapshots` counts live snapshots and
  // must outlive this object.
  static Result<std::unique_ptr<GroupSnapshot>> Open(const ColumnFamilies& cfs, GroupId group,
                                                     std::atomic<int64_t>* open_snapshots);
  ~GroupSnapshot();
  GroupSnapshot(const GroupSnapshot&) = delete;
  GroupSnapshot& operator=(const GroupSnapshot&) = delete;

  GroupId group_id() const { return group_; }
  // Every slot <= applied_index is reflected in the data, and no later one.
  Slot applied_index() const { return applied_index_; }
  // The group's range end (range_end/G) as of the same instant; nullopt
  // when no split narrowed the group.
  const std::optional<std::string>& range_end() const { return range_end_; }
  // The next user key/value in key order; nullopt after the last one.
  // Corruption (naming group and key) on a record that fails verification.
  Result<std::optional<KeyValue>> Next();

 private:
  GroupSnapshot(const ColumnFamilies& cfs, GroupId group, std::atomic<int64_t>* open_snapshots);

  const ColumnFamilies cfs_;
  const GroupId group_;
  std::atomic<int64_t>* const open_snapshots_;
  const rocksdb::Snapshot* snapshot_ = nullptr;
  Slot applied_index_ = 0;
  std::optional<std::string> range_end_;
  const std::string upper_;           // the iterator's upper bound ...
  const rocksdb::Slice upper_slice_;  // ... which must outlive it
  std::unique_ptr<rocksdb::Iterator> it_;
};

}  // namespace tessera::storage
