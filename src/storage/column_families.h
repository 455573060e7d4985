// The column families of a node's RocksDB instance (docs/formats/storage.md)
// and the handles the storage code passes around.
//
// Thread safety: the handles are owned by NodeStore and stay valid until it
// is destroyed; RocksDB makes their concurrent use safe.
#pragma once

#include <rocksdb/db.h>

#include <string_view>

namespace tessera::storage {

inline constexpr std::string_view kLogColumnFamily = "log";      // log, hard state, log base
inline constexpr std::string_view kStateColumnFamily = "state";  // applied state
inline constexpr std::string_view kMetaColumnFamily = "meta";    // node metadata

// Non-owning view of an open store.
struct ColumnFamilies {
  rocksdb::DB* db = nullptr;
  rocksdb::ColumnFamilyHandle* log = nullptr;
  rocksdb::ColumnFamilyHandle* state = nullptr;
  rocksdb::ColumnFamilyHandle* meta = nullptr;
};

}  // namespace tessera::storage
