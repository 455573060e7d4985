// Goal: the blob store keeps blobs durably in checksummed files, serves
// exact ranges, and reports every damaged file (flipped byte, truncation,
// extension, misplaced file) as Corruption instead of returning bad bytes.
#include "blob/blob_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <cstring>
#include <fstream>
#include <thread>

#include "blob/blob_file.h"
#include "blob/blob_test_util.h"
#include "common/crc32c.h"
#include "common/limits.h"
#include "common/shared_bytes.h"

namespace tessera::blob {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::TestData;

constexpr uint64_t kBlock = file::kBlockBytes;

class BlobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  void Reopen(BlobStoreOptions options = {}) {
    store_.reset();
    auto store = BlobStore::Open(dir_.Sub("blobs"), std::move(options));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }

  std::string ReadAll(const BlobId& id) {
    auto r = store_->Read(id, 0, UINT64_MAX);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::string(r->data.view()) : std::string();
  }

  StatusCode ReadCode(const BlobId& id, uint64_t offset = 0, uint64_t length = UINT64_MAX) {
    return store_->Read(id, offset, length).status().code();
  }

  // Overwrites one byte of a blob's file.
  void FlipByte(const BlobId& id, uint64_t file_offset) {
    std::fstream f(store_->PathOf(id), std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good());
    f.seekg(static_cast<std::streamoff>(file_offset));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x5a);
    f.seekp(static_cast<std::streamoff>(file_offset));
    f.write(&c, 1);
  }

  // A blob file of an older format `version`, written as that version did.
  void WriteFileOfVersion(uint16_t version, const BlobId& id, std::string_view owner,
                          const std::string& data) {
    fs::create_directories(fs::path(store_->PathOf(id)).parent_path());
    std::ofstream f(store_->PathOf(id), std::ios::binary);
    f << file::EncodePrefix(id, owner, data, version) << data;
  }

  TempDir dir_;
  std::unique_ptr<BlobStore> store_;
};

TEST_F(BlobStoreTest, RoundTripsEverySize) {
  for (uint64_t size : {uint64_t{0}, uint64_t{1}, kBlock - 1, kBlock, kBlock + 1, 3 * kBlock + 17,
                        uint64_t{limits::kBlobBytesMax}}) {
    const BlobId id = BlobId::Generate(static_cast<uint32_t>(size % limits::kBlobSlots));
    const std::string data = TestData(size, size);
    ASSERT_TRUE(store_->Put(id, "", data).ok()) << size;
    EXPECT_EQ(fs::file_size(store_->PathOf(id)), file::FileBytes(file::kVersion, 0, size));
    auto r = store_->Read(id, 0, UINT64_MAX);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->total_size, size);
    EXPECT_TRUE(r->data.view() == data) << size;
    EXPECT_EQ(r->crc32c, Crc32c(data)) << size;
  }
}

// Goal: version 3 files end at a 4 KiB multiple, and a put reads back
// byte for byte whether its data lies where O_DIRECT can write it without
// a copy (ending on a 4 KiB boundary, as a received blob.put frame's does)
// or anywhere else, with an owner of any length.
TEST_F(BlobStoreTest, DataFromAlignedAndUnalignedBuffersRoundTrips) {
  uint32_t slot = 40;
  for (uint64_t size : {uint64_t{1}, uint64_t{4095}, uint64_t{4096}, uint64_t{4097}, 3 * kBlock + 17,
                        uint64_t{limits::kBlobBytesMax}}) {
    for (const std::string& owner : {std::string(), std::string(300, 'o'), std::string(limits::kBlobOwnerBytesMax, 'w')}) {
      const std::string data = TestData(size, size + owner.size());
      SharedBytes aligned = SharedBytes::UninitializedEndAligned(size, file::kFileAlignmentBytes);
      std::memcpy(aligned.mutable_data(), data.data(), size);
      std::string unaligned_storage = "x" + data;
      const std::string_view unaligned = std::string_view(unaligned_storage).substr(1);
      for (const std::string_view from : {aligned.view(), unaligned}) {
        const BlobId id = BlobId::Generate(slot++);
        ASSERT_TRUE(store_->Put(id, owner, from).ok()) << size;
        const uint64_t file_bytes = fs::file_size(store_->PathOf(id));
        EXPECT_EQ(file_bytes % file::kFileAlignmentBytes, 0u) << size;
        EXPECT_EQ(file_bytes, file::FileBytes(file::kVersion, owner.size(), size));
        auto r = store_->Read(id, 0, UINT64_MAX);
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        EXPECT_EQ(r->owner, owner);
        EXPECT_TRUE(r->data.view() == data) << size;
        auto tail = store_->Read(id, size - 1, 1);
        ASSERT_TRUE(tail.ok());
        EXPECT_EQ(tail->data.view(), data.substr(size - 1));
      }
    }
  }
}

TEST_F(BlobStoreTest, FileLivesUnderItsSlotDirectory) {
  BlobId id = BlobId::Generate(0x1ab);
  ASSERT_TRUE(store_->Put(id, "", "x").ok());
  EXPECT_EQ(store_->PathOf(id), dir_.Sub("blobs") + "/ab/" + id.ToString() + ".blob");
  EXPECT_TRUE(fs::exists(store_->PathOf(id)));
}

TEST_F(BlobStoreTest, RangesAreExactAndClamped) {
  const BlobId id = BlobId::Generate(5);
  const std::string data = TestData(5 * kBlock + 123);
  ASSERT_TRUE(store_->Put(id, "", data).ok());
  const std::vector<std::pair<uint64_t, uint64_t>> ranges = {
      {0, 1}, {kBlock - 1, 2}, {kBlock, kBlock}, {kBlock + 5, 3 * kBlock}, {5 * kBlock, 123},
      {5 * kBlock + 100, 1000}, {data.size(), 10}, {17, 0}, {0, 2 * kBlock}, {3, 2 * kBlock - 3},
      {kBlock, 4 * kBlock + 123}, {7, 5 * kBlock}};
  for (const auto& [offset, length] : ranges) {
    auto r = store_->Read(id, offset, length);
    ASSERT_TRUE(r.ok()) << offset << " " << r.status().ToString();
    EXPECT_TRUE(r->data.view() == data.substr(offset, length)) << offset << "+" << length;
    // Combined from block checksums (whole blocks) and partial ones (edges).
    EXPECT_EQ(r->crc32c, Crc32c(data.substr(offset, length))) << offset << "+" << length;
    EXPECT_EQ(r->total_size, data.size());
  }
  EXPECT_EQ(ReadCode(id, data.size() + 1, 1), StatusCode::kInvalidArgument);
}

// Goal: a read's bytes and checksum are its own: ranges large and small,
// aligned to blocks or not, keep their bytes after the file is deleted and
// its id written again with other data.
TEST_F(BlobStoreTest, ReadBytesOutliveTheirFile) {
  const BlobId id = BlobId::Generate(6);
  const std::string data = TestData(limits::kBlobBytesMax, 6);
  ASSERT_TRUE(store_->Put(id, "owner", data).ok());
  auto small = store_->Read(id, 3, 100 << 10);
  auto whole = store_->Read(id, 0, UINT64_MAX);
  auto middle = store_->Read(id, kBlock + 4097, 300 << 10);
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ASSERT_TRUE(middle.ok()) << middle.status().ToString();
  ASSERT_TRUE(store_->Delete(id).ok());
  ASSERT_TRUE(store_->Put(id, "owner", TestData(limits::kBlobBytesMax, 7)).ok());
  EXPECT_TRUE(small->data.view() == data.substr(3, 100 << 10));
  EXPECT_EQ(small->crc32c, Crc32c(data.substr(3, 100 << 10)));
  EXPECT_TRUE(whole->data.view() == data);
  EXPECT_EQ(whole->crc32c, Crc32c(data));
  EXPECT_TRUE(middle->data.view() == data.substr(kBlock + 4097, 300 << 10));
  EXPECT_EQ(middle->crc32c, Crc32c(data.substr(kBlock + 4097, 300 << 10)));
}

// Goal: a put with the CRC its data was sent with writes nothing when the
// data fails it (new or existing id), is not counted as a bad file, and
// writes as usual when it holds, for sizes that end inside a block or not.
TEST_F(BlobStoreTest, PutWithAnExpectedCrcRefusesDataThatFailsIt) {
  for (uint64_t size : {uint64_t{0}, uint64_t{5}, kBlock, 3 * kBlock + 17}) {
    const BlobId id = BlobId::Generate(static_cast<uint32_t>(20 + size % 7));
    const std::string data = TestData(size, size + 1);
    const uint32_t crc = Crc32c(data);
    EXPECT_EQ(store_->Put(id, "o", data, crc ^ 1).code(), StatusCode::kCorruption) << size;
    EXPECT_FALSE(fs::exists(store_->PathOf(id))) << size;
    ASSERT_TRUE(store_->Put(id, "o", data, crc).ok()) << size;
    EXPECT_TRUE(ReadAll(id) == data) << size;
    EXPECT_EQ(store_->Put(id, "o", data, crc ^ 1).code(), StatusCode::kCorruption) << size;
    EXPECT_TRUE(store_->Put(id, "o", data, crc).ok()) << size;
  }
  EXPECT_EQ(store_->stats().corruptions, 0u);
  EXPECT_EQ(store_->stats().puts, 8u);
}

TEST_F(BlobStoreTest, PutIsIdempotentAndDetectsConflicts) {
  const BlobId id = BlobId::Generate(9);
  ASSERT_TRUE(store_->Put(id, "", "hello").ok());
  EXPECT_TRUE(store_->Put(id, "", "hello").ok());
  EXPECT_EQ(store_->Put(id, "", "hellO").code(), StatusCode::kConflict);
  EXPECT_EQ(ReadAll(id), "hello");
  EXPECT_EQ(store_->stats().puts, 2u);
  EXPECT_EQ(store_->stats().put_bytes, 5u);
}

TEST_F(BlobStoreTest, RejectsOversizedBlobs) {
  const std::string big(limits::kBlobBytesMax + 1, 'x');
  EXPECT_EQ(store_->Put(BlobId::Generate(1), "", big).code(), StatusCode::kInvalidArgument);
}

TEST_F(BlobStoreTest, MissingAndDeletedBlobsAreNotFound) {
  const BlobId id = BlobId::Generate(3);
  EXPECT_EQ(ReadCode(id), StatusCode::kNotFound);
  EXPECT_EQ(store_->Delete(id).code(), StatusCode::kNotFound);
  ASSERT_TRUE(store_->Put(id, "", "bytes").ok());
  EXPECT_TRUE(store_->Delete(id).ok());
  EXPECT_EQ(ReadCode(id), StatusCode::kNotFound);
  EXPECT_EQ(store_->stats().deletes, 1u);
  ASSERT_TRUE(store_->Put(id, "", "other bytes").ok());  // a deleted id may be reused
}

TEST_F(BlobStoreTest, FlippedDataByteCorruptsOnlyItsBlock) {
  const BlobId id = BlobId::Generate(11);
  const std::string data = TestData(4 * kBlock);
  ASSERT_TRUE(store_->Put(id, "", data).ok());
  FlipByte(id, file::DataOffset(file::kVersion, 0, data.size()) + 2 * kBlock + 10);
  EXPECT_EQ(ReadCode(id), StatusCode::kCorruption);
  EXPECT_EQ(ReadCode(id, 2 * kBlock + 5, 10), StatusCode::kCorruption);
  EXPECT_EQ(ReadCode(id, 2 * kBlock - 5, 10), StatusCode::kCorruption);  // spans into it
  auto before = store_->Read(id, 0, 2 * kBlock);
  ASSERT_TRUE(before.ok());
  EXPECT_TRUE(before->data.view() == data.substr(0, 2 * kBlock));
  auto after = store_->Read(id, 3 * kBlock, kBlock);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->data.view() == data.substr(3 * kBlock));
  EXPECT_GE(store_->stats().corruptions, 3u);
}

TEST_F(BlobStoreTest, DamagedHeaderTableOrLengthIsCorruption) {
  const std::string data = TestData(2 * kBlock + 3);
  const auto fresh = [&] {
    const BlobId id = BlobId::Generate(12);
    EXPECT_TRUE(store_->Put(id, "", data).ok());
    return id;
  };
  for (uint64_t offset : {uint64_t{0}, uint64_t{5}, uint64_t{13}, uint64_t{20}, uint64_t{33}, uint64_t{45},
                          uint64_t{file::kHeaderBytes + 1}}) {
    const BlobId id = fresh();
    FlipByte(id, offset);
    EXPECT_EQ(ReadCode(id), StatusCode::kCorruption) << offset;
  }
  const BlobId truncated = fresh();
  fs::resize_file(store_->PathOf(truncated), fs::file_size(store_->PathOf(truncated)) - 1);
  EXPECT_EQ(ReadCode(truncated, 0, 10), StatusCode::kCorruption);
  const BlobId torn = fresh();
  fs::resize_file(store_->PathOf(torn), 20);
  EXPECT_EQ(ReadCode(torn, 0, 10), StatusCode::kCorruption);
  const BlobId extended = fresh();
  std::ofstream(store_->PathOf(extended), std::ios::app | std::ios::binary) << "junk";
  EXPECT_EQ(ReadCode(extended, 0, 10), StatusCode::kCorruption);
}

TEST_F(BlobStoreTest, FileUnderAnotherIdsNameIsCorruption) {
  const BlobId a = BlobId::Generate(7);
  BlobId b = a;
  b.unique[15] ^= 1;  // same slot, same directory
  ASSERT_TRUE(store_->Put(a, "", "payload").ok());
  fs::copy_file(store_->PathOf(a), store_->PathOf(b));
  EXPECT_EQ(ReadCode(b), StatusCode::kCorruption);
}

TEST_F(BlobStoreTest, PutReplacesACorruptFile) {
  const BlobId id = BlobId::Generate(13);
  const std::string data = TestData(1000);
  ASSERT_TRUE(store_->Put(id, "", data).ok());
  FlipByte(id, file::DataOffset(file::kVersion, 0, data.size()) + 10);
  ASSERT_EQ(ReadCode(id), StatusCode::kCorruption);
  ASSERT_TRUE(store_->Put(id, "", data).ok());
  EXPECT_TRUE(ReadAll(id) == data);
}

TEST_F(BlobStoreTest, FailedSyncLeavesNoFile) {
  std::atomic<bool> fail{true};
  BlobStoreOptions options;
  options.before_sync = [&fail]() -> Status {
    return fail ? Status::IOError("injected fsync failure") : Status::Ok();
  };
  fail = false;
  Reopen(options);
  fail = true;
  const BlobId id = BlobId::Generate(21);
  EXPECT_EQ(store_->Put(id, "", "data").code(), StatusCode::kIOError);
  EXPECT_EQ(ReadCode(id), StatusCode::kNotFound);
  for (const auto& entry : fs::recursive_directory_iterator(dir_.Sub("blobs"))) {
    EXPECT_FALSE(entry.is_regular_file()) << entry.path();
  }
  EXPECT_EQ(store_->stats().io_errors, 1u);
  fail = false;
  EXPECT_TRUE(store_->Put(id, "", "data").ok());
  EXPECT_EQ(ReadAll(id), "data");
}

TEST_F(BlobStoreTest, OpenRemovesTemporariesAndKeepsBlobs) {
  const BlobId id = BlobId::Generate(30);
  ASSERT_TRUE(store_->Put(id, "", "kept").ok());
  const std::string temp = store_->PathOf(BlobId::Generate(30)) + ".tmp";
  std::ofstream(temp) << "half written";
  Reopen();
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_EQ(ReadAll(id), "kept");
}

TEST_F(BlobStoreTest, ListPagesInIdOrder) {
  std::vector<BlobId> ids;
  for (uint32_t slot : {0u, 1u, 256u, 257u, 4095u}) {  // 0 and 256 share a directory
    for (int i = 0; i < 3; ++i) {
      ids.push_back(BlobId::Generate(slot));
      ASSERT_TRUE(store_->Put(ids.back(), "", TestData(10 * slot + i)).ok());
    }
  }
  std::sort(ids.begin(), ids.end());
  std::vector<BlobId> seen;
  std::optional<BlobId> after;
  for (int page = 0; page < 10; ++page) {
    auto p = store_->List(0, after, 4);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    for (const BlobListEntry& e : p->entries) {
      seen.push_back(e.id);
      EXPECT_EQ(e.size, 10 * e.id.slot + (e.size % 10));
    }
    if (!p->more) break;
    after = p->entries.back().id;
  }
  EXPECT_EQ(seen, ids);
  auto from = store_->List(257, std::nullopt, 100);
  ASSERT_TRUE(from.ok());
  ASSERT_EQ(from->entries.size(), 6u);
  EXPECT_EQ(from->entries.front().id.slot, 257u);
  EXPECT_FALSE(from->more);
}

TEST_F(BlobStoreTest, ConcurrentIdenticalPutsAllSucceed) {
  const BlobId id = BlobId::Generate(40);
  const std::string data = TestData(3 * kBlock);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      if (store_->Put(id, "", data).ok()) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 4);
  EXPECT_TRUE(ReadAll(id) == data);
}

}  // namespace
TEST_F(BlobStoreTest, OwnerRoundTripsThroughReadStatAndList) {
  const BlobId id = BlobId::Generate(33);
  const std::string owner = std::string(8, '\0') + "bucket/key";
  const std::string data = TestData(kBlock + 5);
  ASSERT_TRUE(store_->Put(id, owner, data).ok());
  EXPECT_EQ(fs::file_size(store_->PathOf(id)), file::FileBytes(file::kVersion, owner.size(), data.size()));
  EXPECT_TRUE(store_->Put(id, owner, data).ok());  // a retried put
  EXPECT_EQ(store_->Put(id, "other owner", data).code(), StatusCode::kConflict);
  auto r = store_->Read(id, kBlock, 100);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->owner, owner);
  EXPECT_EQ(r->data.view(), data.substr(kBlock, 5));
  auto st = store_->Stat(id);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->owner, owner);
  EXPECT_EQ(st->size, data.size());
  EXPECT_GT(st->mtime_ms, 0);
  auto page = store_->List(0, std::nullopt, 10);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->entries.size(), 1u);
  EXPECT_EQ(page->entries[0].owner, owner);
  EXPECT_EQ(page->entries[0].size, data.size());
  EXPECT_FALSE(page->entries[0].corrupt);
  EXPECT_EQ(store_->Stat(BlobId::Generate(33)).status().code(), StatusCode::kNotFound);
}

TEST_F(BlobStoreTest, DamagedOwnerIsCorruption) {
  const BlobId id = BlobId::Generate(34);
  ASSERT_TRUE(store_->Put(id, "owner bytes", "data").ok());
  FlipByte(id, file::kHeaderBytes + 2);
  EXPECT_EQ(ReadCode(id), StatusCode::kCorruption);
  EXPECT_EQ(store_->Stat(id).status().code(), StatusCode::kCorruption);
  auto page = store_->List(34, std::nullopt, 10);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->entries.size(), 1u);
  EXPECT_TRUE(page->entries[0].corrupt);
}

TEST_F(BlobStoreTest, VersionTwoFileReadsWithItsOwner) {
  const BlobId id = BlobId::Generate(36);
  const std::string data = TestData(2 * kBlock + 9);
  WriteFileOfVersion(file::kVersion2, id, "owner-2", data);
  EXPECT_EQ(fs::file_size(store_->PathOf(id)), file::FileBytes(file::kVersion2, 7, data.size()));
  auto r = store_->Read(id, kBlock - 3, kBlock);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->data.view() == data.substr(kBlock - 3, kBlock));
  EXPECT_EQ(r->owner, "owner-2");
  EXPECT_TRUE(store_->Put(id, "owner-2", data).ok());  // identical: OK
  EXPECT_EQ(store_->Put(id, "other", data).code(), StatusCode::kConflict);
}

TEST_F(BlobStoreTest, LegacyVersionOneFileReadsWithEmptyOwner) {
  const BlobId id = BlobId::Generate(35);
  const std::string data = TestData(2 * kBlock + 9);
  WriteFileOfVersion(file::kLegacyVersion, id, "", data);
  auto r = store_->Read(id, 0, UINT64_MAX);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->data.view() == data);
  EXPECT_EQ(r->owner, "");
  auto st = store_->Stat(id);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->owner, "");
  EXPECT_TRUE(store_->Put(id, "", data).ok());  // identical bytes, no owner: OK
  EXPECT_TRUE(store_->Delete(id).ok());
}

}  // namespace tessera::blob
