// Prefixes under which RocksDB keeps a memtable insert hint
// (ColumnFamilyOptions::memtable_insert_with_hint_prefix_extractor).
//
// A memtable insert normally searches the whole skiplist from the top: with
// a large memtable, a cache miss per level. With a hint RocksDB remembers,
// per prefix, where the last key of that prefix went and starts the next
// search there, which is nearly free when the next key lands beside it. That
// holds for the keys every replicated write touches besides the user's own:
//  * log family: a group's entries arrive in slot order (prefix: group id +
//    tag); its hard state and log base are overwrites of one key each (the
//    new version sorts first among its versions; prefix: the key).
//  * state family: the applied-index key of a group, overwritten by every
//    apply (prefix: the key). User keys land anywhere and get no hint.
// A hint changes where a search starts, never what the memtable holds:
// RocksDB checks the hinted position and searches further when the key does
// not belong there.
//
// Invariant: no range-deletion start key is in a domain. RocksDB 7.8 keeps
// one hint table for a memtable's point keys and its range tombstones and
// corrupts its skiplist (an assertion in a debug RocksDB) when a range
// deletion reuses a point key's hint; later releases skip hints for range
// tombstones. The domains are therefore exact key shapes, and range
// deletions start at LogEntriesBegin, LogEntriesFrom, UserKeysBegin,
// StagedKeysBegin or GroupBegin, none of which has such a shape.
//
// Thread safety: the transforms are stateless; RocksDB shares them.
#pragma once

#include <rocksdb/slice_transform.h>

#include <memory>
#include <string_view>

namespace tessera::storage {

// True for the log-family keys that get a hint: entry, hard state, log base.
bool HintedInLogFamily(std::string_view key);
// True for the state-family keys that get a hint: applied index.
bool HintedInStateFamily(std::string_view key);

std::shared_ptr<const rocksdb::SliceTransform> LogFamilyInsertHintPrefix();
std::shared_ptr<const rocksdb::SliceTransform> StateFamilyInsertHintPrefix();

}  // namespace tessera::storage
