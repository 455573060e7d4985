// The applied state of a group in the state column family: user keys and
// values plus the applied index, written together (docs/formats/storage.md,
// "Applied state and crash-consistent apply"). Encoders append to a
// WriteBatch; readers verify every record they return.
//
// Thread safety: functions over their arguments; the readers may run
// concurrently with writers (RocksDB reads are thread-safe).
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "storage/column_families.h"
#include "storage/key_codec.h"

namespace tessera::storage {

// One change of the state machine to a group's applied state.
struct Mutation {
  enum class Kind : uint8_t { kPut, kDelete };
  Kind kind = Kind::kPut;
  std::string key;
  std::string value;  // kPut only

  static Mutation Put(std::string key, std::string value) {
    return {Kind::kPut, std::move(key), std::move(value)};
  }
  static Mutation Delete(std::string key) { return {Kind::kDelete, std::move(key), {}}; }
};

struct KeyValue {
  std::string key;
  std::string value;
  bool operator==(const KeyValue&) const = default;
};

// InvalidArgument when a key exceeds kStateKeyBytesMax or a value
// kStateValueBytesMax.
Status ValidateMutations(const std::vector<Mutation>& mutations);
Status ValidateKeyValues(const std::vector<KeyValue>& data);

// Appends `mutations` (valid: checked) and AppliedState{applied_index}.
void AppendApply(GroupId group, Slot applied_index, const std::vector<Mutation>& mutations,
                 rocksdb::ColumnFamilyHandle* state_cf, rocksdb::WriteBatch* batch);
// Appends: delete every user key of `group`, put `data` (valid: checked),
// put AppliedState{applied_index}.
void AppendReplaceState(GroupId group, Slot applied_index, const std::vector<KeyValue>& data,
                        rocksdb::ColumnFamilyHandle* state_cf, rocksdb::WriteBatch* batch);

// The stored applied index of `group`, 0 when none is stored.
Result<Slot> ReadAppliedIndex(const ColumnFamilies& cfs, const rocksdb::ReadOptions& read,
                              GroupId group);
// The value of `key`; NotFound when absent.
Result<std::string> ReadUserValue(const ColumnFamilies& cfs, const rocksdb::ReadOptions& read,
                                  GroupId group, std::string_view key);
// Verifies the state record at (`stored_key`, `stored_value`), a user key of
// `group`, and returns the user key and value.
Result<KeyValue> DecodeUserRecord(GroupId group, std::string_view stored_key,
                                  std::string_view stored_value);
// Which rows of a scan need their values: false leaves a row's value
// unread, unverified and empty (the row still counts toward the limit).
using ValueFilter = std::function<bool(std::string_view user_key)>;

// One row of a scan: the user key and its verified value (empty when
// `wants_value` refused the row). Both views live only during the call.
// Returns false to end the scan after this row.
using RowVisitor = std::function<bool(std::string_view user_key, std::string_view value)>;

// Visits the user keys in [start_key, end_key) in byte order, at most
// `limit` of them (1..kScanItemsMax), until `visit` returns false; an empty
// end_key means the end of the group. With `wants_value`, rows it refuses
// are visited with an empty value. Copies nothing: callers keep what they
// need of each row.
Status VisitUserKeys(const ColumnFamilies& cfs, GroupId group, std::string_view start_key,
                     std::string_view end_key, size_t limit, const ValueFilter& wants_value,
                     const RowVisitor& visit);

}  // namespace tessera::storage
