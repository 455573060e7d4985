// CrashFileSystem: an in-memory rocksdb::FileSystem that can crash, for
// simulation and tests (LevelDB's fault-injection Env, D86). Data appended
// to a file is readable at once (the page cache) but durable only once a
// Sync/Fsync of that file covers it. Crash() is a power cut: every file
// keeps its synced bytes plus, as the caller decides, a prefix of its
// unsynced tail (a torn write), and every file handle opened before the
// crash fails from then on, so the dead store's shutdown writes nothing.
// SetFailWrites makes every write and sync fail, a disk returning errors.
//
// Limits of the model: directory entries are durable at once (creation,
// rename and deletion of files); a torn tail is a prefix, never garbage.
//
// Thread safety: every method may be called from any thread (RocksDB's
// threads write while the owner crashes).
#pragma once

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace tessera::storage {

namespace internal {
// Owns the in-memory Env before the FileSystemWrapper base is built.
struct MemEnvHolder {
  std::unique_ptr<rocksdb::Env> mem_env;
  MemEnvHolder();
};
}  // namespace internal

class CrashFileSystem : private internal::MemEnvHolder, public rocksdb::FileSystemWrapper {
 public:
  CrashFileSystem();
  ~CrashFileSystem() override;

  const char* Name() const override { return "TesseraCrashFileSystem"; }
  rocksdb::IOStatus NewWritableFile(const std::string& fname, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReopenWritableFile(const std::string& fname,
                                       const rocksdb::FileOptions& options,
                                       std::unique_ptr<rocksdb::FSWritableFile>* result,
                                       rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReuseWritableFile(const std::string& fname, const std::string& old_fname,
                                      const rocksdb::FileOptions& options,
                                      std::unique_ptr<rocksdb::FSWritableFile>* result,
                                      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus RenameFile(const std::string& src, const std::string& target,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteFile(const std::string& fname, const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;

  // Of a file's unsynced bytes, how many survive the crash (clamped to
  // them); null: none.
  using TornTail = std::function<uint64_t(const std::string& fname, uint64_t unsynced_bytes)>;
  // The power cut. Returns the unsynced bytes lost, over all files.
  uint64_t Crash(const TornTail& keep = {});
  void SetFailWrites(bool fail) { fail_writes_ = fail; }
  // The skip-fsync bug (tests only): a sync of a write-ahead log file
  // ("*.log") reports success and makes nothing durable, as a store that
  // skipped its fsync would; a crash then loses what it promised. Other
  // files (MANIFEST, SSTs) still sync, so the store opens after the crash.
  void SetSkipLogSync(bool skip) { skip_log_sync_ = skip; }
  // Bytes appended but not synced, over all files.
  uint64_t unsynced_bytes() const;

 private:
  class File;
  struct FileState {
    uint64_t size = 0;    // bytes appended
    uint64_t synced = 0;  // bytes durable, <= size
  };
  // The File handles' view: OK, or the IOError of a crashed handle or a
  // failing disk.
  rocksdb::IOStatus Usable(uint64_t generation) const;
  void Appended(const std::string& fname, uint64_t bytes);
  void Synced(const std::string& fname);
  void Truncated(const std::string& fname, uint64_t size);
  rocksdb::IOStatus Wrap(const std::string& fname, bool truncate, rocksdb::IOStatus opened,
                         std::unique_ptr<rocksdb::FSWritableFile>* result);
  // Rewrites `fname` to its first `length` bytes.
  rocksdb::IOStatus Shorten(const std::string& fname, uint64_t length);

  mutable std::mutex mu_;  // guards files_
  std::map<std::string, FileState> files_;  // every file written through this file system
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> fail_writes_{false};
  std::atomic<bool> skip_log_sync_{false};
};

}  // namespace tessera::storage
