// Goal: CrashFileSystem keeps exactly the synced bytes (plus the torn
// prefix asked for) across a crash, fails the crashed process's handles and
// an erroring disk's writes, and a NodeStore on it recovers what group
// commit made durable and loses the unsynced applies.
#include "storage/crash_file_system.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "storage/node_store.h"
#include "storage/storage_test_util.h"

namespace tessera::storage {
namespace {

std::unique_ptr<rocksdb::FSWritableFile> Create(CrashFileSystem& fs, const std::string& name) {
  std::unique_ptr<rocksdb::FSWritableFile> file;
  EXPECT_TRUE(fs.CreateDirIfMissing("/crash", rocksdb::IOOptions(), nullptr).ok());
  EXPECT_TRUE(fs.NewWritableFile(name, rocksdb::FileOptions(), &file, nullptr).ok());
  return file;
}

std::string Contents(CrashFileSystem& fs, const std::string& name) {
  std::string data;
  const rocksdb::IOStatus read = rocksdb::ReadFileToString(&fs, name, &data);
  EXPECT_TRUE(read.ok()) << read.ToString();
  return data;
}

TEST(CrashFileSystem, CrashKeepsTheSyncedBytesAndTheTornPrefixAskedFor) {
  CrashFileSystem fs;
  const rocksdb::IOOptions io;
  auto a = Create(fs, "/crash/a");
  auto b = Create(fs, "/crash/b");
  ASSERT_TRUE(a->Append("synced", io, nullptr).ok());
  ASSERT_TRUE(a->Sync(io, nullptr).ok());
  ASSERT_TRUE(a->Append("-lost", io, nullptr).ok());
  ASSERT_TRUE(b->Append("torn-tail", io, nullptr).ok());
  EXPECT_EQ(Contents(fs, "/crash/a"), "synced-lost");  // readable before the crash
  EXPECT_EQ(fs.unsynced_bytes(), 5u + 9u);

  const uint64_t lost = fs.Crash([](const std::string& name, uint64_t) -> uint64_t {
    return name == "/crash/b" ? 4 : 0;
  });
  EXPECT_EQ(lost, 5u + 5u);
  EXPECT_EQ(Contents(fs, "/crash/a"), "synced");
  EXPECT_EQ(Contents(fs, "/crash/b"), "torn");
  EXPECT_EQ(fs.unsynced_bytes(), 0u);

  // The crashed process's handles change nothing any more.
  EXPECT_FALSE(a->Append("zombie", io, nullptr).ok());
  EXPECT_FALSE(a->Sync(io, nullptr).ok());
  EXPECT_EQ(Contents(fs, "/crash/a"), "synced");
}

TEST(CrashFileSystem, FailingDiskRefusesWritesAndSyncsUntilCleared) {
  CrashFileSystem fs;
  const rocksdb::IOOptions io;
  auto file = Create(fs, "/crash/f");
  fs.SetFailWrites(true);
  EXPECT_TRUE(file->Append("x", io, nullptr).IsIOError());
  EXPECT_TRUE(file->Sync(io, nullptr).IsIOError());
  std::unique_ptr<rocksdb::FSWritableFile> other;
  EXPECT_TRUE(fs.NewWritableFile("/crash/g", rocksdb::FileOptions(), &other, nullptr).IsIOError());
  fs.SetFailWrites(false);
  EXPECT_TRUE(file->Append("y", io, nullptr).ok());
  EXPECT_TRUE(file->Sync(io, nullptr).ok());
  fs.Crash();
  EXPECT_EQ(Contents(fs, "/crash/f"), "y");
}

// The skip-fsync bug: a log file's sync reports success, makes nothing
// durable, and the crash takes its bytes; other files still sync.
TEST(CrashFileSystem, SkippedLogSyncLosesTheLogAtTheCrash) {
  CrashFileSystem fs;
  const rocksdb::IOOptions io;
  auto log = Create(fs, "/crash/000004.log");
  auto manifest = Create(fs, "/crash/MANIFEST-000001");
  fs.SetSkipLogSync(true);
  ASSERT_TRUE(log->Append("promised", io, nullptr).ok());
  ASSERT_TRUE(log->Sync(io, nullptr).ok());
  ASSERT_TRUE(manifest->Append("edit", io, nullptr).ok());
  ASSERT_TRUE(manifest->Sync(io, nullptr).ok());
  EXPECT_EQ(fs.unsynced_bytes(), 8u);
  fs.Crash();
  EXPECT_EQ(Contents(fs, "/crash/000004.log"), "");
  EXPECT_EQ(Contents(fs, "/crash/MANIFEST-000001"), "edit");
}

std::unique_ptr<NodeStore> OpenOn(const std::shared_ptr<CrashFileSystem>& fs,
                                  bool stepped_workers = false) {
  NodeStoreOptions options;
  options.path = "/sim/node";
  options.file_system = fs;
  options.stepped_workers = stepped_workers;
  options.write_buffer_bytes = 4 << 20;
  return testing::OpenStoreWith(options);
}

// A log write is synced by group commit; an apply after it is in the WAL
// unsynced and dies with the process; an apply before a later log write
// rides on that write's sync.
TEST(CrashFileSystem, NodeStoreRecoversTheSyncedLogAndLosesTheUnsyncedApply) {
  auto fs = std::make_shared<CrashFileSystem>();
  const GroupId group = 3;
  {
    auto store = OpenOn(fs);
    ASSERT_NE(store, nullptr);
    LogWrite write = testing::LogWriteFor(group)
                         .HardState(testing::MakeHardState(2, 1, 2))
                         .Entries(testing::MakeEntries(1, 3, 2));
    const Status logged = store->WriteLog(write);
    ASSERT_TRUE(logged.ok()) << logged.ToString();
    ASSERT_TRUE(store->Apply(group, 1, {Mutation::Put("k", "1")}).ok());
    LogWrite more = testing::LogWriteFor(group).Entries(testing::MakeEntries(4, 4, 2));
    ASSERT_TRUE(store->WriteLog(more).ok());
    ASSERT_TRUE(store->Apply(group, 2, {Mutation::Put("k", "2")}).ok());
    EXPECT_GT(fs->unsynced_bytes(), 0u);
    fs->Crash();
  }  // the dead store's shutdown writes nothing
  auto store = OpenOn(fs);
  ASSERT_NE(store, nullptr);
  Result<consensus::RecoveredState> recovered = store->RecoverGroup(group);
  ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
  EXPECT_EQ(recovered->entries.size(), 4u);
  EXPECT_EQ(recovered->applied_index, 1u);
  Result<std::string> value = store->Get(group, "k");
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  EXPECT_EQ(*value, "1");
}

// A stepped store (the simulator's) makes nothing durable and calls nothing
// back until its owner runs the workers: log writes queued when the
// process dies are lost; once run, they are group-committed together on
// the owner's thread and survive; snapshot jobs wait for the same call;
// blocking calls do the writer's work inline.
TEST(CrashFileSystem, SteppedStoreWritesOnlyWhenItsOwnerRunsTheWorkers) {
  auto fs = std::make_shared<CrashFileSystem>();
  const GroupId group = 4;
  const std::thread::id owner = std::this_thread::get_id();
  std::vector<Status> done;
  auto record = [&](const Status& s) {
    EXPECT_EQ(std::this_thread::get_id(), owner);
    done.push_back(s);
  };
  {
    auto store = OpenOn(fs, /*stepped_workers=*/true);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->SubmitLogWrite(testing::LogWriteFor(group)
                                          .HardState(testing::MakeHardState(2, 1, 2))
                                          .Entries(testing::MakeEntries(1, 2, 2)),
                                      record)
                    .ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_TRUE(done.empty());
    EXPECT_TRUE(store->WorkQueued());
    fs->Crash();
  }
  EXPECT_TRUE(done.size() <= 1u) << "the dead store's shutdown may call back; nothing lands";
  done.clear();
  {
    auto store = OpenOn(fs, true);
    ASSERT_NE(store, nullptr);
    Result<consensus::RecoveredState> lost = store->RecoverGroup(group);
    ASSERT_TRUE(lost.ok()) << lost.status().ToString();
    EXPECT_TRUE(lost->entries.empty()) << "queued, never run: not durable";

    ASSERT_TRUE(store->SubmitLogWrite(testing::LogWriteFor(group)
                                          .HardState(testing::MakeHardState(2, 1, 2))
                                          .Entries(testing::MakeEntries(1, 2, 2)),
                                      record)
                    .ok());
    ASSERT_TRUE(
        store->SubmitLogWrite(testing::LogWriteFor(group).Entries(testing::MakeEntries(3, 3, 2)),
                              record)
            .ok());
    bool job_ran = false;
    ASSERT_TRUE(store->SubmitSnapshotWork([&] { job_ran = true; }).ok());
    const uint64_t commits_before = store->group_commit_stats().batches_synced;
    EXPECT_TRUE(store->RunWorkers());
    EXPECT_EQ(done.size(), 2u);
    EXPECT_TRUE(job_ran);
    EXPECT_EQ(store->group_commit_stats().batches_synced, commits_before + 1) << "one group commit";
    EXPECT_FALSE(store->WorkQueued());
    EXPECT_FALSE(store->RunWorkers());
    // A blocking call does the writer's work on this thread.
    ASSERT_TRUE(store->WriteLog(testing::LogWriteFor(group).Entries(testing::MakeEntries(4, 4, 2)))
                    .ok());
    fs->Crash();
  }
  auto store = OpenOn(fs, true);
  ASSERT_NE(store, nullptr);
  Result<consensus::RecoveredState> kept = store->RecoverGroup(group);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->entries.size(), 4u);
  for (const Status& s : done) EXPECT_TRUE(s.ok()) << s.ToString();
}

}  // namespace
}  // namespace tessera::storage
