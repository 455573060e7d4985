// Reading a group's durable consensus state back after a restart
// (docs/formats/storage.md, "Recovery"). Every record is verified; a bad
// record, an entry below log_start, a hole in the slots or applied state
// behind the log base is Corruption naming the group (and the slot).
//
// Thread safety: functions over their arguments, safe concurrently with
// writers (reads go through a RocksDB snapshot).
#pragma once

#include <rocksdb/db.h>

#include <vector>

#include "common/result.h"
#include "consensus/replica.h"
#include "storage/column_families.h"
#include "storage/key_codec.h"
#include "tessera/consensus.pb.h"

namespace tessera::storage {

// Hard state, log base, entries (contiguous from log_start) and applied
// index of `group`, read under one snapshot. A group with no records yields
// the bootstrap state (default hard state, log_start 1, no entries,
// applied_index 0).
Result<consensus::RecoveredState> RecoverGroupState(const ColumnFamilies& cfs, GroupId group);

// The stored log base of `group`; LogBase{log_start = 1} when none.
Result<pb::LogBase> ReadLogBase(const ColumnFamilies& cfs, const rocksdb::ReadOptions& read,
                                GroupId group);

// Every group id with a record in the log or state family, ascending.
Result<std::vector<GroupId>> ListStoredGroups(const ColumnFamilies& cfs);

}  // namespace tessera::storage
