// What the crash-writer helper (wal_crash_writer_main.cc) writes before it
// dies, shared with the test that recovers it (wal_file_system_test.cc).
#pragma once

#include <string>

#include "storage/node_store.h"
#include "tessera/consensus.pb.h"

namespace tessera::storage::crash_writer {

inline constexpr GroupId kGroup = 5;
inline constexpr Slot kSlots = 3000;
inline constexpr Slot kSlotsPerWrite = 10;

// Small zero-fill sizes and a 4 MiB memtable, so that kSlots entries of
// ~4 KiB cross many extensions and several WAL files.
inline NodeStoreOptions Options(const std::string& path) {
  NodeStoreOptions options;
  options.path = path;
  options.write_buffer_bytes = 4 << 20;
  options.wal_zero_fill.chunk_bytes = 128 << 10;
  options.wal_zero_fill.lead_bytes = 64 << 10;
  options.wal_zero_fill.first_gap_bytes = 32 << 10;
  return options;
}

inline pb::Entry EntryAt(Slot slot) {
  pb::Entry entry;
  entry.set_slot(slot);
  entry.mutable_ballot()->set_round(1);
  entry.mutable_ballot()->set_replica(1);
  entry.set_type(pb::ENTRY_COMMAND);
  entry.set_command(std::string(4000, static_cast<char>('A' + slot % 26)) + std::to_string(slot));
  entry.set_request_id(slot);
  return entry;
}

// Exit codes of the helper.
inline constexpr int kExitDone = 0;
inline constexpr int kExitUsage = 1;
inline constexpr int kExitWriteFailed = 2;
inline constexpr int kExitNoZerosAhead = 3;

}  // namespace tessera::storage::crash_writer
