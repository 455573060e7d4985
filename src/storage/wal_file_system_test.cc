// Goal: WAL files get durable zeros written ahead of their end without ever
// overlapping the log's bytes, close at their exact size, and a node store
// that dies with zero-tailed WAL files recovers every synced write.
#include "storage/wal_file_system.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "storage/node_store.h"
#include "storage/storage_test_util.h"
#include "storage/wal_crash_writer.h"

namespace tessera::storage {
namespace {

using testing::EntriesEq;
using testing::OpenStoreWith;
using testing::TempDir;

uint64_t PhysicalSize(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return static_cast<uint64_t>(st.st_size);
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool AllZero(std::string_view bytes) {
  return bytes.find_first_not_of('\0') == std::string_view::npos;
}

// Small sizes so that a test crosses many extensions.
WalZeroFillOptions SmallZeroFill() {
  WalZeroFillOptions options;
  options.chunk_bytes = 128 << 10;
  options.lead_bytes = 64 << 10;
  options.first_gap_bytes = 32 << 10;
  return options;
}

bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

class WalFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = std::make_shared<WalFileSystem>(rocksdb::FileSystem::Default(), dir_.path(), SmallZeroFill());
    fs_->Start();
  }

  std::unique_ptr<rocksdb::FSWritableFile> NewFile(const std::string& name) {
    std::unique_ptr<rocksdb::FSWritableFile> file;
    rocksdb::IOStatus s = fs_->NewWritableFile(dir_.Sub(name), rocksdb::FileOptions(), &file, nullptr);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return file;
  }

  TempDir dir_;
  std::shared_ptr<WalFileSystem> fs_;
  rocksdb::IOOptions io_;
};

TEST_F(WalFileSystemTest, OnlyNumberedLogFilesOfItsDirectoryAreWalFiles) {
  EXPECT_TRUE(fs_->IsWalFile(dir_.Sub("000012.log")));
  EXPECT_TRUE(fs_->IsWalFile(dir_.path() + "//000012.log"));
  EXPECT_FALSE(fs_->IsWalFile(dir_.Sub("LOG")));
  EXPECT_FALSE(fs_->IsWalFile(dir_.Sub("LOG.old.1")));
  EXPECT_FALSE(fs_->IsWalFile(dir_.Sub(".log")));
  EXPECT_FALSE(fs_->IsWalFile(dir_.Sub("x00012.log")));
  EXPECT_FALSE(fs_->IsWalFile(dir_.Sub("000012.log.tmp")));
  EXPECT_FALSE(fs_->IsWalFile(dir_.Sub("000012.sst")));
  EXPECT_FALSE(fs_->IsWalFile(dir_.Sub("sub/000012.log")));
  EXPECT_FALSE(fs_->IsWalFile("/elsewhere/000012.log"));
  // Other files are the wrapped file system's: no zeros are added.
  auto other = NewFile("MANIFEST-000001");
  ASSERT_TRUE(other->Append("abc", io_, nullptr).ok());
  ASSERT_TRUE(other->Close(io_, nullptr).ok());
  EXPECT_EQ(PhysicalSize(dir_.Sub("MANIFEST-000001")), 3u);
  EXPECT_EQ(fs_->zero_fill_stats().extensions, 0u);
}

TEST_F(WalFileSystemTest, ZerosStayAheadOfAppendsAndCloseLeavesTheExactBytes) {
  const std::string path = dir_.Sub("000007.log");
  auto file = NewFile("000007.log");
  std::string written;
  std::mt19937 random(7);
  for (int round = 0; round < 40; ++round) {
    std::string piece(1 + random() % 20000, static_cast<char>('a' + round % 26));
    ASSERT_TRUE(file->Append(piece, io_, nullptr).ok());
    ASSERT_TRUE(file->Sync(io_, nullptr).ok());
    written += piece;
    // Let the filler catch up, then the file is the log's bytes and zeros.
    ASSERT_TRUE(WaitFor([&] { return PhysicalSize(path) >= written.size() + 64 * 1024; }))
        << "no zeros ahead at " << written.size();
    const std::string contents = ReadWhole(path);
    ASSERT_EQ(contents.substr(0, written.size()), written);
    ASSERT_TRUE(AllZero(std::string_view(contents).substr(written.size())));
    EXPECT_EQ(file->GetFileSize(io_, nullptr), written.size());
  }
  EXPECT_GE(fs_->zero_fill_stats().extensions, written.size() / (128 << 10));
  EXPECT_EQ(fs_->zero_fill_stats().failures, 0u);
  ASSERT_TRUE(file->Close(io_, nullptr).ok());
  EXPECT_EQ(ReadWhole(path), written);
}

TEST_F(WalFileSystemTest, AppendsRacingExtensionsNeverLoseBytes) {
  const std::string path = dir_.Sub("000009.log");
  auto file = NewFile("000009.log");
  std::string written;
  std::mt19937 random(9);
  // No waiting: appends of every size race the filler's extensions.
  for (int round = 0; round < 3000; ++round) {
    std::string piece(1 + random() % 3000, static_cast<char>(random()));
    ASSERT_TRUE(file->Append(piece, io_, nullptr).ok());
    written += piece;
  }
  ASSERT_TRUE(file->Sync(io_, nullptr).ok());
  const std::string contents = ReadWhole(path);
  ASSERT_GE(contents.size(), written.size());
  EXPECT_TRUE(contents.substr(0, written.size()) == written);
  EXPECT_TRUE(AllZero(std::string_view(contents).substr(written.size())));
  ASSERT_TRUE(file->Close(io_, nullptr).ok());
  EXPECT_EQ(PhysicalSize(path), written.size());
  EXPECT_GT(fs_->zero_fill_stats().extensions, 0u);
}

TEST_F(WalFileSystemTest, ReopeningAWalFileForAppendingIsRefused) {
  auto file = NewFile("000003.log");
  ASSERT_TRUE(file->Close(io_, nullptr).ok());
  std::unique_ptr<rocksdb::FSWritableFile> reopened;
  EXPECT_TRUE(fs_->ReopenWritableFile(dir_.Sub("000003.log"), rocksdb::FileOptions(), &reopened, nullptr)
                  .IsNotSupported());
}

TEST(WalZeroFillDisabled, WalFilesStayOrdinary) {
  TempDir dir;
  WalZeroFillOptions options = SmallZeroFill();
  options.enabled = false;
  auto fs = std::make_shared<WalFileSystem>(rocksdb::FileSystem::Default(), dir.path(), options);
  fs->Start();
  std::unique_ptr<rocksdb::FSWritableFile> file;
  ASSERT_TRUE(fs->NewWritableFile(dir.Sub("000001.log"), rocksdb::FileOptions(), &file, nullptr).ok());
  rocksdb::IOOptions io;
  ASSERT_TRUE(file->Append(std::string(100000, 'x'), io, nullptr).ok());
  ASSERT_TRUE(file->Sync(io, nullptr).ok());
  EXPECT_EQ(PhysicalSize(dir.Sub("000001.log")), 100000u);
  EXPECT_EQ(fs->zero_fill_stats().extensions, 0u);
}

// The newest WAL file of a store directory.
std::string NewestWal(const std::string& dir) {
  std::string newest;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".log") && name > std::filesystem::path(newest).filename().string()) {
      newest = entry.path().string();
    }
  }
  return newest;
}

// Goal: a store killed with zero-tailed WAL files recovers every synced write.
TEST(NodeStoreWalZeroFill, KilledStoreRecoversEverySyncedEntry) {
  TempDir dir;
  const std::string path = dir.Sub("store");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::execl(TESSERA_WAL_CRASH_WRITER, TESSERA_WAL_CRASH_WRITER, path.c_str(), nullptr);
    ::_exit(127);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), crash_writer::kExitDone)
      << "2: a write failed, 3: no zeros were written ahead, 127: no helper";

  // The live WAL still ends in zeros, as after a crash.
  const std::string wal = NewestWal(path);
  ASSERT_FALSE(wal.empty());
  const std::string contents = ReadWhole(wal);
  ASSERT_GE(contents.size(), 32u << 10);
  EXPECT_TRUE(AllZero(std::string_view(contents).substr(contents.size() - (32 << 10))));

  auto store = OpenStoreWith(crash_writer::Options(path));
  ASSERT_NE(store, nullptr);
  Result<consensus::RecoveredState> recovered = store->RecoverGroup(crash_writer::kGroup);
  ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
  std::vector<pb::Entry> want;
  for (Slot s = 1; s <= crash_writer::kSlots; ++s) want.push_back(crash_writer::EntryAt(s));
  EXPECT_TRUE(EntriesEq(recovered->entries, want));
}

}  // namespace
}  // namespace tessera::storage
