// NodeStore: the apply of a partition split in the node's own store
// (docs/partition-splits.md "Apply", docs/formats/storage.md "Splits"). The
// copy follows the staged install's pattern: a durable marker first, then
// unsynced copy batches, then one synced batch that commits and deletes the
// marker; Open redoes the copy of every marker it finds.
#include <rocksdb/table_properties.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "common/check.h"
#include "storage/log_write.h"
#include "storage/node_store.h"
#include "storage/record_codec.h"
#include "storage/rocks_status.h"
#include "storage/snapshot_staging.h"

namespace tessera::storage {
namespace {

void CheckOk(const rocksdb::Status& status) { TESSERA_CHECK(status.ok()); }

std::string GroupName(GroupId group) { return "group=" + std::to_string(group); }

void AppendRangeEnd(GroupId group, const std::string& end_key, const ColumnFamilies& cfs,
                    rocksdb::WriteBatch* batch) {
  pb::GroupRangeEnd record;
  record.set_end_key(end_key);
  CheckOk(batch->Put(cfs.meta, RangeEndKey(group), EncodeProtoRecord(record)));
}

Status ValidateSplit(GroupId parent, const pb::SplitMarker& marker) {
  if (marker.split_key().empty()) return Status::InvalidArgument("split at an empty key");
  if (marker.child_group_id() == 0 || marker.child_group_id() == parent) {
    return Status::InvalidArgument("split of " + GroupName(parent) + " into child group " +
                                   std::to_string(marker.child_group_id()));
  }
  if (marker.split_slot() == UINT64_MAX) return Status::InvalidArgument("split at the last slot id");
  return Status::Ok();
}

}  // namespace

Result<std::optional<std::string>> NodeStore::RangeEnd(GroupId group) const {
  auto record = ReadMetaRecord<pb::GroupRangeEnd>(RangeEndKey(group), "range end " + GroupName(group));
  if (!record.ok() && record.status().code() == StatusCode::kNotFound) {
    return std::optional<std::string>();
  }
  if (!record.ok()) return record.status();
  return std::optional<std::string>(record->end_key());
}

Result<uint64_t> NodeStore::ApproximateStateBytes(GroupId group) const {
  const std::string begin = UserKeysBegin(group);
  const std::string end = UserKeysEnd(group);
  const rocksdb::Range range(begin, end);
  rocksdb::SizeApproximationOptions options;
  options.include_memtables = true;
  options.include_files = true;
  uint64_t bytes = 0;
  TESSERA_RETURN_IF_ERROR(FromRocks(db_->GetApproximateSizes(options, cfs_.state, &range, 1, &bytes),
                                    "approximate size " + GroupName(group)));
  return bytes;
}

Result<uint64_t> NodeStore::ApproximateStateKeys(GroupId group) const {
  const std::string begin = UserKeysBegin(group);
  const std::string end = UserKeysEnd(group);
  const rocksdb::Range range(begin, end);
  uint64_t memtable_keys = 0;
  uint64_t memtable_bytes = 0;
  db_->GetApproximateMemTableStats(cfs_.state, range, &memtable_keys, &memtable_bytes);
  rocksdb::SizeApproximationOptions options;
  options.include_memtables = false;
  options.include_files = true;
  uint64_t range_bytes = 0;
  TESSERA_RETURN_IF_ERROR(FromRocks(db_->GetApproximateSizes(options, cfs_.state, &range, 1, &range_bytes),
                                    "approximate size " + GroupName(group)));
  if (range_bytes == 0) return memtable_keys;
  rocksdb::TablePropertiesCollection files;
  TESSERA_RETURN_IF_ERROR(FromRocks(db_->GetPropertiesOfTablesInRange(cfs_.state, &range, 1, &files),
                                    "table properties " + GroupName(group)));
  uint64_t entries = 0;
  uint64_t deletions = 0;
  uint64_t data_bytes = 0;
  for (const auto& [name, properties] : files) {
    entries += properties->num_entries;
    deletions += properties->num_deletions;
    data_bytes += properties->data_size;
  }
  const uint64_t live = entries > 2 * deletions ? entries - 2 * deletions : 0;
  if (data_bytes == 0) return memtable_keys;
  const double share = std::min(1.0, static_cast<double>(range_bytes) / static_cast<double>(data_bytes));
  return memtable_keys + static_cast<uint64_t>(std::llround(static_cast<double>(live) * share));
}

Result<bool> NodeStore::SplitPending(GroupId parent) const {
  std::string stored;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cfs_.meta, SplitMarkerKey(parent), &stored);
  if (s.IsNotFound()) return false;
  TESSERA_RETURN_IF_ERROR(FromRocks(s, "split marker " + GroupName(parent)));
  return true;
}

Status NodeStore::ApplySplit(GroupId parent, const pb::SplitMarker& marker,
                             const std::vector<GroupMutation>& side_writes) {
  TESSERA_RETURN_IF_ERROR(ValidateSplit(parent, marker));
  for (const GroupMutation& w : side_writes) {
    TESSERA_RETURN_IF_ERROR(ValidateMutations({w.mutation}));
  }
  Result<bool> pending = SplitPending(parent);
  if (!pending.ok()) return pending.status();
  if (*pending) return Status::Conflict("a split of " + GroupName(parent) + " is unfinished");
  Result<Slot> applied = AppliedIndex(parent);
  if (!applied.ok()) return applied.status();
  if (marker.split_slot() <= *applied) {
    return Status::InvalidArgument("split of " + GroupName(parent) + " at slot " +
                                   std::to_string(marker.split_slot()) +
                                   " does not exceed the applied index " + std::to_string(*applied));
  }
  Result<std::optional<std::string>> old_end = RangeEnd(parent);
  if (!old_end.ok()) return old_end.status();
  if (*old_end && marker.split_key() >= **old_end) {
    return Status::InvalidArgument("split key of " + GroupName(parent) +
                                   " lies outside its range");
  }
  rocksdb::WriteBatch batch;
  AppendApply(parent, marker.split_slot(), {}, cfs_.state, &batch);
  AppendRangeEnd(parent, marker.split_key(), cfs_, &batch);
  if (*old_end) {
    AppendRangeEnd(marker.child_group_id(), **old_end, cfs_, &batch);
  } else {
    CheckOk(batch.Delete(cfs_.meta, RangeEndKey(marker.child_group_id())));
  }
  for (const GroupMutation& w : side_writes) {
    const Mutation& m = w.mutation;
    if (m.kind == Mutation::Kind::kPut) {
      CheckOk(batch.Put(cfs_.state, UserKey(w.group, m.key), EncodeRecord(m.value)));
    } else {
      CheckOk(batch.Delete(cfs_.state, UserKey(w.group, m.key)));
    }
  }
  CheckOk(batch.Put(cfs_.meta, SplitMarkerKey(parent), EncodeProtoRecord(marker)));
  TESSERA_RETURN_IF_ERROR(SubmitAndWait(std::move(batch)));
  return FinishSplit(parent, marker, options_.fault_split_stop_after_batches);
}

Status NodeStore::FinishSplit(GroupId parent, const pb::SplitMarker& marker,
                              std::optional<size_t> stop_after_batches) {
  if (stop_after_batches && *stop_after_batches == 0) return Status::Aborted("fault injection");
  const GroupId child = marker.child_group_id();
  // As a staged install: the copy batches are unsynced, the final synced
  // batch makes them durable, and until it the marker makes a restart redo
  // the whole copy (the parent's keys >= split_key are untouched until then).
  rocksdb::WriteOptions unsynced;
  rocksdb::WriteBatch batch;
  CheckOk(batch.DeleteRange(cfs_.state, UserKeysBegin(child), UserKeysEnd(child)));
  size_t batch_bytes = 0;
  size_t batches = 0;
  const std::string lower = UserKey(parent, marker.split_key());
  const std::string upper = UserKeysEnd(parent);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read;
  read.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, cfs_.state));
  for (it->Seek(lower); it->Valid(); it->Next()) {
    std::optional<std::string_view> key = DecodeUserKey(parent, it->key().ToStringView());
    TESSERA_CHECK(key.has_value());  // the bounds select user keys only
    Result<std::string_view> value = DecodeRecord(
        it->value().ToStringView(), "state value " + GroupName(parent) + " key=" + HexForMessage(*key));
    if (!value.ok()) return value.status();
    CheckOk(batch.Put(cfs_.state, UserKey(child, *key), it->value()));  // the verified record
    batch_bytes += key->size() + value->size();
    if (batch_bytes < options_.snapshot_install_batch_bytes) continue;
    TESSERA_RETURN_IF_ERROR(FromRocks(db_->Write(unsynced, &batch), "split " + GroupName(parent)));
    batch.Clear();
    batch_bytes = 0;
    if (stop_after_batches && ++batches >= *stop_after_batches) {
      return Status::Aborted("fault injection");
    }
  }
  TESSERA_RETURN_IF_ERROR(FromRocks(it->status(), "state of " + GroupName(parent)));
  CheckOk(batch.DeleteRange(cfs_.state, lower, upper));
  AppendApply(child, marker.split_slot(), {}, cfs_.state, &batch);
  pb::LogBase base;
  base.set_log_start(marker.split_slot() + 1);
  *base.mutable_base_membership() = marker.membership();
  AppendLogBase(child, base, cfs_.log, &batch);
  CheckOk(batch.Delete(cfs_.meta, SplitMarkerKey(parent)));
  return SubmitAndWait(std::move(batch));
}

Status NodeStore::RecoverSplits() {
  auto marked = GroupsUnder(cfs_, kSplitMarkerPrefix);
  if (!marked.ok()) return marked.status();
  for (GroupId parent : *marked) {
    auto marker = ReadMetaRecord<pb::SplitMarker>(SplitMarkerKey(parent),
                                                  "split marker " + GroupName(parent));
    if (!marker.ok()) return marker.status();
    TESSERA_RETURN_IF_ERROR(FinishSplit(parent, *marker, std::nullopt));
    ++snapshot_recovery_.splits_resumed;
  }
  return Status::Ok();
}

}  // namespace tessera::storage
