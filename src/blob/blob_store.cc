#include "blob/blob_store.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <filesystem>
#include <map>

#include "blob/blob_file.h"
#include "common/check.h"
#include "common/crc32c.h"
#include "common/limits.h"
#include "common/posix_file.h"

namespace tessera::blob {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kDirs = 256;
constexpr std::string_view kSuffix = ".blob";
constexpr std::string_view kTempSuffix = ".tmp";

std::string DirName(uint32_t slot) {
  static constexpr char kHex[] = "0123456789abcdef";
  const uint32_t d = slot % kDirs;
  return std::string{kHex[d >> 4], kHex[d & 0xf]};
}

using posix::ErrnoStatus;
using posix::Fd;
using posix::WriteAll;

// Direct I/O moves a blob's bytes to the disk without the page-cache copy,
// which on this kind of machine costs more than the disk write itself
// (256 MiB with fsync: 350 MB/s buffered, 1.7 GB/s with O_DIRECT).
// O_DIRECT wants the buffer, the length and the offset aligned to the
// logical block size; 4 KiB covers every device this runs on.
constexpr size_t kDirectAlignBytes = file::kFileAlignmentBytes;

struct AlignedDelete {
  void operator()(char* buffer) const {
    ::operator delete(buffer, std::align_val_t{kDirectAlignBytes});
  }
};

using AlignedBuffer = std::unique_ptr<char[], AlignedDelete>;

// Through operator new: the binary serves large buffers from huge pages (D45).
AlignedBuffer NewAlignedBuffer(size_t bytes) {
  return AlignedBuffer(static_cast<char*>(
      ::operator new(std::max(bytes, kDirectAlignBytes), std::align_val_t{kDirectAlignBytes}, std::nothrow)));
}

// Writes `bytes` (aligned in memory, a multiple of kDirectAlignBytes long)
// at the O_DIRECT `fd`'s position.
Status WriteAllDirect(int fd, std::string_view bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("write " + path, errno);
    if (n == 0 || static_cast<size_t>(n) % kDirectAlignBytes != 0) {
      return Status::IOError("short direct write of " + path);  // not aligned: cannot go on
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

bool IsDirectAligned(const char* p) {
  return reinterpret_cast<uintptr_t>(p) % kDirectAlignBytes == 0;
}

// Writes `prefix` then `data` into `fd` (opened with O_DIRECT, empty); the
// two make a version 3 file, a multiple of kDirectAlignBytes long
// (CHECKed). The block holding the end of the prefix and the first bytes
// of the data goes from an aligned copy; the rest of the data from where it
// lies when that is aligned (a blob.put received into an end-aligned frame
// buffer, rpc/frame.h), else from an aligned copy too. The caller syncs.
Status WriteDirect(int fd, std::string_view prefix, std::string_view data, const std::string& path) {
  TESSERA_CHECK((prefix.size() + data.size()) % kDirectAlignBytes == 0);
  const size_t head_data = (kDirectAlignBytes - prefix.size() % kDirectAlignBytes) % kDirectAlignBytes;
  TESSERA_CHECK(head_data <= data.size());
  AlignedBuffer head = NewAlignedBuffer(prefix.size() + head_data);
  if (!head) return Status::IOError("no memory for a direct write of " + path);
  std::memcpy(head.get(), prefix.data(), prefix.size());
  std::memcpy(head.get() + prefix.size(), data.data(), head_data);
  TESSERA_RETURN_IF_ERROR(WriteAllDirect(fd, {head.get(), prefix.size() + head_data}, path));
  const std::string_view rest = data.substr(head_data);
  if (rest.empty() || IsDirectAligned(rest.data())) return WriteAllDirect(fd, rest, path);
  AlignedBuffer copy = NewAlignedBuffer(rest.size());
  if (!copy) return Status::IOError("no memory for a direct write of " + path);
  std::memcpy(copy.get(), rest.data(), rest.size());
  return WriteAllDirect(fd, {copy.get(), rest.size()}, path);
}

// Reads exactly `length` bytes at `offset` into `out`; Corruption when the
// file ends first (it was truncated under us).
Status ReadInto(int fd, uint64_t offset, uint64_t length, const std::string& path, char* out) {
  uint64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd, out + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("read " + path, errno);
    if (n == 0) return Status::Corruption("blob file " + path + ": truncated");
    done += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status DataMismatch(const BlobId& id) {
  return Status::Corruption("blob.put data of " + id.ToString() + " does not match its crc32c");
}

// ReadInto a string of its own (headers and tables: small).
Result<std::string> ReadAt(int fd, uint64_t offset, uint64_t length, const std::string& path) {
  std::string out(length, '\0');
  TESSERA_RETURN_IF_ERROR(ReadInto(fd, offset, length, path, out.data()));
  return out;
}

}  // namespace

struct BlobStore::Counters {
  std::atomic<uint64_t> puts{0};
  std::atomic<uint64_t> put_bytes{0};
  std::atomic<uint64_t> reads{0};
  std::atomic<uint64_t> read_bytes{0};
  std::atomic<uint64_t> deletes{0};
  std::atomic<uint64_t> corruptions{0};
  std::atomic<uint64_t> io_errors{0};

  // Counts a failure by kind and passes it on.
  Status Count(Status s) {
    if (s.code() == StatusCode::kCorruption) corruptions.fetch_add(1, std::memory_order_relaxed);
    if (s.code() == StatusCode::kIOError) io_errors.fetch_add(1, std::memory_order_relaxed);
    return s;
  }
};

BlobStore::BlobStore(std::string dir, BlobStoreOptions options)
    : dir_(std::move(dir)), options_(std::move(options)), counters_(std::make_unique<Counters>()) {}

BlobStore::~BlobStore() = default;

Result<std::unique_ptr<BlobStore>> BlobStore::Open(std::string dir, BlobStoreOptions options) {
  if (dir.empty()) return Status::InvalidArgument("blob store: empty directory");
  std::unique_ptr<BlobStore> store(new BlobStore(std::move(dir), std::move(options)));
  std::error_code ec;
  fs::create_directories(store->dir_, ec);
  if (ec) return Status::IOError("blob store: cannot create " + store->dir_ + ": " + ec.message());
  // Slot directories are made on first use (EnsureDir); those that exist
  // may hold temporaries of puts a crash interrupted.
  size_t temporaries = 0;
  for (uint32_t d = 0; d < kDirs; ++d) {
    const fs::path sub = fs::path(store->dir_) / DirName(d);
    if (!fs::is_directory(sub, ec)) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(sub, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.ends_with(kTempSuffix) && fs::remove(entry.path(), ec)) ++temporaries;
    }
    if (ec) return Status::IOError("blob store: cannot read " + sub.string() + ": " + ec.message());
    store->dir_ready_[d] = true;
  }
  TESSERA_RETURN_IF_ERROR(store->SyncDir(store->dir_));
  spdlog::info("blob.store_opened dir={} temporaries_removed={}", store->dir_, temporaries);
  return store;
}

// The slot's directory exists and its entry in dir_ is durable.
Status BlobStore::EnsureDir(uint32_t slot) {
  const uint32_t d = slot % kDirs;
  if (dir_ready_[d].load(std::memory_order_acquire)) return Status::Ok();
  const std::string sub = dir_ + "/" + DirName(slot);
  if (::mkdir(sub.c_str(), 0755) != 0 && errno != EEXIST) return ErrnoStatus("mkdir " + sub, errno);
  TESSERA_RETURN_IF_ERROR(SyncDir(dir_));
  dir_ready_[d].store(true, std::memory_order_release);
  return Status::Ok();
}

std::string BlobStore::PathOf(const BlobId& id) const {
  return dir_ + "/" + DirName(id.slot) + "/" + id.ToString() + std::string(kSuffix);
}

std::mutex& BlobStore::StripeOf(const BlobId& id) {
  return stripes_[(id.unique[0] ^ id.slot) % stripes_.size()];
}

Status BlobStore::Sync(int fd, const std::string& what) {
  if (options_.before_sync) TESSERA_RETURN_IF_ERROR(options_.before_sync());
  return posix::Fsync(fd, what);
}

Status BlobStore::SyncDir(const std::string& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoStatus("open " + dir, errno);
  return Sync(fd.get(), dir);
}

// Contract 1: temporary, fsync, rename, fsync of the directory.
Status BlobStore::WriteNew(const BlobId& id, std::string_view owner, std::string_view data,
                           std::optional<uint32_t> expected_crc32c) {
  TESSERA_RETURN_IF_ERROR(EnsureDir(id.slot));
  const std::string path = PathOf(id);
  const std::string temp = path + std::string(kTempSuffix);
  Status written = [&]() -> Status {
    uint32_t data_crc = 0;
    const std::string prefix = file::EncodePrefix(id, owner, data, file::kVersion, &data_crc);
    if (expected_crc32c && data_crc != *expected_crc32c) return DataMismatch(id);
    // Direct I/O where the file system takes it; the page cache otherwise
    // (EINVAL at open: tmpfs and the like; a direct write refused, e.g. for
    // a larger alignment, starts over buffered).
    std::optional<Fd> fd;
    const int direct = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0644);
    if (direct >= 0) {
      fd.emplace(direct);
      if (!WriteDirect(fd->get(), prefix, data, temp).ok()) fd.reset();
    } else if (errno != EINVAL) {
      return ErrnoStatus("create " + temp, errno);
    }
    if (!fd) {
      fd.emplace(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
      if (fd->get() < 0) return ErrnoStatus("create " + temp, errno);
      TESSERA_RETURN_IF_ERROR(WriteAll(fd->get(), prefix, temp));
      TESSERA_RETURN_IF_ERROR(WriteAll(fd->get(), data, temp));
    }
    TESSERA_RETURN_IF_ERROR(Sync(fd->get(), temp));
    if (fd->Close() != 0) return ErrnoStatus("close " + temp, errno);
    if (::rename(temp.c_str(), path.c_str()) != 0) return ErrnoStatus("rename " + temp, errno);
    return Status::Ok();
  }();
  if (!written.ok()) {
    ::unlink(temp.c_str());
    return written;
  }
  return SyncDir(dir_ + "/" + DirName(id.slot));
}

Status BlobStore::Put(const BlobId& id, std::string_view owner, std::string_view data,
                      std::optional<uint32_t> expected_crc32c) {
  if (id.slot >= limits::kBlobSlots) return Status::InvalidArgument("blob slot out of range");
  if (owner.size() > limits::kBlobOwnerBytesMax) return Status::InvalidArgument("blob owner too long");
  if (data.size() > limits::kBlobBytesMax) {
    return Status::InvalidArgument("blob of " + std::to_string(data.size()) + " bytes exceeds " +
                                   std::to_string(limits::kBlobBytesMax));
  }
  std::lock_guard lock(StripeOf(id));
  Result<BlobReadResult> existing = ReadFile(id, 0, UINT64_MAX);
  if (existing.ok()) {
    if (expected_crc32c && Crc32c(data) != *expected_crc32c) return DataMismatch(id);
    if (existing->data.view() != data || existing->owner != owner) {
      return Status::Conflict("blob " + id.ToString() + " already holds other bytes or another owner");
    }
    counters_->puts.fetch_add(1, std::memory_order_relaxed);
    return Status::Ok();
  }
  const StatusCode code = existing.status().code();
  if (code == StatusCode::kCorruption) {
    spdlog::warn("blob.replacing_corrupt id={} reason=\"{}\"", id.ToString(), existing.status().message());
  } else if (code != StatusCode::kNotFound) {
    return existing.status();
  }
  const Status written = WriteNew(id, owner, data, expected_crc32c);
  // A mismatch is the sender's bytes, not a bad file: not counted.
  if (!written.ok()) return written.code() == StatusCode::kCorruption ? written : counters_->Count(written);
  counters_->puts.fetch_add(1, std::memory_order_relaxed);
  counters_->put_bytes.fetch_add(data.size(), std::memory_order_relaxed);
  return Status::Ok();
}

Result<BlobReadResult> BlobStore::Read(const BlobId& id, uint64_t offset, uint64_t length) {
  Result<BlobReadResult> result = ReadFile(id, offset, length);
  if (result.ok()) {
    counters_->reads.fetch_add(1, std::memory_order_relaxed);
    counters_->read_bytes.fetch_add(result->data.size(), std::memory_order_relaxed);
  }
  return result;
}

struct BlobStore::OpenFile {
  explicit OpenFile(int raw_fd) : fd(raw_fd) {}
  Fd fd;
  std::string path;
  file::Header header;
  std::string meta;  // owner then block table, checked
  std::string_view owner;
  std::string_view table;
  int64_t mtime_ms = 0;
};

// Contract 2 minus the data: header, file size, owner and table checked.
// Failures of the file (not NotFound) are counted.
Result<std::unique_ptr<BlobStore::OpenFile>> BlobStore::OpenChecked(const BlobId& id) {
  if (id.slot >= limits::kBlobSlots) return Status::InvalidArgument("blob slot out of range");
  const std::string path = PathOf(id);
  const int raw_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw_fd < 0) {
    if (errno == ENOENT) return Status::NotFound("blob " + id.ToString() + " not found");
    return counters_->Count(ErrnoStatus("open " + path, errno));
  }
  auto f = std::make_unique<OpenFile>(raw_fd);
  f->path = path;
  struct stat st {};
  if (::fstat(f->fd.get(), &st) != 0) return counters_->Count(ErrnoStatus("stat " + path, errno));
  f->mtime_ms = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
  const auto corrupt = [&](const std::string& why) {
    return counters_->Count(Status::Corruption("blob file " + path + ": " + why));
  };
  auto header_bytes = ReadAt(f->fd.get(), 0, file::kHeaderBytes, path);
  if (!header_bytes.ok()) return counters_->Count(header_bytes.status());
  auto header = file::DecodeHeader(*header_bytes);
  if (!header.ok()) return counters_->Count(header.status());
  f->header = *header;
  if (header->id != id) return corrupt("names blob " + header->id.ToString());
  if (header->data_bytes > limits::kBlobBytesMax) return corrupt("data length over the limit");
  if (static_cast<uint64_t>(st.st_size) != file::FileBytes(header->version, header->owner_bytes, header->data_bytes)) {
    return corrupt("file size " + std::to_string(st.st_size) + " does not match its header");
  }
  auto meta = ReadAt(f->fd.get(), file::kHeaderBytes,
                     file::MetaBytes(header->owner_bytes, header->data_bytes), path);
  if (!meta.ok()) return counters_->Count(meta.status());
  f->meta = std::move(meta).value();
  TESSERA_RETURN_IF_ERROR(counters_->Count(file::CheckMeta(f->header, f->meta, &f->owner, &f->table)));
  return f;
}

Result<BlobReadResult> BlobStore::ReadFile(const BlobId& id, uint64_t offset, uint64_t length) {
  auto f = OpenChecked(id);
  if (!f.ok()) return f.status();
  const file::Header& header = (*f)->header;
  if (offset > header.data_bytes) {
    return Status::InvalidArgument("offset " + std::to_string(offset) + " past the end of blob " +
                                   id.ToString() + " (" + std::to_string(header.data_bytes) + " bytes)");
  }
  BlobReadResult result;
  result.total_size = header.data_bytes;
  result.owner = std::string((*f)->owner);
  const uint64_t n = std::min(length, header.data_bytes - offset);
  if (n == 0) return result;
  auto range = ReadBlocks(**f, offset, n);
  if (!range.ok()) return counters_->Count(range.status());
  result.data = std::move(range->bytes);
  result.crc32c = range->crc32c;
  return result;
}

Result<BlobStat> BlobStore::Stat(const BlobId& id) {
  auto f = OpenChecked(id);
  if (!f.ok()) return f.status();
  return BlobStat{(*f)->header.data_bytes, std::string((*f)->owner), (*f)->mtime_ms};
}

// Reads the blocks that hold [offset, offset + n) of a checked file,
// verifies each block, and returns the range with its CRC: the verified
// block checksums combined, with the partial blocks at either end of an
// unaligned range checksummed again for their part, so each byte is read
// by a CRC once (twice at most in those two blocks).
Result<BlobStore::Range> BlobStore::ReadBlocks(const OpenFile& f, uint64_t offset, uint64_t n) {
  const file::Header& header = f.header;
  const uint64_t first = offset / file::kBlockBytes;
  const uint64_t last = (offset + n - 1) / file::kBlockBytes;
  const uint64_t begin = first * file::kBlockBytes;
  const uint64_t end = std::min((last + 1) * file::kBlockBytes, header.data_bytes);
  const uint64_t file_offset = file::DataOffset(header.version, header.owner_bytes, header.data_bytes) + begin;
  // Read, not mapped, at every size (D61): populating a mapping's page
  // tables costs a virtual machine with software-managed page tables 3-6
  // times the copy, and buffers of 2 MiB or more come from huge pages (D45).
  SharedBytes data = SharedBytes::Uninitialized(end - begin);
  TESSERA_RETURN_IF_ERROR(ReadInto(f.fd.get(), file_offset, end - begin, f.path, data.mutable_data()));
  const std::string_view view = data.view();
  uint32_t crc = 0;
  for (uint64_t b = first; b <= last; ++b) {
    const std::string_view block = view.substr((b - first) * file::kBlockBytes, file::kBlockBytes);
    const uint32_t block_crc = Crc32c(block);
    if (block_crc != file::TableEntry(f.table, b)) {
      return Status::Corruption("blob file " + f.path + ": checksum mismatch in block " + std::to_string(b));
    }
    // The part of this block inside the range, relative to the block.
    const uint64_t block_start = b * file::kBlockBytes;
    const uint64_t lo = std::max(offset, block_start) - block_start;
    const uint64_t hi = std::min(offset + n, block_start + block.size()) - block_start;
    const uint32_t part_crc = lo == 0 && hi == block.size() ? block_crc : Crc32c(block.substr(lo, hi - lo));
    crc = b == first ? part_crc : Crc32cCombine(crc, part_crc, hi - lo);
  }
  if (begin == offset && end - begin == n) return Range{std::move(data), crc};
  return Range{data.Slice(offset - begin, n), crc};
}

Status BlobStore::Delete(const BlobId& id) {
  if (id.slot >= limits::kBlobSlots) return Status::InvalidArgument("blob slot out of range");
  std::lock_guard lock(StripeOf(id));
  const std::string path = PathOf(id);
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return Status::NotFound("blob " + id.ToString() + " not found");
    return counters_->Count(ErrnoStatus("unlink " + path, errno));
  }
  counters_->deletes.fetch_add(1, std::memory_order_relaxed);
  return counters_->Count(SyncDir(dir_ + "/" + DirName(id.slot)));
}

Result<BlobListPage> BlobStore::List(uint32_t slot_from, const std::optional<BlobId>& after,
                                     size_t limit) {
  limit = std::clamp<size_t>(limit, 1, limits::kBlobListItemsMax);
  uint32_t slot = slot_from;
  if (after && after->slot > slot) slot = after->slot;
  // Each directory read once, its blobs sorted (they interleave 16 slots).
  std::map<uint32_t, std::vector<BlobListEntry>> dirs;
  BlobListPage page;
  for (; slot < limits::kBlobSlots; ++slot) {
    auto [it, inserted] = dirs.try_emplace(slot % kDirs);
    if (inserted) {
      std::error_code ec;
      const fs::path sub = fs::path(dir_) / DirName(slot);
      if (!dir_ready_[slot % kDirs].load(std::memory_order_acquire) && !fs::is_directory(sub, ec)) continue;
      for (const fs::directory_entry& entry : fs::directory_iterator(sub, ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.ends_with(kSuffix) || name.size() != BlobId::kTextBytes + kSuffix.size()) continue;
        auto id = BlobId::Parse(std::string_view(name).substr(0, BlobId::kTextBytes));
        if (!id.ok()) continue;
        it->second.push_back(BlobListEntry{*id, 0, {}, 0, false});
      }
      if (ec) return counters_->Count(Status::IOError("list " + sub.string() + ": " + ec.message()));
      std::sort(it->second.begin(), it->second.end(),
                [](const BlobListEntry& a, const BlobListEntry& b) { return a.id < b.id; });
    }
    for (const BlobListEntry& entry : it->second) {
      if (entry.id.slot != slot || (after && !(*after < entry.id))) continue;
      if (page.entries.size() == limit) {
        page.more = true;
        return page;
      }
      BlobListEntry described = entry;
      if (!Describe(described)) continue;  // deleted meanwhile
      page.entries.push_back(std::move(described));
    }
  }
  return page;
}

// Fills size, owner and mtime from the file's header; false when the file
// is gone. A file failing its checks is described as corrupt.
bool BlobStore::Describe(BlobListEntry& entry) {
  auto f = OpenChecked(entry.id);
  if (f.ok()) {
    entry.size = (*f)->header.data_bytes;
    entry.owner = std::string((*f)->owner);
    entry.mtime_ms = (*f)->mtime_ms;
    return true;
  }
  if (f.status().code() == StatusCode::kNotFound) return false;
  entry.corrupt = true;
  return true;
}

BlobStoreStats BlobStore::stats() const {
  BlobStoreStats s;
  s.puts = counters_->puts.load(std::memory_order_relaxed);
  s.put_bytes = counters_->put_bytes.load(std::memory_order_relaxed);
  s.reads = counters_->reads.load(std::memory_order_relaxed);
  s.read_bytes = counters_->read_bytes.load(std::memory_order_relaxed);
  s.deletes = counters_->deletes.load(std::memory_order_relaxed);
  s.corruptions = counters_->corruptions.load(std::memory_order_relaxed);
  s.io_errors = counters_->io_errors.load(std::memory_order_relaxed);
  return s;
}

}  // namespace tessera::blob
