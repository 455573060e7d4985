// Goal: the group-commit writer fires every callback once, preserves
// submission order inside merged batches, respects its byte cap, pushes back
// with Throttled when its queue is full, and drains the queue on shutdown.
#include "storage/group_commit_writer.h"

#include <gtest/gtest.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "storage/storage_test_util.h"

namespace tessera::storage {
namespace {

using testing::TempDir;

// A plain RocksDB (default column family only) for the writer to write to.
class WriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir_.Sub("db"), &db).ok());
    db_.reset(db);
  }

  std::unique_ptr<GroupCommitWriter> MakeWriter(GroupCommitOptions options = {}) {
    return std::make_unique<GroupCommitWriter>(
        db_.get(), std::vector<rocksdb::ColumnFamilyHandle*>{db_->DefaultColumnFamily()}, options);
  }

  static rocksdb::WriteBatch PutBatch(const std::string& key, const std::string& value) {
    rocksdb::WriteBatch batch;
    EXPECT_TRUE(batch.Put(key, value).ok());
    return batch;
  }

  std::string Read(const std::string& key) {
    std::string value;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), key, &value);
    return s.ok() ? value : "<" + s.ToString() + ">";
  }

  TempDir dir_;
  std::unique_ptr<rocksdb::DB> db_;
};

void WaitFor(const std::atomic<int>& counter, int target) {
  while (counter.load() < target) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// Blocks the writer thread inside the first request's callback until
// Release(), so that later requests pile up in the queue.
class WriterGate {
 public:
  CommitCallback Callback() {
    return [this](const Status&) {
      entered_.set_value();
      released_future_.wait();
    };
  }
  void WaitEntered() { entered_.get_future().wait(); }
  void Release() { released_.set_value(); }

 private:
  std::promise<void> entered_;
  std::promise<void> released_;
  std::shared_future<void> released_future_ = released_.get_future().share();
};

// Goal: A submit beyond queue_max pending requests is Throttled; accepted ones land.
TEST_F(WriterTest, FullQueueReturnsThrottled) {
  GroupCommitOptions options;
  options.queue_max = 2;
  auto writer = MakeWriter(options);
  WriterGate gate;
  ASSERT_TRUE(writer->Submit(PutBatch("k0", "v"), gate.Callback()).ok());
  gate.WaitEntered();  // k0 left the queue; the writer thread is parked

  std::atomic<int> ok_callbacks{0};
  auto count_ok = [&](const Status& s) { ok_callbacks += s.ok() ? 1 : 0; };
  EXPECT_TRUE(writer->Submit(PutBatch("k1", "v"), count_ok).ok());
  EXPECT_TRUE(writer->Submit(PutBatch("k2", "v"), count_ok).ok());
  Status refused = writer->Submit(PutBatch("k3", "v"), count_ok);
  EXPECT_EQ(refused.code(), StatusCode::kThrottled) << refused.ToString();

  gate.Release();
  WaitFor(ok_callbacks, 2);
  EXPECT_EQ(writer->stats().writes_throttled, 1u);
  EXPECT_EQ(writer->stats().writes_submitted, 3u);
  writer.reset();
  EXPECT_EQ(ok_callbacks.load(), 2);
  EXPECT_EQ(Read("k2"), "v");
  EXPECT_EQ(Read("k3"), "<NotFound: >");
}

// Goal: Requests merged into one batch take effect and call back in submission order.
TEST_F(WriterTest, MergedRequestsApplyInSubmissionOrder) {
  auto writer = MakeWriter();
  WriterGate gate;
  ASSERT_TRUE(writer->Submit(PutBatch("~gate", "x"), gate.Callback()).ok());  // outside [a, z)
  gate.WaitEntered();

  std::vector<int> order;
  std::mutex order_mu;
  auto record = [&](int i) {
    return [&, i](const Status& s) {
      EXPECT_TRUE(s.ok()) << s.ToString();
      std::lock_guard<std::mutex> lock(order_mu);
      order.push_back(i);
    };
  };
  ASSERT_TRUE(writer->Submit(PutBatch("k", "first"), record(1)).ok());
  rocksdb::WriteBatch range_delete;
  ASSERT_TRUE(range_delete.DeleteRange(db_->DefaultColumnFamily(), "a", "z").ok());
  ASSERT_TRUE(writer->Submit(std::move(range_delete), record(2)).ok());
  ASSERT_TRUE(writer->Submit(PutBatch("k", "last"), record(3)).ok());
  ASSERT_TRUE(writer->Submit(PutBatch("m", "kept"), record(4)).ok());
  gate.Release();
  writer.reset();

  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(Read("k"), "last");
  EXPECT_EQ(Read("m"), "kept");
  EXPECT_EQ(Read("~gate"), "x");
}

// Goal: batch_bytes_max bounds one group commit: over-cap requests each get their own sync.
TEST_F(WriterTest, ByteCapSplitsGroups) {
  GroupCommitOptions options;
  options.batch_bytes_max = 1;  // below any request: every request goes alone
  auto writer = MakeWriter(options);
  WriterGate gate;
  ASSERT_TRUE(writer->Submit(PutBatch("gate", "x"), gate.Callback()).ok());
  gate.WaitEntered();
  std::atomic<int> done{0};
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(writer
                    ->Submit(PutBatch("k" + std::to_string(i), "v"),
                             [&](const Status& s) { done += s.ok(); })
                    .ok());
  }
  gate.Release();
  WaitFor(done, 5);
  EXPECT_EQ(writer->stats().batches_synced, 6u);
  EXPECT_EQ(Read("k4"), "v");
}

// Goal: Requests queued during a sync share the next one, and the counters say so.
TEST_F(WriterTest, BatchesWhileBlockedAndCounts) {
  auto writer = MakeWriter();
  WriterGate gate;
  ASSERT_TRUE(writer->Submit(PutBatch("gate", "x"), gate.Callback()).ok());
  gate.WaitEntered();
  std::atomic<int> done{0};
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(writer
                    ->Submit(PutBatch("k" + std::to_string(i), "v"),
                             [&](const Status& s) { done += s.ok(); })
                    .ok());
  }
  gate.Release();
  WaitFor(done, 100);
  GroupCommitStats stats = writer->stats();
  EXPECT_EQ(stats.writes_submitted, 101u);
  EXPECT_EQ(stats.batches_synced, 2u);  // the gate, then all 100 in one batch
  EXPECT_GT(stats.bytes_synced, 100u * 4);
  EXPECT_EQ(stats.writes_failed, 0u);
  EXPECT_EQ(stats.writes_throttled, 0u);
}

// Goal: Shutdown writes every accepted request and refuses (Aborted) all later ones.
TEST_F(WriterTest, ShutdownDrainsQueueAndRefusesNewWork) {
  auto writer = MakeWriter();
  WriterGate gate;
  ASSERT_TRUE(writer->Submit(PutBatch("gate", "x"), gate.Callback()).ok());
  gate.WaitEntered();
  std::atomic<int> done{0};
  auto count_ok = [&](const Status& s) { done += s.ok(); };
  Status from_callback;
  ASSERT_TRUE(writer
                  ->Submit(PutBatch("k", "v"),
                           [&](const Status& s) {
                             count_ok(s);
                             from_callback = writer->Submit(PutBatch("late", "v"), count_ok);
                           })
                  .ok());
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(writer->Submit(PutBatch("k" + std::to_string(i), "v"), count_ok).ok());
  }
  std::thread stopper([&] { writer->Shutdown(); });
  int accepted = 51;  // until Shutdown has begun, probes are still accepted
  while (writer->Submit(PutBatch("probe", "v"), count_ok).ok()) {
    ++accepted;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  gate.Release();
  stopper.join();
  EXPECT_EQ(done.load(), accepted);  // everything accepted was written
  EXPECT_EQ(from_callback.code(), StatusCode::kAborted) << from_callback.ToString();
  EXPECT_EQ(Read("k49"), "v");
  EXPECT_EQ(Read("late"), "<NotFound: >");
}

// Goal: queue_bytes_max throttles a busy queue but admits one oversized request.
TEST_F(WriterTest, QueueBytesBoundPushesBackButAdmitsIntoEmptyQueue) {
  GroupCommitOptions options;
  options.queue_bytes_max = 64;
  auto writer = MakeWriter(options);
  WriterGate gate;
  ASSERT_TRUE(writer->Submit(PutBatch("gate", "x"), gate.Callback()).ok());
  gate.WaitEntered();
  std::atomic<int> done{0};
  auto count_ok = [&](const Status& s) { done += s.ok(); };
  // Larger than the bound, but the queue is empty: admitted.
  ASSERT_TRUE(writer->Submit(PutBatch("big", std::string(100, 'b')), count_ok).ok());
  Status refused = writer->Submit(PutBatch("small", "s"), count_ok);
  EXPECT_EQ(refused.code(), StatusCode::kThrottled) << refused.ToString();
  gate.Release();
  WaitFor(done, 1);
  EXPECT_EQ(Read("big"), std::string(100, 'b'));
}

}  // namespace
}  // namespace tessera::storage

namespace tessera::storage {
namespace {

// Goal: the fault knobs, off by default, fail synced writes without writing
// anything and delay them, and turning them off restores normal writes.
TEST_F(WriterTest, FaultKnobsFailAndDelaySyncedWrites) {
  GroupCommitOptions options;
  options.faults = std::make_shared<StorageFaults>();
  auto writer = MakeWriter(options);

  auto submit_and_wait = [&](const std::string& key) {
    std::promise<Status> done;
    auto future = done.get_future();
    EXPECT_TRUE(writer->Submit(PutBatch(key, "v"), [&](const Status& s) { done.set_value(s); }).ok());
    return future.get();
  };

  EXPECT_TRUE(submit_and_wait("normal").ok());

  options.faults->fail_writes = true;
  const Status failed = submit_and_wait("failed");
  EXPECT_EQ(failed.code(), StatusCode::kIOError) << failed.ToString();
  EXPECT_EQ(Read("failed"), "<NotFound: >");
  EXPECT_EQ(writer->stats().writes_failed, 1u);

  options.faults->fail_writes = false;
  options.faults->fsync_delay_ms = 150;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(submit_and_wait("delayed").ok());
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));
  EXPECT_EQ(Read("delayed"), "v");
}

}  // namespace
}  // namespace tessera::storage

namespace tessera::storage {
namespace {

// A file system whose WAL syncs block while the gate is closed, so that a
// test can hold a group commit inside its fsync.
class WalSyncGate {
 public:
  // Blocks the caller until the gate is open; WaitUntilHeld sees it waiting.
  void Pass() {
    std::unique_lock lock(mu_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
    --waiting_;
  }
  // Returns once a sync is blocked in Pass.
  void WaitUntilHeld() {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [this] { return waiting_ > 0; });
  }
  void Close() {
    std::lock_guard lock(mu_);
    open_ = false;
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  bool open_ = true;
  int waiting_ = 0;
};

class GatedWalFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  GatedWalFile(std::unique_ptr<rocksdb::FSWritableFile> file, WalSyncGate* gate)
      : FSWritableFileOwnerWrapper(std::move(file)), gate_(gate) {}
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    gate_->Pass();
    return FSWritableFileOwnerWrapper::Sync(options, dbg);
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    gate_->Pass();
    return FSWritableFileOwnerWrapper::Fsync(options, dbg);
  }

 private:
  WalSyncGate* gate_;
};

class GatedWalFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit GatedWalFileSystem(WalSyncGate* gate)
      : FileSystemWrapper(rocksdb::FileSystem::Default()), gate_(gate) {}
  const char* Name() const override { return "GatedWalFileSystem"; }
  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = FileSystemWrapper::NewWritableFile(name, options, result, dbg);
    if (s.ok() && name.ends_with(".log")) {
      *result = std::make_unique<GatedWalFile>(std::move(*result), gate_);
    }
    return s;
  }

 private:
  WalSyncGate* gate_;
};

// Goal: while a group commit waits for its fsync, the commit is not yet
// reported durable, and unsynced writes of other threads (the applies of the
// io threads) still complete instead of queueing behind the fsync.
TEST(WriterSyncTest, UnsyncedWritesDoNotWaitForTheGroupCommitFsync) {
  TempDir dir;
  WalSyncGate gate;
  auto fs = std::make_shared<GatedWalFileSystem>(&gate);
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  rocksdb::Options options;
  options.create_if_missing = true;
  options.env = env.get();
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(options, dir.Sub("db"), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  auto writer = std::make_unique<GroupCommitWriter>(
      db.get(), std::vector<rocksdb::ColumnFamilyHandle*>{db->DefaultColumnFamily()},
      GroupCommitOptions{});

  gate.Close();
  std::promise<Status> durable;
  rocksdb::WriteBatch log_write;
  ASSERT_TRUE(log_write.Put("log", "entry").ok());
  ASSERT_TRUE(writer->Submit(std::move(log_write), [&](const Status& s) { durable.set_value(s); }).ok());
  gate.WaitUntilHeld();

  auto apply = std::async(std::launch::async, [&] {
    rocksdb::WriteOptions unsynced;
    unsynced.sync = false;
    return db->Put(unsynced, "state", "applied");
  });
  // Whatever fails below, the writer and the Put must be able to finish.
  auto open_on_exit = std::shared_ptr<void>(nullptr, [&](void*) { gate.Open(); });
  // Generous bound for a stalled machine; with the fsync inside RocksDB's
  // write queue the Put never returns while the gate is closed.
  ASSERT_EQ(apply.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "an unsynced write waited for the group commit's fsync";
  EXPECT_TRUE(apply.get().ok());
  auto reported = durable.get_future();
  EXPECT_EQ(reported.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout)
      << "the commit was reported durable before its fsync finished";

  gate.Open();
  EXPECT_TRUE(reported.get().ok());
  writer->Shutdown();
  writer.reset();
  db.reset();
}

}  // namespace
}  // namespace tessera::storage
