#include "storage/wal_file_system.h"

#include <fcntl.h>

#include <cerrno>
#include <filesystem>
#include <string_view>

#include "common/posix_file.h"

namespace tessera::storage {
namespace {

std::string NormalDirectory(const std::string& path) {
  std::string normal = std::filesystem::path(path).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

}  // namespace

WalFileSystem::WalFileSystem(std::shared_ptr<rocksdb::FileSystem> base, const std::string& db_path,
                             WalZeroFillOptions zero_fill)
    : rocksdb::FileSystemWrapper(std::move(base)), db_path_(NormalDirectory(db_path)), filler_(zero_fill) {}

WalFileSystem::~WalFileSystem() { Stop(); }

void WalFileSystem::Start() { filler_.Start(); }

void WalFileSystem::Stop() { filler_.Stop(); }

bool WalFileSystem::IsWalFile(const std::string& fname) const {
  const std::filesystem::path path(fname);
  if (NormalDirectory(path.parent_path().string()) != db_path_) return false;
  const std::string name = path.filename().string();
  constexpr std::string_view kSuffix = ".log";
  if (name.size() <= kSuffix.size() || !name.ends_with(kSuffix)) return false;
  for (size_t i = 0; i + kSuffix.size() < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
  }
  return true;
}

rocksdb::IOStatus WalFileSystem::NewWritableFile(const std::string& fname,
                                                 const rocksdb::FileOptions& options,
                                                 std::unique_ptr<rocksdb::FSWritableFile>* result,
                                                 rocksdb::IODebugContext* dbg) {
  if (options.use_direct_writes || options.use_mmap_writes || !IsWalFile(fname)) {
    return target()->NewWritableFile(fname, options, result, dbg);
  }
  posix::Fd fd(::open(fname.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    return rocksdb::IOStatus::IOError(posix::ErrnoStatus("create " + fname, errno).message());
  }
  *result = filler_.MakeFile(std::move(fd), fname, options);
  return rocksdb::IOStatus::OK();
}

rocksdb::IOStatus WalFileSystem::ReopenWritableFile(const std::string& fname,
                                                    const rocksdb::FileOptions& options,
                                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                                    rocksdb::IODebugContext* dbg) {
  if (IsWalFile(fname)) {
    return rocksdb::IOStatus::NotSupported("reopening a WAL file for appending: " + fname);
  }
  return target()->ReopenWritableFile(fname, options, result, dbg);
}

}  // namespace tessera::storage
