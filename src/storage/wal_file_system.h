// WalFileSystem: the RocksDB FileSystem of a node store. Every file goes to
// the wrapped (default) file system except the write-ahead log's: those are
// ZeroFilledWalFiles (wal_zero_fill.h, D41), whose appends overwrite zeros
// written ahead of time, so that a group commit's fdatasync does not also
// write the inode.
//
// Invariant: only files named <digits>.log directly in the database
// directory are WAL files (RocksDB's naming); nothing else is touched.
// Reopening a WAL for appending is refused (NotSupported): RocksDB does so
// only with avoid_flush_during_recovery, which node stores never set, and
// an ordinary append would land after the zeros.
//
// Thread safety: as RocksDB requires of a FileSystem.
#pragma once

#include <rocksdb/file_system.h>

#include <memory>
#include <string>

#include "storage/wal_zero_fill.h"

namespace tessera::storage {

class WalFileSystem : public rocksdb::FileSystemWrapper {
 public:
  // `db_path`: the database directory whose WAL files this serves.
  WalFileSystem(std::shared_ptr<rocksdb::FileSystem> base, const std::string& db_path,
                WalZeroFillOptions zero_fill);
  ~WalFileSystem() override;

  // Starts / stops the zero filler; WAL files stay valid either way.
  void Start();
  void Stop();

  const char* Name() const override { return "TesseraWalFileSystem"; }
  rocksdb::IOStatus NewWritableFile(const std::string& fname, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReopenWritableFile(const std::string& fname, const rocksdb::FileOptions& options,
                                       std::unique_ptr<rocksdb::FSWritableFile>* result,
                                       rocksdb::IODebugContext* dbg) override;

  WalZeroFillStats zero_fill_stats() const { return filler_.stats(); }
  bool IsWalFile(const std::string& fname) const;

 private:
  const std::string db_path_;  // lexically normal, no trailing separator
  WalZeroFiller filler_;
};

}  // namespace tessera::storage
