#include "storage/applied_state.h"

#include <memory>

#include "common/check.h"
#include "common/limits.h"
#include "storage/record_codec.h"
#include "storage/rocks_status.h"
#include "tessera/storage.pb.h"

namespace tessera::storage {
namespace {

void CheckOk(const rocksdb::Status& status) { TESSERA_CHECK(status.ok()); }

Status ValidateKeyValue(std::string_view key, std::string_view value) {
  if (key.size() > limits::kStateKeyBytesMax) {
    return Status::InvalidArgument("state key of " + std::to_string(key.size()) +
                                   " bytes exceeds kStateKeyBytesMax");
  }
  if (value.size() > limits::kStateValueBytesMax) {
    return Status::InvalidArgument("state value of " + std::to_string(value.size()) +
                                   " bytes exceeds kStateValueBytesMax");
  }
  return Status::Ok();
}

void AppendAppliedIndex(GroupId group, Slot applied_index, rocksdb::ColumnFamilyHandle* state_cf,
                        rocksdb::WriteBatch* batch) {
  pb::AppliedState applied;
  applied.set_applied_index(applied_index);
  CheckOk(batch->Put(state_cf, AppliedKey(group), EncodeProtoRecord(applied)));
}

std::string UserRecordName(GroupId group, std::string_view key) {
  return "state value group=" + std::to_string(group) + " key=" + HexForMessage(key);
}

// DecodeRecord that names the record (a hex dump of its key) only when it is
// corrupt: reads and scans decode every record, and the name would cost more
// than the check.
Result<std::string_view> DecodeUserValue(GroupId group, std::string_view key,
                                         std::string_view stored) {
  Result<std::string_view> value = DecodeRecord(stored, "state value");
  if (value.ok()) return value;
  return DecodeRecord(stored, UserRecordName(group, key));  // the same defect, named
}

}  // namespace

Status ValidateMutations(const std::vector<Mutation>& mutations) {
  for (const Mutation& m : mutations) TESSERA_RETURN_IF_ERROR(ValidateKeyValue(m.key, m.value));
  return Status::Ok();
}

Status ValidateKeyValues(const std::vector<KeyValue>& data) {
  for (const KeyValue& kv : data) TESSERA_RETURN_IF_ERROR(ValidateKeyValue(kv.key, kv.value));
  return Status::Ok();
}

void AppendApply(GroupId group, Slot applied_index, const std::vector<Mutation>& mutations,
                 rocksdb::ColumnFamilyHandle* state_cf, rocksdb::WriteBatch* batch) {
  TESSERA_CHECK(ValidateMutations(mutations).ok());
  for (const Mutation& m : mutations) {
    if (m.kind == Mutation::Kind::kPut) {
      CheckOk(batch->Put(state_cf, UserKey(group, m.key), EncodeRecord(m.value)));
    } else {
      CheckOk(batch->Delete(state_cf, UserKey(group, m.key)));
    }
  }
  AppendAppliedIndex(group, applied_index, state_cf, batch);
}

void AppendReplaceState(GroupId group, Slot applied_index, const std::vector<KeyValue>& data,
                        rocksdb::ColumnFamilyHandle* state_cf, rocksdb::WriteBatch* batch) {
  TESSERA_CHECK(ValidateKeyValues(data).ok());
  CheckOk(batch->DeleteRange(state_cf, UserKeysBegin(group), UserKeysEnd(group)));
  for (const KeyValue& kv : data) {
    CheckOk(batch->Put(state_cf, UserKey(group, kv.key), EncodeRecord(kv.value)));
  }
  AppendAppliedIndex(group, applied_index, state_cf, batch);
}

Result<Slot> ReadAppliedIndex(const ColumnFamilies& cfs, const rocksdb::ReadOptions& read,
                              GroupId group) {
  std::string stored;
  rocksdb::Status s = cfs.db->Get(read, cfs.state, AppliedKey(group), &stored);
  if (s.IsNotFound()) return Slot{0};
  const std::string what = "applied index group=" + std::to_string(group);
  if (!s.ok()) return FromRocks(s, what);
  pb::AppliedState applied;
  TESSERA_RETURN_IF_ERROR(DecodeProtoRecord(stored, what, &applied));
  return Slot{applied.applied_index()};
}

Result<std::string> ReadUserValue(const ColumnFamilies& cfs, const rocksdb::ReadOptions& read,
                                  GroupId group, std::string_view key) {
  std::string stored;
  rocksdb::Status s = cfs.db->Get(read, cfs.state, UserKey(group, key), &stored);
  if (!s.ok()) return FromRocks(s, UserRecordName(group, key));
  Result<std::string_view> value = DecodeUserValue(group, key, stored);
  if (!value.ok()) return value.status();
  return std::string(*value);
}

namespace {

// The user key inside a state key of `group`; Corruption when it is none.
Result<std::string_view> StoredUserKey(GroupId group, std::string_view stored_key) {
  std::optional<std::string_view> key = DecodeUserKey(group, stored_key);
  if (!key) {
    return Status::Corruption("state key " + HexForMessage(stored_key) +
                              " is not a user key of group=" + std::to_string(group));
  }
  return *key;
}

}  // namespace

Result<KeyValue> DecodeUserRecord(GroupId group, std::string_view stored_key,
                                  std::string_view stored_value) {
  Result<std::string_view> key = StoredUserKey(group, stored_key);
  if (!key.ok()) return key.status();
  Result<std::string_view> value = DecodeUserValue(group, *key, stored_value);
  if (!value.ok()) return value.status();
  return KeyValue{std::string(*key), std::string(*value)};
}

Status VisitUserKeys(const ColumnFamilies& cfs, GroupId group, std::string_view start_key,
                     std::string_view end_key, size_t limit, const ValueFilter& wants_value,
                     const RowVisitor& visit) {
  if (limit == 0 || limit > limits::kScanItemsMax) {
    return Status::InvalidArgument("scan limit must be in 1..kScanItemsMax");
  }
  const std::string upper = end_key.empty() ? UserKeysEnd(group) : UserKey(group, end_key);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read;
  read.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(cfs.db->NewIterator(read, cfs.state));
  size_t visited = 0;
  for (it->Seek(UserKey(group, start_key)); it->Valid() && visited < limit; it->Next(), ++visited) {
    Result<std::string_view> user_key = StoredUserKey(group, it->key().ToStringView());
    if (!user_key.ok()) return user_key.status();
    if (wants_value && !wants_value(*user_key)) {
      if (!visit(*user_key, {})) break;
      continue;
    }
    Result<std::string_view> value = DecodeUserValue(group, *user_key, it->value().ToStringView());
    if (!value.ok()) return value.status();
    if (!visit(*user_key, *value)) break;
  }
  return FromRocks(it->status(), "scan group=" + std::to_string(group));
}

}  // namespace tessera::storage
