// Maps RocksDB outcomes onto Tessera's Status codes.
//
// Thread safety: pure function.
#pragma once

#include <rocksdb/status.h>

#include <string_view>

#include "common/status.h"

namespace tessera::storage {

// OK stays OK; otherwise the matching code (Corruption, NotFound, IOError,
// InvalidArgument, Unavailable for busy/try-again, IOError for the rest) with
// `context` and RocksDB's message.
Status FromRocks(const rocksdb::Status& status, std::string_view context);

}  // namespace tessera::storage
