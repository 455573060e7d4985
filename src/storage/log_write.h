// LogWrite: what consensus::Ready step 1 asks one group to persist, and its
// encoding into a WriteBatch of the log column family
// (docs/formats/storage.md, "Log writes"). Applied atomically, in order:
// hard state, truncation, entries, log base.
//
// Mapping from a Ready: hard_state = ready.hard_state, truncate_from =
// ready.truncate_from, entries = ready.entries; log_base is set by the host
// after a compaction or snapshot install it routes through a log write.
//
// Thread safety: pure functions over their arguments.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <optional>
#include <vector>

#include "common/status.h"
#include "storage/key_codec.h"
#include "tessera/consensus.pb.h"

namespace tessera::storage {

struct LogWrite {
  GroupId group_id = 0;
  std::optional<pb::HardState> hard_state;
  // Deletes every slot >= truncate_from (before `entries` are written).
  std::optional<Slot> truncate_from;
  // Each overwrites its slot (entry.slot).
  std::vector<pb::Entry> entries;
  // Deletes every slot < log_base.log_start, then records the log base.
  std::optional<pb::LogBase> log_base;
};

// InvalidArgument when a slot, truncate_from or log_start is 0.
Status ValidateLogWrite(const LogWrite& write);

// Appends `write` (valid: checked) to `batch` in the documented order.
void AppendLogWrite(const LogWrite& write, rocksdb::ColumnFamilyHandle* log_cf,
                    rocksdb::WriteBatch* batch);
// Deletes `group`'s slots < base.log_start (>= 1, checked) and puts `base`.
void AppendLogBase(GroupId group, const pb::LogBase& base, rocksdb::ColumnFamilyHandle* log_cf,
                   rocksdb::WriteBatch* batch);

}  // namespace tessera::storage
