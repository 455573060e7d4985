// BlobStore: a storage node's blobs, one checksummed file per blob under
// one directory (docs/formats/blobs.md, "Blob files"):
//   <dir>/<slot mod 256 as 2 hex digits>/<blob id>.blob
//
// Contract:
//  1. Put is durable when it returns OK: the file was written to a temporary
//     name, fsync'd, renamed into place, and its directory fsync'd. A crash
//     leaves either no file or the whole file (temporaries are removed by
//     Open). Put is idempotent: the same id with the same bytes is OK; the
//     same id with other bytes (or another owner) is Conflict; an existing
//     file that fails its checks is replaced. The owner (the `_s3` prefix of
//     the blob's object, at most kBlobOwnerBytesMax bytes) is stored in the
//     file header; files of format version 1 read back with an empty owner.
//  2. Read verifies the header and every 64 KiB block it touches (a range
//     read checks only its blocks): Corruption on any mismatch, a short or
//     overlong file, or a file naming another id; NotFound when the blob is
//     absent; InvalidArgument when `offset` lies past the end. It returns
//     min(length, total_size - offset) bytes, their CRC-32C (combined from
//     the verified block checksums, so the bytes are checksummed once) and
//     the blob's total size.
//  3. Delete removes the file and fsyncs its directory; NotFound when absent.
//  4. List returns ids in BlobId order, starting at slot `slot_from`, after
//     `after` (exclusive) when given, each with size, owner and file mtime
//     read from its header (a file whose header fails its checks is listed
//     with size 0, an empty owner and corrupt = true).
//  4a. Stat checks the header, owner and table of one blob (not its data):
//     NotFound when absent, Corruption when they fail.
//  5. Every file operation may block for milliseconds (fsync): call from
//     worker threads, never from io threads.
//  6. IOError for failures of the file system (including a failing
//     `before_sync` seam); InvalidArgument for data over kBlobBytesMax.
//
// Thread safety: every method may be called from any thread. Puts and
// deletes of the same id are serialized by a striped lock; reads take no
// lock (a rename replaces a file atomically).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blob/blob_file.h"
#include "blob/blob_id.h"
#include "common/result.h"
#include "common/shared_bytes.h"

namespace tessera::blob {

struct BlobStoreOptions {
  // Called before every fsync (file or directory); a non-OK status fails
  // the operation with it, as if the fsync had failed. May sleep (fault
  // injection of slow disks). Null: no seam.
  std::function<Status()> before_sync;
};

struct BlobReadResult {
  SharedBytes data;         // as read into memory, never copied after
  uint32_t crc32c = 0;      // Crc32c(data), from the verified block checksums
  uint64_t total_size = 0;  // of the whole blob
  std::string owner;        // empty for format-1 files
};

struct BlobStat {
  uint64_t size = 0;   // data bytes
  std::string owner;
  int64_t mtime_ms = 0;  // file modification time, Unix ms
};

struct BlobListEntry {
  BlobId id;
  uint64_t size = 0;  // data bytes (from the header; data not verified)
  std::string owner;
  int64_t mtime_ms = 0;
  bool corrupt = false;  // the header failed its checks
};

struct BlobListPage {
  std::vector<BlobListEntry> entries;  // ascending ids
  bool more = false;  // further ids may follow the last entry
};

// Monotonic counters since Open.
struct BlobStoreStats {
  uint64_t puts = 0;            // successful puts (new or identical)
  uint64_t put_bytes = 0;       // data bytes of new blobs written
  uint64_t reads = 0;           // successful reads
  uint64_t read_bytes = 0;      // data bytes returned
  uint64_t deletes = 0;         // files removed
  uint64_t corruptions = 0;     // reads (or put comparisons) that found a bad file
  uint64_t io_errors = 0;
};

class BlobStore {
 public:
  // Creates `dir` (and its parents) if missing, removes temporaries left by
  // a crash. IOError when the directory cannot be created or read.
  static Result<std::unique_ptr<BlobStore>> Open(std::string dir, BlobStoreOptions options = {});
  ~BlobStore();
  BlobStore(const BlobStore&) = delete;
  BlobStore& operator=(const BlobStore&) = delete;

  // `expected_crc32c`: the CRC-32C the data was sent with; Corruption, and
  // nothing written, when the data does not match it (checked while the
  // block table is computed, so the data is read once).
  Status Put(const BlobId& id, std::string_view owner, std::string_view data,
             std::optional<uint32_t> expected_crc32c = std::nullopt);
  Result<BlobReadResult> Read(const BlobId& id, uint64_t offset, uint64_t length);
  Result<BlobStat> Stat(const BlobId& id);
  Status Delete(const BlobId& id);
  // `limit`: 1..limits::kBlobListItemsMax (clamped).
  Result<BlobListPage> List(uint32_t slot_from, const std::optional<BlobId>& after, size_t limit);

  BlobStoreStats stats() const;
  const std::string& dir() const { return dir_; }
  // Where the blob's file lives (whether or not it exists).
  std::string PathOf(const BlobId& id) const;

 private:
  struct Counters;
  struct OpenFile;
  BlobStore(std::string dir, BlobStoreOptions options);

  // Opens the blob's file and checks header, size, owner and table.
  Result<std::unique_ptr<OpenFile>> OpenChecked(const BlobId& id);
  Result<BlobReadResult> ReadFile(const BlobId& id, uint64_t offset, uint64_t length);
  // The range [offset, offset + n) of the data, and its CRC-32C.
  struct Range {
    SharedBytes bytes;
    uint32_t crc32c = 0;
  };
  Result<Range> ReadBlocks(const OpenFile& file, uint64_t offset, uint64_t n);
  bool Describe(BlobListEntry& entry);
  Status Sync(int fd, const std::string& what);
  Status SyncDir(const std::string& dir);
  Status EnsureDir(uint32_t slot);
  // Corruption only when the data fails `expected_crc32c` (then nothing is
  // written); IOError for the file system's failures.
  Status WriteNew(const BlobId& id, std::string_view owner, std::string_view data,
                  std::optional<uint32_t> expected_crc32c);
  std::mutex& StripeOf(const BlobId& id);

  const std::string dir_;
  const BlobStoreOptions options_;
  std::unique_ptr<Counters> counters_;
  std::array<std::mutex, 64> stripes_;  // each guards puts/deletes of the ids hashing to it
  std::array<std::atomic<bool>, 256> dir_ready_{};  // slot directory exists, durably
};

}  // namespace tessera::blob
