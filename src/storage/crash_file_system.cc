#include "storage/crash_file_system.h"

#include <algorithm>
#include <vector>

namespace tessera::storage {

namespace internal {
MemEnvHolder::MemEnvHolder() : mem_env(rocksdb::NewMemEnv(rocksdb::Env::Default())) {}
}  // namespace internal

// A writable file of one generation: after a crash (a newer generation) or
// while the disk fails, every write and sync fails and changes nothing.
class CrashFileSystem::File final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  File(CrashFileSystem* fs, std::string fname, uint64_t generation,
       std::unique_ptr<rocksdb::FSWritableFile> target)
      : FSWritableFileOwnerWrapper(std::move(target)),
        fs_(fs),
        fname_(std::move(fname)),
        generation_(generation) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    if (rocksdb::IOStatus usable = fs_->Usable(generation_); !usable.ok()) return usable;
    return Appending(data, target()->Append(data, options, dbg));
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    if (rocksdb::IOStatus usable = fs_->Usable(generation_); !usable.ok()) return usable;
    return Appending(data, target()->Append(data, options, info, dbg));
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice&, uint64_t, const rocksdb::IOOptions&,
                                     rocksdb::IODebugContext*) override {
    return rocksdb::IOStatus::NotSupported("CrashFileSystem: positioned appends");
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice&, uint64_t, const rocksdb::IOOptions&,
                                     const rocksdb::DataVerificationInfo&,
                                     rocksdb::IODebugContext*) override {
    return rocksdb::IOStatus::NotSupported("CrashFileSystem: positioned appends");
  }
  rocksdb::IOStatus Truncate(uint64_t size, const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override {
    if (rocksdb::IOStatus usable = fs_->Usable(generation_); !usable.ok()) return usable;
    rocksdb::IOStatus s = target()->Truncate(size, options, dbg);
    if (s.ok()) fs_->Truncated(fname_, size);
    return s;
  }
  rocksdb::IOStatus Flush(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    if (rocksdb::IOStatus usable = fs_->Usable(generation_); !usable.ok()) return usable;
    return target()->Flush(options, dbg);
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    if (rocksdb::IOStatus usable = fs_->Usable(generation_); !usable.ok()) return usable;
    return Syncing(target()->Sync(options, dbg));
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    if (rocksdb::IOStatus usable = fs_->Usable(generation_); !usable.ok()) return usable;
    return Syncing(target()->Fsync(options, dbg));
  }
  // RocksDB's SyncWAL (the group commit's sync) needs it; the tracking
  // is under the file system's lock.
  bool IsSyncThreadSafe() const override { return true; }
  rocksdb::IOStatus RangeSync(uint64_t, uint64_t, const rocksdb::IOOptions&,
                              rocksdb::IODebugContext*) override {
    return fs_->Usable(generation_);  // a hint only: durability comes from Sync
  }
  // Closing makes nothing durable; a crashed handle closes without effect.
  rocksdb::IOStatus Close(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    if (!fs_->Usable(generation_).ok()) return rocksdb::IOStatus::OK();
    return target()->Close(options, dbg);
  }

 private:
  rocksdb::IOStatus Appending(const rocksdb::Slice& data, rocksdb::IOStatus appended) {
    if (appended.ok()) fs_->Appended(fname_, data.size());
    return appended;
  }
  rocksdb::IOStatus Syncing(rocksdb::IOStatus synced) {
    if (synced.ok()) fs_->Synced(fname_);
    return synced;
  }

  CrashFileSystem* const fs_;
  const std::string fname_;
  const uint64_t generation_;
};

CrashFileSystem::CrashFileSystem()
    : internal::MemEnvHolder(), rocksdb::FileSystemWrapper(mem_env->GetFileSystem()) {}

CrashFileSystem::~CrashFileSystem() = default;

rocksdb::IOStatus CrashFileSystem::Usable(uint64_t generation) const {
  if (generation != generation_.load()) return rocksdb::IOStatus::IOError("file handle of a crashed process");
  if (fail_writes_.load()) return rocksdb::IOStatus::IOError("injected disk error");
  return rocksdb::IOStatus::OK();
}

void CrashFileSystem::Appended(const std::string& fname, uint64_t bytes) {
  std::lock_guard lock(mu_);
  files_[fname].size += bytes;
}

void CrashFileSystem::Synced(const std::string& fname) {
  if (skip_log_sync_.load() && fname.ends_with(".log")) return;
  std::lock_guard lock(mu_);
  FileState& state = files_[fname];
  state.synced = state.size;
}

void CrashFileSystem::Truncated(const std::string& fname, uint64_t size) {
  std::lock_guard lock(mu_);
  auto it = files_.find(fname);
  if (it == files_.end()) return;  // a truncation of durable bytes: durable
  it->second.size = std::min(it->second.size, size);
  it->second.synced = std::min(it->second.synced, size);
}

rocksdb::IOStatus CrashFileSystem::Wrap(const std::string& fname, bool truncate,
                                        rocksdb::IOStatus opened,
                                        std::unique_ptr<rocksdb::FSWritableFile>* result) {
  if (!opened.ok()) return opened;
  uint64_t size = 0;
  if (!truncate) {
    rocksdb::IOStatus sized = target()->GetFileSize(fname, rocksdb::IOOptions(), &size, nullptr);
    if (!sized.ok()) return sized;
  }
  {
    std::lock_guard lock(mu_);
    auto it = files_.find(fname);
    if (truncate) {
      files_[fname] = FileState{};  // an empty file exists: durable (see header)
    } else if (it == files_.end()) {
      files_[fname] = FileState{size, size};
    }
  }
  *result = std::make_unique<File>(this, fname, generation_.load(), std::move(*result));
  return opened;
}

rocksdb::IOStatus CrashFileSystem::NewWritableFile(const std::string& fname,
                                                   const rocksdb::FileOptions& options,
                                                   std::unique_ptr<rocksdb::FSWritableFile>* result,
                                                   rocksdb::IODebugContext* dbg) {
  if (fail_writes_.load()) return rocksdb::IOStatus::IOError("injected disk error");
  return Wrap(fname, true, target()->NewWritableFile(fname, options, result, dbg), result);
}

rocksdb::IOStatus CrashFileSystem::ReopenWritableFile(
    const std::string& fname, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSWritableFile>* result, rocksdb::IODebugContext* dbg) {
  if (fail_writes_.load()) return rocksdb::IOStatus::IOError("injected disk error");
  return Wrap(fname, false, target()->ReopenWritableFile(fname, options, result, dbg), result);
}

rocksdb::IOStatus CrashFileSystem::ReuseWritableFile(
    const std::string& fname, const std::string& old_fname, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSWritableFile>* result, rocksdb::IODebugContext* dbg) {
  rocksdb::IOStatus renamed = RenameFile(old_fname, fname, rocksdb::IOOptions(), dbg);
  if (!renamed.ok()) return renamed;
  return NewWritableFile(fname, options, result, dbg);
}

rocksdb::IOStatus CrashFileSystem::RenameFile(const std::string& src, const std::string& dest,
                                              const rocksdb::IOOptions& options,
                                              rocksdb::IODebugContext* dbg) {
  if (fail_writes_.load()) return rocksdb::IOStatus::IOError("injected disk error");
  rocksdb::IOStatus renamed = target()->RenameFile(src, dest, options, dbg);
  if (!renamed.ok()) return renamed;
  std::lock_guard lock(mu_);
  files_.erase(dest);
  auto it = files_.find(src);
  if (it != files_.end()) {
    files_[dest] = it->second;
    files_.erase(src);
  }
  return renamed;
}

rocksdb::IOStatus CrashFileSystem::DeleteFile(const std::string& fname,
                                              const rocksdb::IOOptions& options,
                                              rocksdb::IODebugContext* dbg) {
  rocksdb::IOStatus deleted = target()->DeleteFile(fname, options, dbg);
  std::lock_guard lock(mu_);
  files_.erase(fname);
  return deleted;
}

uint64_t CrashFileSystem::unsynced_bytes() const {
  std::lock_guard lock(mu_);
  uint64_t bytes = 0;
  for (const auto& [name, state] : files_) bytes += state.size - state.synced;
  return bytes;
}

uint64_t CrashFileSystem::Crash(const TornTail& keep) {
  ++generation_;  // from here on the old handles change nothing
  std::map<std::string, FileState> files;
  {
    std::lock_guard lock(mu_);
    files.swap(files_);
  }
  uint64_t lost = 0;
  std::map<std::string, FileState> after;
  for (const auto& [name, state] : files) {
    const uint64_t unsynced = state.size - state.synced;
    const uint64_t kept = keep && unsynced > 0 ? std::min(keep(name, unsynced), unsynced) : 0;
    lost += unsynced - kept;
    after[name] = FileState{state.synced + kept, state.synced + kept};
    // A file the crashed process deleted meanwhile is gone: nothing to do.
    if (unsynced > 0) (void)Shorten(name, state.synced + kept);
  }
  std::lock_guard lock(mu_);
  for (auto& [name, state] : after) files_.emplace(name, state);
  return lost;
}

rocksdb::IOStatus CrashFileSystem::Shorten(const std::string& fname, uint64_t length) {
  std::unique_ptr<rocksdb::FSSequentialFile> in;
  rocksdb::IOStatus s = target()->NewSequentialFile(fname, rocksdb::FileOptions(), &in, nullptr);
  if (!s.ok()) return s;
  std::string kept(length, '\0');
  rocksdb::Slice read;
  s = in->Read(length, rocksdb::IOOptions(), &read, kept.data(), nullptr);
  if (!s.ok()) return s;
  kept.resize(read.size());
  in.reset();
  std::unique_ptr<rocksdb::FSWritableFile> out;
  s = target()->NewWritableFile(fname, rocksdb::FileOptions(), &out, nullptr);
  if (!s.ok()) return s;
  s = out->Append(kept, rocksdb::IOOptions(), nullptr);
  if (!s.ok()) return s;
  return out->Close(rocksdb::IOOptions(), nullptr);
}

}  // namespace tessera::storage
