// Thin, EINTR-safe wrappers over the POSIX file calls that durable storage
// needs (an owning descriptor, complete writes, data and directory syncs),
// reporting failures as IOError with the path and strerror.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera::posix {

// Owns a file descriptor: closed at destruction unless Close() ran.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd();
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // close(2) reports delayed write errors on some file systems; returns its
  // result (0 when already closed).
  int Close();

 private:
  int fd_;
};

Status ErrnoStatus(const std::string& what, int err);
// write(2) until every byte is written.
Status WriteAll(int fd, std::string_view bytes, const std::string& what);
// pwrite(2) until every byte is written at `offset`.
Status PwriteAll(int fd, std::string_view bytes, uint64_t offset, const std::string& what);
Status Fsync(int fd, const std::string& what);
Status Fdatasync(int fd, const std::string& what);
// fsync of the directory itself: makes creations, renames and deletions of
// its entries durable.
Status SyncDirectory(const std::string& dir);

}  // namespace tessera::posix
