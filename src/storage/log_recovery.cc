#include "storage/log_recovery.h"

#include <algorithm>
#include <memory>
#include <string>

#include "storage/applied_state.h"
#include "storage/record_codec.h"
#include "storage/rocks_status.h"

namespace tessera::storage {
namespace {

std::string GroupName(GroupId group) { return "group=" + std::to_string(group); }

// Reads and verifies the proto record at `key`; leaves `message` untouched
// and sets *found = false when absent.
Status ReadLogProtoRecord(const ColumnFamilies& cfs, const rocksdb::ReadOptions& read,
                          const std::string& key, const std::string& what,
                          google::protobuf::MessageLite* message, bool* found) {
  std::string stored;
  rocksdb::Status s = cfs.db->Get(read, cfs.log, key, &stored);
  *found = s.ok();
  if (s.IsNotFound()) return Status::Ok();
  if (!s.ok()) return FromRocks(s, what);
  return DecodeProtoRecord(stored, what, message);
}

// Checks that the entry key at `slot` continues the log, then decodes it.
Status DecodeNextEntry(GroupId group, Slot log_start, Slot expected, Slot slot,
                       std::string_view stored, pb::Entry* entry) {
  if (slot < log_start) {
    return Status::Corruption("log entry " + GroupName(group) + " slot=" + std::to_string(slot) +
                              " lies below log_start=" + std::to_string(log_start));
  }
  if (slot != expected) {
    return Status::Corruption("hole in log " + GroupName(group) + ": expected slot=" +
                              std::to_string(expected) + " found slot=" + std::to_string(slot));
  }
  const std::string what = "log entry " + GroupName(group) + " slot=" + std::to_string(slot);
  TESSERA_RETURN_IF_ERROR(DecodeProtoRecord(stored, what, entry));
  if (entry->slot() != slot) {
    return Status::Corruption(what + ": record holds slot=" + std::to_string(entry->slot()));
  }
  return Status::Ok();
}

Status ReadEntries(const ColumnFamilies& cfs, rocksdb::ReadOptions read, GroupId group,
                   Slot log_start, std::vector<pb::Entry>* entries) {
  const std::string upper = LogEntriesEnd(group);
  const rocksdb::Slice upper_slice(upper);
  read.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(cfs.db->NewIterator(read, cfs.log));
  Slot expected = log_start;
  for (it->Seek(LogEntriesBegin(group)); it->Valid(); it->Next()) {
    std::optional<Slot> slot = DecodeLogEntrySlot(group, it->key().ToStringView());
    if (!slot) {
      return Status::Corruption("malformed log entry key " +
                                HexForMessage(it->key().ToStringView()) + " in " +
                                GroupName(group));
    }
    pb::Entry entry;
    TESSERA_RETURN_IF_ERROR(
        DecodeNextEntry(group, log_start, expected, *slot, it->value().ToStringView(), &entry));
    entries->push_back(std::move(entry));
    ++expected;
  }
  return FromRocks(it->status(), "reading log " + GroupName(group));
}

// Appends the distinct group ids of `cf` to `groups`.
Status CollectGroups(const ColumnFamilies& cfs, rocksdb::ColumnFamilyHandle* cf,
                     std::vector<GroupId>* groups) {
  std::unique_ptr<rocksdb::Iterator> it(cfs.db->NewIterator(rocksdb::ReadOptions(), cf));
  for (it->SeekToFirst(); it->Valid();) {
    std::optional<GroupId> group = DecodeGroup(it->key().ToStringView());
    if (!group) {
      return Status::Corruption("malformed key " + HexForMessage(it->key().ToStringView()) +
                                " in column family " + cf->GetName());
    }
    groups->push_back(*group);
    if (*group == UINT64_MAX) break;
    it->Seek(GroupBegin(*group + 1));
  }
  return FromRocks(it->status(), "listing groups");
}

}  // namespace

Result<pb::LogBase> ReadLogBase(const ColumnFamilies& cfs, const rocksdb::ReadOptions& read,
                                GroupId group) {
  pb::LogBase base;
  bool found = false;
  TESSERA_RETURN_IF_ERROR(ReadLogProtoRecord(cfs, read, LogBaseKey(group),
                                             "log base " + GroupName(group), &base, &found));
  if (!found) base.set_log_start(1);
  if (base.log_start() == 0) {
    return Status::Corruption("log base " + GroupName(group) + ": log_start is 0");
  }
  return base;
}

Result<consensus::RecoveredState> RecoverGroupState(const ColumnFamilies& cfs, GroupId group) {
  rocksdb::ManagedSnapshot snapshot(cfs.db);
  rocksdb::ReadOptions read;
  read.snapshot = snapshot.snapshot();

  consensus::RecoveredState state;
  bool found = false;
  TESSERA_RETURN_IF_ERROR(ReadLogProtoRecord(
      cfs, read, HardStateKey(group), "hard state " + GroupName(group), &state.hard_state, &found));
  Result<pb::LogBase> base = ReadLogBase(cfs, read, group);
  if (!base.ok()) return base.status();
  state.log_base = std::move(base).value();
  Result<Slot> applied = ReadAppliedIndex(cfs, read, group);
  if (!applied.ok()) return applied.status();
  state.applied_index = *applied;
  const Slot log_start = state.log_base.log_start();
  TESSERA_RETURN_IF_ERROR(ReadEntries(cfs, read, group, log_start, &state.entries));
  if (state.applied_index + 1 < log_start) {
    return Status::Corruption(
        "applied state " + GroupName(group) +
        " at applied_index=" + std::to_string(state.applied_index) +
        " does not cover the log below log_start=" + std::to_string(log_start));
  }
  return state;
}

Result<std::vector<GroupId>> ListStoredGroups(const ColumnFamilies& cfs) {
  std::vector<GroupId> groups;
  TESSERA_RETURN_IF_ERROR(CollectGroups(cfs, cfs.log, &groups));
  TESSERA_RETURN_IF_ERROR(CollectGroups(cfs, cfs.state, &groups));
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  return groups;
}

}  // namespace tessera::storage
