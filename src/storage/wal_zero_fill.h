// Write-ahead-log files with written zeros kept ahead of their end (D41).
//
// Why: an fdatasync after an append that grows a file must also write the
// inode (new size, newly allocated extents): on the disks we run on, three
// serial I/Os per group commit instead of two. An append that overwrites
// blocks already written inside the file's size makes the sync the data
// plus a cache flush. fallocate does not help: it leaves unwritten extents
// whose conversion at the first write is the same metadata write.
//
// ZeroFilledWalFile is the FSWritableFile of one WAL. WalZeroFiller is one
// background thread that, whenever a file's written zeros run short of
// `lead_bytes` beyond its end, appends `chunk_bytes` more zeros past the end
// and fdatasyncs them, so later appends overwrite durable zeros.
//
// Invariants:
//  1. The log's bytes are always a prefix [0, logical size) of the file;
//     whatever follows until the physical end reads as zeros (written zeros
//     or a hole). RocksDB's log reader skips zero-type, zero-length headers
//     (the format it keeps for preallocated files), so a crash at any point
//     leaves a WAL that recovers exactly as an ordinary one.
//  2. An extension never overlaps bytes an append reserved: it starts at or
//     after `first_gap_bytes` past the logical end, and an append that would
//     reach an extension in flight waits for it.
//  3. Durability never depends on the zeros: every Sync is an fdatasync,
//     which writes whatever metadata the data needs. A failed extension
//     stops extending that file, nothing else.
//  4. Close truncates the file to its logical size (not synced: a crash that
//     keeps the zeros is harmless, invariant 1).
//
// Thread safety: RocksDB serialises Append/Truncate/Close of one file; Sync
// and GetFileSize may run concurrently with them. WalZeroFiller's methods
// may be called from any thread.
#pragma once

#include <rocksdb/file_system.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/posix_file.h"

namespace tessera::storage {

struct WalZeroFillOptions {
  bool enabled = true;
  uint64_t chunk_bytes = 4 << 20;        // zeros added per extension
  uint64_t lead_bytes = 2 << 20;         // extend when fewer lie ahead
  uint64_t first_gap_bytes = 256 << 10;  // room left for appends meanwhile
};

struct WalZeroFillStats {
  uint64_t extensions = 0;       // extensions made durable
  uint64_t bytes_zeroed = 0;     // zeros written by them
  uint64_t failures = 0;         // extensions that failed (file not extended again)
  uint64_t appends_waited = 0;   // appends that waited for an extension
  uint64_t requests_dropped = 0; // queue full: file left to grow as usual
};

struct ZeroTail;

class WalZeroFiller {
 public:
  explicit WalZeroFiller(WalZeroFillOptions options);
  ~WalZeroFiller();  // Stop()
  WalZeroFiller(const WalZeroFiller&) = delete;
  WalZeroFiller& operator=(const WalZeroFiller&) = delete;

  void Start();
  // Stops the thread; queued extensions are dropped (files stay valid).
  // Idempotent.
  void Stop();

  // The WAL file at `path`, opened as `fd` (empty or not): appends start at
  // its current end.
  std::unique_ptr<rocksdb::FSWritableFile> MakeFile(posix::Fd fd, std::string path,
                                                    const rocksdb::FileOptions& options);

  WalZeroFillStats stats() const;
  const WalZeroFillOptions& options() const { return options_; }

 private:
  friend class ZeroFilledWalFile;
  // Queues `tail` for an extension (a tail is queued at most once); when the
  // queue is full or the filler stopped, clears `tail->queued` instead.
  void Request(std::shared_ptr<ZeroTail> tail);
  void CountAppendWait();
  void Run();
  void Extend(ZeroTail& tail);

  const WalZeroFillOptions options_;
  mutable std::mutex mutex_;  // guards queue_, stats_, stopping_
  std::condition_variable wake_;
  std::deque<std::shared_ptr<ZeroTail>> queue_;
  WalZeroFillStats stats_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tessera::storage
