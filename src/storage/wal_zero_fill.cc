#include "storage/wal_zero_fill.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <string_view>

#include "common/check.h"
#include "common/limits.h"
#include "common/thread_name.h"

namespace tessera::storage {
namespace {

constexpr uint64_t kNoExtension = std::numeric_limits<uint64_t>::max();
// Extensions start and end on RocksDB's 32 KiB log blocks, so that a zero
// run never begins a block's records mid-way.
constexpr uint64_t kAlignBytes = 32 << 10;
// One write of zeros; also the step at which writeback starts early
// (sync_file_range), so the extension's fdatasync does not push megabytes
// at once in front of a group commit's sync.
constexpr size_t kZeroWriteBytes = 1 << 20;

const std::string& Zeros() {
  static const std::string zeros(kZeroWriteBytes, '\0');
  return zeros;
}

rocksdb::IOStatus ToIoStatus(const Status& status) {
  if (status.ok()) return rocksdb::IOStatus::OK();
  return rocksdb::IOStatus::IOError(status.message());
}

}  // namespace

// What one WAL file shares with the filler. The file owns the descriptor's
// lifetime: it closes it in Close, after marking the tail closed and waiting
// for an extension in flight, so the filler never touches a closed fd.
struct ZeroTail {
  ZeroTail(posix::Fd f, std::string p, uint64_t size)
      : fd(std::move(f)), path(std::move(p)), logical(size), physical(size) {}

  uint64_t ZerosAheadLocked() const { return physical > logical ? physical - logical : 0; }

  posix::Fd fd;
  const std::string path;
  std::mutex mutex;  // guards everything below
  std::condition_variable extension_done;
  uint64_t logical;   // bytes reserved by appends: the log's size
  uint64_t physical;  // end of the last durable extension, or the size at open
  uint64_t extending_from = kNoExtension;  // start of the extension in flight
  bool queued = false;  // in the filler's queue or being extended
  bool closed = false;
  bool failed = false;  // an extension failed: never extended again
};

class ZeroFilledWalFile : public rocksdb::FSWritableFile {
 public:
  ZeroFilledWalFile(std::shared_ptr<ZeroTail> tail, WalZeroFiller* filler,
                    const rocksdb::FileOptions& options)
      : rocksdb::FSWritableFile(options), tail_(std::move(tail)), filler_(filler) {}

  ~ZeroFilledWalFile() override {
    if (!tail_->fd.valid()) return;
    CloseFile().PermitUncheckedError();
  }

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions&,
                           rocksdb::IODebugContext*) override {
    uint64_t offset = 0;
    bool request = false;
    {
      std::unique_lock<std::mutex> lock(tail_->mutex);
      offset = tail_->logical;
      if (tail_->extending_from != kNoExtension && offset + data.size() > tail_->extending_from) {
        filler_->CountAppendWait();  // invariant 2
        tail_->extension_done.wait(lock, [&] { return tail_->extending_from == kNoExtension; });
      }
      tail_->logical = offset + data.size();
      request = filler_->options().enabled && !tail_->queued && !tail_->failed &&
                tail_->ZerosAheadLocked() < filler_->options().lead_bytes;
      if (request) tail_->queued = true;
    }
    if (request) filler_->Request(tail_);
    return ToIoStatus(posix::PwriteAll(tail_->fd.get(), std::string_view(data.data(), data.size()),
                                       offset, tail_->path));
  }

  rocksdb::IOStatus Truncate(uint64_t size, const rocksdb::IOOptions&, rocksdb::IODebugContext*) override {
    std::unique_lock<std::mutex> lock(tail_->mutex);
    tail_->extension_done.wait(lock, [&] { return tail_->extending_from == kNoExtension; });
    if (::ftruncate(tail_->fd.get(), static_cast<off_t>(size)) != 0) {
      return ToIoStatus(posix::ErrnoStatus("truncate " + tail_->path, errno));
    }
    tail_->logical = size;
    tail_->physical = size;
    return rocksdb::IOStatus::OK();
  }

  rocksdb::IOStatus Close(const rocksdb::IOOptions&, rocksdb::IODebugContext*) override {
    return CloseFile();
  }
  rocksdb::IOStatus Flush(const rocksdb::IOOptions&, rocksdb::IODebugContext*) override {
    return rocksdb::IOStatus::OK();  // nothing is buffered here
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions&, rocksdb::IODebugContext*) override {
    return ToIoStatus(posix::Fdatasync(tail_->fd.get(), tail_->path));
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions&, rocksdb::IODebugContext*) override {
    return ToIoStatus(posix::Fsync(tail_->fd.get(), tail_->path));
  }
  bool IsSyncThreadSafe() const override { return true; }
  uint64_t GetFileSize(const rocksdb::IOOptions&, rocksdb::IODebugContext*) override {
    std::lock_guard<std::mutex> lock(tail_->mutex);
    return tail_->logical;
  }

 private:
  // Invariant 4.
  rocksdb::IOStatus CloseFile() {
    uint64_t logical = 0;
    {
      std::unique_lock<std::mutex> lock(tail_->mutex);
      if (tail_->closed) return rocksdb::IOStatus::OK();
      tail_->closed = true;
      tail_->extension_done.wait(lock, [&] { return tail_->extending_from == kNoExtension; });
      logical = tail_->logical;
    }
    Status result;
    struct stat st {};
    if (::fstat(tail_->fd.get(), &st) != 0) {
      result = posix::ErrnoStatus("stat " + tail_->path, errno);
    } else if (static_cast<uint64_t>(st.st_size) != logical &&
               ::ftruncate(tail_->fd.get(), static_cast<off_t>(logical)) != 0) {
      result = posix::ErrnoStatus("truncate " + tail_->path, errno);
    }
    if (tail_->fd.Close() != 0 && result.ok()) result = posix::ErrnoStatus("close " + tail_->path, errno);
    return ToIoStatus(result);
  }

  const std::shared_ptr<ZeroTail> tail_;
  WalZeroFiller* const filler_;  // outlives its files
};

WalZeroFiller::WalZeroFiller(WalZeroFillOptions options) : options_(options) {
  TESSERA_CHECK(options_.chunk_bytes > 0 && options_.chunk_bytes % kAlignBytes == 0);
}

WalZeroFiller::~WalZeroFiller() { Stop(); }

void WalZeroFiller::Start() {
  TESSERA_CHECK(!thread_.joinable() && "WalZeroFiller started twice");
  if (!options_.enabled) return;
  thread_ = StartNamedThread("wal-zero-fill", [this] { Run(); });
}

void WalZeroFiller::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::unique_ptr<rocksdb::FSWritableFile> WalZeroFiller::MakeFile(posix::Fd fd, std::string path,
                                                                 const rocksdb::FileOptions& options) {
  struct stat st {};
  const uint64_t size = ::fstat(fd.get(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  auto tail = std::make_shared<ZeroTail>(std::move(fd), std::move(path), size);
  if (options_.enabled) {
    tail->queued = true;
    Request(tail);
  }
  return std::make_unique<ZeroFilledWalFile>(std::move(tail), this, options);
}

WalZeroFillStats WalZeroFiller::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void WalZeroFiller::Request(std::shared_ptr<ZeroTail> tail) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopping_ && queue_.size() < limits::kWalZeroFillQueueMax) {
      queue_.push_back(std::move(tail));
      wake_.notify_one();
      return;
    }
    if (!stopping_) ++stats_.requests_dropped;
  }
  // Not queued: the file grows as an ordinary one until a later append asks
  // again.
  std::lock_guard<std::mutex> lock(tail->mutex);
  tail->queued = false;
}

void WalZeroFiller::CountAppendWait() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.appends_waited;
}

void WalZeroFiller::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    std::shared_ptr<ZeroTail> tail = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    Extend(*tail);
    lock.lock();
  }
}

// Invariants 2 and 3.
void WalZeroFiller::Extend(ZeroTail& tail) {
  uint64_t start = 0;
  {
    std::lock_guard<std::mutex> lock(tail.mutex);
    if (tail.closed || tail.failed) return;
    const uint64_t past_appends =
        (tail.logical + options_.first_gap_bytes + kAlignBytes - 1) / kAlignBytes * kAlignBytes;
    start = std::max(tail.physical, past_appends);
    tail.extending_from = start;
  }
  const uint64_t end = start + options_.chunk_bytes;
  Status written;
  for (uint64_t offset = start; offset < end && written.ok(); offset += kZeroWriteBytes) {
    {
      std::lock_guard<std::mutex> lock(tail.mutex);
      if (tail.closed) written = Status::Aborted("file closed");
    }
    if (!written.ok()) break;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kZeroWriteBytes, end - offset));
    written = posix::PwriteAll(tail.fd.get(), std::string_view(Zeros()).substr(0, n), offset, tail.path);
    // Only a hint to start writeback; durability comes from the fdatasync.
    if (written.ok()) {
      (void)::sync_file_range(tail.fd.get(), static_cast<off_t>(offset), static_cast<off_t>(n),
                              SYNC_FILE_RANGE_WRITE);
    }
  }
  if (written.ok()) written = posix::Fdatasync(tail.fd.get(), tail.path);
  {
    std::lock_guard<std::mutex> lock(tail.mutex);
    tail.extending_from = kNoExtension;
    tail.queued = false;
    if (written.ok()) {
      tail.physical = std::max(tail.physical, end);
    } else if (written.code() != StatusCode::kAborted) {
      tail.failed = true;
    }
  }
  tail.extension_done.notify_all();
  std::lock_guard<std::mutex> lock(mutex_);
  if (written.ok()) {
    ++stats_.extensions;
    stats_.bytes_zeroed += options_.chunk_bytes;
  } else if (written.code() != StatusCode::kAborted) {
    ++stats_.failures;
    spdlog::warn("event=wal_zero_fill_failed path={} error=\"{}\"", tail.path, written.ToString());
  }
}

}  // namespace tessera::storage
