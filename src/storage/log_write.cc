#include "storage/log_write.h"

#include <string>

#include "common/check.h"
#include "storage/record_codec.h"

namespace tessera::storage {
namespace {

void CheckOk(const rocksdb::Status& status) { TESSERA_CHECK(status.ok()); }

}  // namespace

Status ValidateLogWrite(const LogWrite& write) {
  const std::string group = "group=" + std::to_string(write.group_id);
  if (write.truncate_from && *write.truncate_from == 0) {
    return Status::InvalidArgument(group + ": truncate_from must be >= 1");
  }
  for (const pb::Entry& entry : write.entries) {
    if (entry.slot() == 0) return Status::InvalidArgument(group + ": entry at slot 0");
  }
  if (write.log_base && write.log_base->log_start() == 0) {
    return Status::InvalidArgument(group + ": log_base.log_start must be >= 1");
  }
  return Status::Ok();
}

void AppendLogWrite(const LogWrite& write, rocksdb::ColumnFamilyHandle* log_cf,
                    rocksdb::WriteBatch* batch) {
  TESSERA_CHECK(ValidateLogWrite(write).ok());
  const GroupId group = write.group_id;
  if (write.hard_state) {
    CheckOk(batch->Put(log_cf, HardStateKey(group), EncodeProtoRecord(*write.hard_state)));
  }
  if (write.truncate_from) {
    CheckOk(batch->DeleteRange(log_cf, LogEntriesFrom(group, *write.truncate_from),
                               LogEntriesEnd(group)));
  }
  for (const pb::Entry& entry : write.entries) {
    CheckOk(batch->Put(log_cf, LogEntryKey(group, entry.slot()), EncodeProtoRecord(entry)));
  }
  if (write.log_base) AppendLogBase(group, *write.log_base, log_cf, batch);
}

void AppendLogBase(GroupId group, const pb::LogBase& base, rocksdb::ColumnFamilyHandle* log_cf,
                   rocksdb::WriteBatch* batch) {
  TESSERA_CHECK(base.log_start() >= 1);
  CheckOk(batch->DeleteRange(log_cf, LogEntriesBegin(group), LogEntryKey(group, base.log_start())));
  CheckOk(batch->Put(log_cf, LogBaseKey(group), EncodeProtoRecord(base)));
}

}  // namespace tessera::storage
