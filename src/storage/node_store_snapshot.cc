// NodeStore: staging and install of streamed snapshots (snapshot_staging.h,
// docs/formats/storage.md "Streamed snapshots").
#include <chrono>
#include <memory>
#include <thread>

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

// The upper bound of keys starting with `prefix` (its last byte + 1).
std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  end.back() = static_cast<char>(end.back() + 1);
  return end;
}

void AppendDropStaging(GroupId group, const ColumnFamilies& cfs, rocksdb::WriteBatch* batch) {
  CheckOk(batch->DeleteRange(cfs.state, StagedKeysBegin(group), StagedKeysEnd(group)));
  CheckOk(batch->Delete(cfs.meta, StagingProgressKey(group)));
}

}  // namespace

Result<std::vector<GroupId>> GroupsUnder(const ColumnFamilies& cfs, std::string_view prefix) {
  const std::string upper = PrefixEnd(prefix);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read;
  read.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(cfs.db->NewIterator(read, cfs.meta));
  std::vector<GroupId> groups;
  for (it->Seek(prefix); it->Valid(); it->Next()) {
    std::optional<GroupId> group = DecodePrefixedGroupKey(prefix, it->key().ToStringView());
    if (!group) {
      return Status::Corruption("meta key " + HexForMessage(it->key().ToStringView()) +
                                " is not a key of its prefix");
    }
    groups.push_back(*group);
  }
  TESSERA_RETURN_IF_ERROR(FromRocks(it->status(), "listing " + std::string(prefix)));
  return groups;
}

namespace {

// The last staged user key of `group`, nullopt when none.
Result<std::optional<std::string>> LastStagedKey(const ColumnFamilies& cfs, GroupId group) {
  const std::string lower = StagedKeysBegin(group);
  const std::string upper = StagedKeysEnd(group);
  const rocksdb::Slice lower_slice(lower), upper_slice(upper);
  rocksdb::ReadOptions read;
  read.iterate_lower_bound = &lower_slice;
  read.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(cfs.db->NewIterator(read, cfs.state));
  it->SeekToLast();
  if (!it->Valid()) {
    TESSERA_RETURN_IF_ERROR(FromRocks(it->status(), "staging of " + GroupName(group)));
    return std::optional<std::string>();
  }
  std::optional<std::string_view> key = DecodeStagedKey(group, it->key().ToStringView());
  TESSERA_CHECK(key.has_value());  // the bounds select staged keys only
  return std::optional<std::string>(std::string(*key));
}

Status ValidateChunkOrder(const std::vector<KeyValue>& pairs) {
  for (size_t i = 1; i < pairs.size(); ++i) {
    if (!(pairs[i - 1].key < pairs[i].key)) {
      return Status::InvalidArgument("snapshot chunk keys are not in ascending order");
    }
  }
  return Status::Ok();
}

}  // namespace

template <typename Proto>
Result<Proto> NodeStore::ReadMetaRecord(const std::string& key, std::string_view what) const {
  std::string stored;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cfs_.meta, key, &stored);
  if (s.IsNotFound()) return Status::NotFound(std::string(what) + " absent");
  TESSERA_RETURN_IF_ERROR(FromRocks(s, std::string(what)));
  Proto proto;
  TESSERA_RETURN_IF_ERROR(DecodeProtoRecord(stored, what, &proto));
  return proto;
}

Result<pb::SnapshotManifest> NodeStore::StagedSnapshot(GroupId group) const {
  return ReadMetaRecord<pb::SnapshotManifest>(StagingProgressKey(group),
                                              "snapshot staging " + GroupName(group));
}

Result<bool> NodeStore::InstallPending(GroupId group) const {
  std::string stored;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cfs_.meta, InstallMarkerKey(group), &stored);
  if (s.IsNotFound()) return false;
  TESSERA_RETURN_IF_ERROR(FromRocks(s, "install marker " + GroupName(group)));
  return true;
}

Result<pb::SnapshotManifest> NodeStore::StageSnapshotChunk(GroupId group, uint64_t snapshot_id,
                                                           uint64_t seq,
                                                           const std::vector<KeyValue>& pairs) {
  if (snapshot_id == 0) return Status::InvalidArgument("snapshot id 0 is reserved");
  TESSERA_RETURN_IF_ERROR(ValidateKeyValues(pairs));
  TESSERA_RETURN_IF_ERROR(ValidateChunkOrder(pairs));
  Result<bool> pending = InstallPending(group);
  if (!pending.ok()) return pending.status();
  if (*pending) return Status::Conflict("an install of " + GroupName(group) + " is unfinished");
  Result<pb::SnapshotManifest> staged = StagedSnapshot(group);
  if (!staged.ok() && staged.status().code() != StatusCode::kNotFound) return staged.status();
  const bool same = staged.ok() && staged->snapshot_id() == snapshot_id;
  if (same && seq < staged->chunk_count()) return staged;  // a duplicate
  rocksdb::WriteBatch batch;
  pb::SnapshotManifest next;
  if (seq == 0 && !same) {
    AppendDropStaging(group, cfs_, &batch);
    next.set_snapshot_id(snapshot_id);
  } else if (same && seq == staged->chunk_count()) {
    next = *staged;
    auto last = LastStagedKey(cfs_, group);
    if (!last.ok()) return last.status();
    if (!pairs.empty() && last->has_value() && !(**last < pairs.front().key)) {
      return Status::InvalidArgument("snapshot chunk does not continue the staged key order");
    }
  } else {
    return Status::Conflict("chunk " + std::to_string(seq) + " of snapshot " +
                            std::to_string(snapshot_id) + " does not follow the staging of " +
                            GroupName(group));
  }
  for (const KeyValue& kv : pairs) {
    CheckOk(batch.Put(cfs_.state, StagedKey(group, kv.key), EncodeRecord(kv.value)));
    AddPairToManifest(kv.key, kv.value, &next);
  }
  next.set_chunk_count(seq + 1);
  CheckOk(batch.Put(cfs_.meta, StagingProgressKey(group), EncodeProtoRecord(next)));
  TESSERA_RETURN_IF_ERROR(SubmitAndWait(std::move(batch)));
  return next;
}

Status NodeStore::InstallStagedSnapshot(GroupId group, const pb::SnapshotManifest& manifest,
                                        const pb::SnapshotMeta& meta) {
  if (meta.last_slot() == UINT64_MAX) return Status::InvalidArgument("snapshot at the last slot id");
  Result<bool> pending = InstallPending(group);
  if (!pending.ok()) return pending.status();
  if (*pending) return Status::Conflict("an install of " + GroupName(group) + " is unfinished");
  Result<pb::SnapshotManifest> staged = StagedSnapshot(group);
  if (!staged.ok() && staged.status().code() == StatusCode::kNotFound) {
    return Status::InvalidArgument("no staged snapshot for " + GroupName(group));
  }
  if (!staged.ok()) return staged.status();
  if (manifest.has_range_end() && manifest.range_end().end_key().empty()) {
    return Status::InvalidArgument("snapshot manifest of " + GroupName(group) +
                                   " carries an empty range end");
  }
  if (!StagingMatches(*staged, manifest)) {
    return Status::InvalidArgument(
        "staged snapshot of " + GroupName(group) + " (id " + std::to_string(staged->snapshot_id()) +
        ", " + std::to_string(staged->chunk_count()) + " chunks) does not match the manifest (id " +
        std::to_string(manifest.snapshot_id()) + ", " + std::to_string(manifest.chunk_count()) +
        " chunks)");
  }
  pb::SnapshotInstallMarker marker;
  *marker.mutable_manifest() = manifest;
  *marker.mutable_meta() = meta;
  rocksdb::WriteBatch batch;
  CheckOk(batch.Put(cfs_.meta, InstallMarkerKey(group), EncodeProtoRecord(marker)));
  TESSERA_RETURN_IF_ERROR(SubmitAndWait(std::move(batch)));
  return FinishStagedInstall(group, marker, options_.fault_install_stop_after_batches);
}

Status NodeStore::FinishStagedInstall(GroupId group, const pb::SnapshotInstallMarker& marker,
                                      std::optional<size_t> stop_after_batches) {
  if (stop_after_batches && *stop_after_batches == 0) return Status::Aborted("fault injection");
  if (options_.fault_install_delay_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.fault_install_delay_ms));
  }
  // Copy batches are unsynced: the final synced batch makes them durable
  // (one ordered WAL, recovered as a prefix), and until it the marker makes
  // a restart redo the whole copy.
  rocksdb::WriteOptions unsynced;
  rocksdb::WriteBatch batch;
  CheckOk(batch.DeleteRange(cfs_.state, UserKeysBegin(group), UserKeysEnd(group)));
  size_t batch_bytes = 0;
  size_t batches = 0;
  pb::SnapshotManifest copied;
  const std::string upper = StagedKeysEnd(group);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read;
  read.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, cfs_.state));
  for (it->Seek(StagedKeysBegin(group)); it->Valid(); it->Next()) {
    std::optional<std::string_view> key = DecodeStagedKey(group, it->key().ToStringView());
    TESSERA_CHECK(key.has_value());  // the bounds select staged keys only
    Result<std::string_view> value = DecodeRecord(
        it->value().ToStringView(), "staged value " + GroupName(group) + " key=" + HexForMessage(*key));
    if (!value.ok()) return value.status();
    AddPairToManifest(*key, *value, &copied);
    CheckOk(batch.Put(cfs_.state, UserKey(group, *key), it->value()));  // the verified record
    batch_bytes += key->size() + value->size();
    if (batch_bytes < options_.snapshot_install_batch_bytes) continue;
    TESSERA_RETURN_IF_ERROR(FromRocks(db_->Write(unsynced, &batch), "install " + GroupName(group)));
    batch.Clear();
    batch_bytes = 0;
    if (stop_after_batches && ++batches >= *stop_after_batches) {
      return Status::Aborted("fault injection");
    }
  }
  TESSERA_RETURN_IF_ERROR(FromRocks(it->status(), "staging of " + GroupName(group)));
  const pb::SnapshotManifest& expected = marker.manifest();
  if (copied.pair_count() != expected.pair_count() ||
      copied.total_bytes() != expected.total_bytes() || copied.checksum() != expected.checksum()) {
    return Status::Corruption("staged snapshot of " + GroupName(group) +
                              " does not match its manifest's checksum");
  }
  const pb::SnapshotMeta& meta = marker.meta();
  AppendApply(group, meta.last_slot(), {}, cfs_.state, &batch);
  pb::LogBase base;
  base.set_log_start(meta.last_slot() + 1);
  *base.mutable_base_membership() = meta.membership();
  // As InstallSnapshot: entries above last_slot are accepted values this
  // acceptor must keep (Paxos safety).
  AppendLogBase(group, base, cfs_.log, &batch);
  // The range end of the installed state (a split before last_slot narrowed
  // it), in the same batch as the state: never a narrowed state with a wide
  // range, nor the reverse.
  if (expected.has_range_end()) {
    CheckOk(batch.Put(cfs_.meta, RangeEndKey(group), EncodeProtoRecord(expected.range_end())));
  } else {
    CheckOk(batch.Delete(cfs_.meta, RangeEndKey(group)));
  }
  AppendDropStaging(group, cfs_, &batch);
  CheckOk(batch.Delete(cfs_.meta, InstallMarkerKey(group)));
  return SubmitAndWait(std::move(batch));
}

Status NodeStore::DropStagedSnapshot(GroupId group) {
  Result<bool> pending = InstallPending(group);
  if (!pending.ok()) return pending.status();
  if (*pending) return Status::Conflict("an install of " + GroupName(group) + " is unfinished");
  rocksdb::WriteBatch batch;
  AppendDropStaging(group, cfs_, &batch);
  return SubmitAndWait(std::move(batch));
}

Status NodeStore::RecoverSnapshotStaging() {
  auto marked = GroupsUnder(cfs_, kInstallMarkerPrefix);
  if (!marked.ok()) return marked.status();
  for (GroupId group : *marked) {
    auto marker = ReadMetaRecord<pb::SnapshotInstallMarker>(InstallMarkerKey(group),
                                                            "install marker " + GroupName(group));
    if (!marker.ok()) return marker.status();
    TESSERA_RETURN_IF_ERROR(FinishStagedInstall(group, *marker, std::nullopt));
    ++snapshot_recovery_.installs_resumed;
  }
  auto staged = GroupsUnder(cfs_, kStagingProgressPrefix);
  if (!staged.ok()) return staged.status();
  for (GroupId group : *staged) {
    rocksdb::WriteBatch batch;
    AppendDropStaging(group, cfs_, &batch);
    TESSERA_RETURN_IF_ERROR(SubmitAndWait(std::move(batch)));
    ++snapshot_recovery_.stagings_dropped;
  }
  return Status::Ok();
}

template Result<pb::SplitMarker> NodeStore::ReadMetaRecord<pb::SplitMarker>(
    const std::string&, std::string_view) const;
template Result<pb::GroupRangeEnd> NodeStore::ReadMetaRecord<pb::GroupRangeEnd>(
    const std::string&, std::string_view) const;

}  // namespace tessera::storage
