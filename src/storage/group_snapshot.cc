#include "storage/group_snapshot.h"

#include "storage/record_codec.h"
#include "storage/rocks_status.h"
#include "storage/snapshot_staging.h"
#include "tessera/consensus.pb.h"

namespace tessera::storage {

GroupSnapshot::GroupSnapshot(const ColumnFamilies& cfs, GroupId group,
                             std::atomic<int64_t>* open_snapshots)
    : cfs_(cfs),
      group_(group),
      open_snapshots_(open_snapshots),
      snapshot_(cfs.db->GetSnapshot()),
      upper_(UserKeysEnd(group)),
      upper_slice_(upper_) {
  open_snapshots_->fetch_add(1);
}

GroupSnapshot::~GroupSnapshot() {
  it_.reset();  // before the snapshot it reads
  cfs_.db->ReleaseSnapshot(snapshot_);
  open_snapshots_->fetch_sub(1);
}

Result<std::unique_ptr<GroupSnapshot>> GroupSnapshot::Open(const ColumnFamilies& cfs, GroupId group,
                                                           std::atomic<int64_t>* open_snapshots) {
  std::unique_ptr<GroupSnapshot> snap(new GroupSnapshot(cfs, group, open_snapshots));
  rocksdb::ReadOptions read;
  read.snapshot = snap->snapshot_;
  Result<Slot> applied = ReadAppliedIndex(cfs, read, group);
  if (!applied.ok()) return applied.status();
  snap->applied_index_ = *applied;
  std::string stored_end;
  rocksdb::Status end = cfs.db->Get(read, cfs.meta, RangeEndKey(group), &stored_end);
  if (!end.IsNotFound()) {
    const std::string what = "range end of group=" + std::to_string(group);
    TESSERA_RETURN_IF_ERROR(FromRocks(end, what));
    pb::GroupRangeEnd record;
    TESSERA_RETURN_IF_ERROR(DecodeProtoRecord(stored_end, what, &record));
    snap->range_end_ = record.end_key();
  }
  read.iterate_upper_bound = &snap->upper_slice_;
  snap->it_.reset(cfs.db->NewIterator(read, cfs.state));
  snap->it_->Seek(UserKeysBegin(group));
  return snap;
}

Result<std::optional<KeyValue>> GroupSnapshot::Next() {
  if (!it_->Valid()) {
    TESSERA_RETURN_IF_ERROR(
        FromRocks(it_->status(), "snapshot of group=" + std::to_string(group_)));
    return std::optional<KeyValue>();
  }
  Result<KeyValue> kv =
      DecodeUserRecord(group_, it_->key().ToStringView(), it_->value().ToStringView());
  if (!kv.ok()) return kv.status();
  it_->Next();
  return std::optional<KeyValue>(std::move(kv).value());
}

}  // namespace tessera::storage
