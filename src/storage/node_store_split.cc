// NodeStore: the apply of a partition split in the node's own store
// (docs/partition-splits.md "Apply", docs/formats/storage.md "Splits"): a
// durable marker first, then the copy written into table files and ingested,
// then one synced batch that commits and deletes the marker; Open redoes the
// copy of every marker it finds.
#include <rocksdb/sst_file_writer.h>
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

// The table files of splits in progress: `<parent>-<n>.sst`.
std::string SplitFilesDir(const std::string& store_path) { return store_path + "/split-files"; }

std::string SplitFilePath(const std::string& store_path, GroupId parent, size_t n) {
  return SplitFilesDir(store_path) + "/" + std::to_string(parent) + "-" + std::to_string(n) + ".sst";
}

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
                              std::optional<size_t> stop_after_files) {
  if (stop_after_files && *stop_after_files == 0) return Status::Aborted("fault injection");
  const GroupId child = marker.child_group_id();
  TESSERA_RETURN_IF_ERROR(DropSplitFiles(parent));
  TESSERA_RETURN_IF_ERROR(FromRocks(env_->CreateDirIfMissing(SplitFilesDir(options_.path)),
                                    "split files directory"));
  // Keys of the child an interrupted earlier attempt ingested are the same
  // rows (the parent's keys >= split_key are untouched until the commit);
  // they are cleared anyway, so the child's keys are exactly this copy.
  Result<bool> child_has_keys = HasUserKeys(child);
  if (!child_has_keys.ok()) return child_has_keys.status();
  if (*child_has_keys) {
    rocksdb::WriteBatch clear;
    CheckOk(clear.DeleteRange(cfs_.state, UserKeysBegin(child), UserKeysEnd(child)));
    TESSERA_RETURN_IF_ERROR(SubmitAndWait(std::move(clear)));
  }
  // The copy goes into table files, each synced when finished, then into
  // the store in one ingest: no memtable insert, no write-ahead log, no
  // flush or compaction of the moved bytes afterwards (D138). The files sit
  // below every other group's keys' files (the child's key range is empty),
  // so the ingest places them at the bottom level.
  const rocksdb::Options file_options(db_->GetDBOptions(), db_->GetOptions(cfs_.state));
  std::vector<std::string> files;
  std::unique_ptr<rocksdb::SstFileWriter> writer;
  size_t file_bytes = 0;
  auto finish_file = [&]() -> Status {
    rocksdb::ExternalSstFileInfo info;
    TESSERA_RETURN_IF_ERROR(FromRocks(writer->Finish(&info), "split file " + files.back()));
    writer.reset();
    file_bytes = 0;
    return Status::Ok();
  };
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
    if (!writer) {
      files.push_back(SplitFilePath(options_.path, parent, files.size()));
      writer = std::make_unique<rocksdb::SstFileWriter>(rocksdb::EnvOptions(), file_options,
                                                        cfs_.state);
      TESSERA_RETURN_IF_ERROR(FromRocks(writer->Open(files.back()), "split file " + files.back()));
    }
    // The verified record, under the child's prefix: keys arrive in order.
    TESSERA_RETURN_IF_ERROR(
        FromRocks(writer->Put(UserKey(child, *key), it->value()), "split file " + files.back()));
    file_bytes += key->size() + value->size();
    if (file_bytes < options_.split_file_bytes) continue;
    TESSERA_RETURN_IF_ERROR(finish_file());
    if (stop_after_files && files.size() >= *stop_after_files) {
      return Status::Aborted("fault injection");
    }
  }
  TESSERA_RETURN_IF_ERROR(FromRocks(it->status(), "state of " + GroupName(parent)));
  if (writer) TESSERA_RETURN_IF_ERROR(finish_file());
  if (!files.empty()) {
    rocksdb::IngestExternalFileOptions ingest;
    ingest.move_files = true;  // hard links where the file system has them
    TESSERA_RETURN_IF_ERROR(FromRocks(db_->IngestExternalFile(cfs_.state, files, ingest),
                                      "ingesting the split of " + GroupName(parent)));
  }
  rocksdb::WriteBatch batch;
  CheckOk(batch.DeleteRange(cfs_.state, lower, upper));
  AppendApply(child, marker.split_slot(), {}, cfs_.state, &batch);
  pb::LogBase base;
  base.set_log_start(marker.split_slot() + 1);
  *base.mutable_base_membership() = marker.membership();
  AppendLogBase(child, base, cfs_.log, &batch);
  CheckOk(batch.Delete(cfs_.meta, SplitMarkerKey(parent)));
  TESSERA_RETURN_IF_ERROR(SubmitAndWait(std::move(batch)));
  return DropSplitFiles(parent);
}

Result<bool> NodeStore::HasUserKeys(GroupId group) const {
  const std::string upper = UserKeysEnd(group);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read;
  read.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, cfs_.state));
  it->Seek(UserKeysBegin(group));
  if (it->Valid()) return true;
  TESSERA_RETURN_IF_ERROR(FromRocks(it->status(), "state of " + GroupName(group)));
  return false;
}

Status NodeStore::DropSplitFiles(std::optional<GroupId> parent) {
  const std::string dir = SplitFilesDir(options_.path);
  std::vector<std::string> names;
  rocksdb::Status listed = env_->GetChildren(dir, &names);
  if (listed.IsNotFound()) return Status::Ok();
  TESSERA_RETURN_IF_ERROR(FromRocks(listed, "split files directory"));
  const std::string prefix = parent ? std::to_string(*parent) + "-" : std::string();
  for (const std::string& name : names) {
    if (name == "." || name == ".." || !name.starts_with(prefix)) continue;
    TESSERA_RETURN_IF_ERROR(FromRocks(env_->DeleteFile(dir + "/" + name), "split file " + name));
  }
  return Status::Ok();
}

Status NodeStore::RecoverSplits() {
  // No split runs yet: whatever a split left in the directory goes.
  TESSERA_RETURN_IF_ERROR(DropSplitFiles(std::nullopt));
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
