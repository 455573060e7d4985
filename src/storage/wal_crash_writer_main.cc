// Test helper: writes crash_writer::kSlots synced log entries into a node
// store at argv[1], then dies without closing anything (as kill -9 would),
// leaving zero-tailed WAL files behind. A separate process, not a fork of
// the test: RocksDB's background threads do not survive a fork.
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "storage/wal_crash_writer.h"

int main(int argc, char** argv) {
  using namespace tessera::storage;
  if (argc != 2) return crash_writer::kExitUsage;
  auto store = NodeStore::Open(crash_writer::Options(argv[1]));
  if (!store.ok()) ::_exit(crash_writer::kExitWriteFailed);
  for (Slot slot = 1; slot <= crash_writer::kSlots; slot += crash_writer::kSlotsPerWrite) {
    LogWrite write;
    write.group_id = crash_writer::kGroup;
    for (Slot s = slot; s < slot + crash_writer::kSlotsPerWrite; ++s) {
      write.entries.push_back(crash_writer::EntryAt(s));
    }
    if (!(*store)->WriteLog(write).ok()) ::_exit(crash_writer::kExitWriteFailed);
    // Now and then give the filler time, so that writes land on zeros.
    if (slot % 500 == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if ((*store)->wal_zero_fill_stats().extensions == 0) ::_exit(crash_writer::kExitNoZerosAhead);
  ::_exit(crash_writer::kExitDone);
}
