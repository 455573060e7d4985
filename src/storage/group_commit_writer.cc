#include "storage/group_commit_writer.h"

#include <chrono>
#include <string>
#include <utility>

#include "common/check.h"
#include "common/thread_name.h"
#include "storage/rocks_status.h"

namespace tessera::storage {
namespace {

// Replays one WriteBatch into another (RocksDB has no public Append). Only
// the operations storage issues are supported; anything else is a bug.
class BatchAppender : public rocksdb::WriteBatch::Handler {
 public:
  BatchAppender(const std::vector<rocksdb::ColumnFamilyHandle*>& column_families,
                rocksdb::WriteBatch* out)
      : column_families_(column_families), out_(out) {}

  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    return out_->Put(Handle(cf), key, value);
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    return out_->Delete(Handle(cf), key);
  }
  rocksdb::Status SingleDeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    return out_->SingleDelete(Handle(cf), key);
  }
  rocksdb::Status DeleteRangeCF(uint32_t cf, const rocksdb::Slice& begin,
                                const rocksdb::Slice& end) override {
    return out_->DeleteRange(Handle(cf), begin, end);
  }
  rocksdb::Status MergeCF(uint32_t, const rocksdb::Slice&, const rocksdb::Slice&) override {
    return rocksdb::Status::NotSupported("merge in a group-commit request");
  }

 private:
  rocksdb::ColumnFamilyHandle* Handle(uint32_t id) const {
    for (rocksdb::ColumnFamilyHandle* handle : column_families_) {
      if (handle->GetID() == id) return handle;
    }
    TESSERA_CHECK(false && "group-commit request names an unknown column family");
    return nullptr;
  }

  const std::vector<rocksdb::ColumnFamilyHandle*>& column_families_;
  rocksdb::WriteBatch* out_;
};

// The stepped writer whose RunQueued runs on this thread, if any.
thread_local const GroupCommitWriter* stepping_writer = nullptr;

}  // namespace

GroupCommitWriter::GroupCommitWriter(rocksdb::DB* db,
                                     std::vector<rocksdb::ColumnFamilyHandle*> column_families,
                                     const GroupCommitOptions& options)
    : db_(db), column_families_(std::move(column_families)), options_(options) {
  TESSERA_CHECK(db_ != nullptr);
  TESSERA_CHECK(options_.queue_max > 0);
  TESSERA_CHECK(options_.batch_bytes_max > 0);
  if (options_.stepped) return;
  thread_ = StartNamedThread("log-writer", [this] { Run(); });
  writer_id_ = thread_.get_id();
}

GroupCommitWriter::~GroupCommitWriter() { Shutdown(); }

void GroupCommitWriter::Shutdown() {
  TESSERA_CHECK(!OnWriterThread() && "Shutdown from a commit callback");
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  queued_.notify_one();
  if (options_.stepped) {
    RunQueued();
  } else {
    std::call_once(joined_, [this] { thread_.join(); });
  }
  std::lock_guard<std::mutex> lock(mu_);
  TESSERA_CHECK(queue_.empty());
}

size_t GroupCommitWriter::RunQueued() {
  TESSERA_CHECK(options_.stepped && "RunQueued on a writer with a thread");
  TESSERA_CHECK(!OnWriterThread() && "RunQueued from a commit callback");
  stepping_writer = this;
  size_t commits = 0;
  for (;;) {
    std::vector<Request> group;
    {
      std::lock_guard<std::mutex> lock(mu_);
      group = TakeQueuedLocked();
    }
    if (group.empty()) break;
    Commit(group);
    ++commits;
  }
  stepping_writer = nullptr;
  return commits;
}

size_t GroupCommitWriter::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

Status GroupCommitWriter::Submit(rocksdb::WriteBatch batch, CommitCallback done) {
  TESSERA_CHECK(done != nullptr);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::Aborted("group-commit writer is shutting down");
    const size_t bytes = batch.GetDataSize();
    const bool full = queue_.size() >= options_.queue_max ||
                      (!queue_.empty() && queued_bytes_ + bytes > options_.queue_bytes_max);
    if (full) {
      writes_throttled_.fetch_add(1, std::memory_order_relaxed);
      return Status::Throttled("group-commit queue full (" + std::to_string(queue_.size()) +
                               " requests, " + std::to_string(queued_bytes_) + " bytes pending)");
    }
    queued_bytes_ += bytes;
    queue_.push_back(Request{std::move(batch), std::move(done)});
    writes_submitted_.fetch_add(1, std::memory_order_relaxed);
  }
  queued_.notify_one();
  return Status::Ok();
}

GroupCommitStats GroupCommitWriter::stats() const {
  GroupCommitStats stats;
  stats.writes_submitted = writes_submitted_.load(std::memory_order_relaxed);
  stats.writes_throttled = writes_throttled_.load(std::memory_order_relaxed);
  stats.writes_failed = writes_failed_.load(std::memory_order_relaxed);
  stats.batches_synced = batches_synced_.load(std::memory_order_relaxed);
  stats.bytes_synced = bytes_synced_.load(std::memory_order_relaxed);
  return stats;
}

bool GroupCommitWriter::OnWriterThread() const {
  if (options_.stepped) return stepping_writer == this;
  return std::this_thread::get_id() == writer_id_;
}

void GroupCommitWriter::Run() {
  for (;;) {
    std::vector<Request> group = TakeGroup();
    if (group.empty()) return;
    Commit(group);
  }
}

std::vector<GroupCommitWriter::Request> GroupCommitWriter::TakeGroup() {
  std::unique_lock<std::mutex> lock(mu_);
  queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
  return TakeQueuedLocked();
}

std::vector<GroupCommitWriter::Request> GroupCommitWriter::TakeQueuedLocked() {
  std::vector<Request> group;
  size_t bytes = 0;
  while (!queue_.empty()) {
    const size_t next_bytes = queue_.front().batch.GetDataSize();
    if (!group.empty() && bytes + next_bytes > options_.batch_bytes_max) break;
    bytes += next_bytes;
    queued_bytes_ -= next_bytes;
    group.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return group;
}

uint64_t GroupCommitWriter::SteadyNowUs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

LatencyWindow::Summary GroupCommitWriter::SyncLatencySince(uint64_t from_us) const {
  return sync_latency_.Since(from_us);
}

void GroupCommitWriter::Commit(std::vector<Request>& group) {
  uint64_t bytes = 0;
  const uint64_t started_us = SteadyNowUs();
  const Status status = FromRocks(WriteSynced(group, &bytes), "group commit");
  const uint64_t ended_us = SteadyNowUs();
  sync_latency_.Record(ended_us, ended_us - started_us);
  if (status.ok()) {
    batches_synced_.fetch_add(1, std::memory_order_relaxed);
    bytes_synced_.fetch_add(bytes, std::memory_order_relaxed);
  } else {
    writes_failed_.fetch_add(group.size(), std::memory_order_relaxed);
  }
  for (Request& request : group) request.done(status);
}

rocksdb::Status GroupCommitWriter::WriteSynced(std::vector<Request>& group, uint64_t* bytes) {
  if (const StorageFaults* faults = options_.faults.get()) {
    const uint32_t delay_ms =
        std::min(faults->fsync_delay_ms.load(std::memory_order_relaxed), limits::kStorageFaultDelayMsMax);
    if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    if (faults->fail_writes.load(std::memory_order_relaxed)) {
      *bytes = 0;
      return rocksdb::Status::IOError("injected fault: fail_writes");
    }
  }
  // Written unsynced, then the WAL synced: the fsync runs outside RocksDB's
  // write queue, so unsynced writes of other threads (applies) are not held
  // behind it. Callbacks fire only after SyncWAL, so "durable" holds; see
  // docs/formats/storage.md for why earlier visibility is harmless.
  rocksdb::WriteBatch merged;
  rocksdb::WriteBatch* batch = &group.front().batch;
  if (group.size() > 1) {
    BatchAppender appender(column_families_, &merged);
    for (Request& request : group) {
      rocksdb::Status s = request.batch.Iterate(&appender);
      TESSERA_CHECK(s.ok() && "group-commit request holds an unsupported operation");
    }
    batch = &merged;
  }
  *bytes = batch->GetDataSize();
  rocksdb::WriteOptions write_options;
  write_options.sync = false;
  const rocksdb::Status written = db_->Write(write_options, batch);
  if (!written.ok()) return written;
  return db_->SyncWAL();
}

}  // namespace tessera::storage
