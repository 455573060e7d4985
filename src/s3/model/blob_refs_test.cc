// Goal: the reference scan finds every blob a key's records name (head,
// versions, parts), only that key's, and refuses to guess past its bound.
#include "s3/model/blob_refs.h"

#include <gtest/gtest.h>

#include "s3/model/model_test_util.h"
#include "s3/model/s3_keys.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::model {
namespace {

constexpr uint64_t kBucket = 7;

pb::ObjectVersion Version(std::vector<std::string> blobs) {
  pb::ObjectVersion v;
  for (auto& b : blobs) v.add_blobs()->set_blob_id(b);
  return v;
}

class BlobRefsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pb::ObjectHead head;
    *head.mutable_latest() = Version({"h1", "h2"});
    state_.Put(HeadKey(kBucket, "k"), head.SerializeAsString());
    pb::VersionRecord version;
    *version.mutable_version() = Version({"v1"});
    state_.Put(VersionKey(kBucket, "k", 3), version.SerializeAsString());
    pb::UploadRecord upload;
    upload.set_upload_id("u");
    state_.Put(UploadKey(kBucket, "k", "u"), upload.SerializeAsString());
    pb::PartRecord part;
    part.set_part_number(1);
    part.add_blobs()->set_blob_id("p1");
    state_.Put(PartKey(kBucket, "k", "u", 1), part.SerializeAsString());
    // A key extending "k" and another bucket: never the owner's references.
    pb::ObjectHead other;
    *other.mutable_latest() = Version({"x1"});
    state_.Put(HeadKey(kBucket, "k/more"), other.SerializeAsString());
    state_.Put(HeadKey(kBucket + 1, "k"), other.SerializeAsString());
    pb::GcRecord gc;
    gc.add_blob_ids("g1");
    state_.Put(GcKey(9), gc.SerializeAsString());
  }

  MemoryState state_;
};

TEST_F(BlobRefsTest, FindsHeadVersionAndPartReferencesOfTheOwnerOnly) {
  const std::set<std::string> candidates = {"h1", "h2", "v1", "p1", "x1", "g1", "none"};
  auto refs = ReferencedAmong(state_, ObjectPrefix(kBucket, "k"), candidates, 1000);
  ASSERT_TRUE(refs.ok()) << refs.status().ToString();
  EXPECT_EQ(*refs, (std::set<std::string>{"h1", "h2", "v1", "p1"}));
  auto other = ReferencedAmong(state_, ObjectPrefix(kBucket, "k/more"), candidates, 1000);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(*other, (std::set<std::string>{"x1"}));
}

TEST_F(BlobRefsTest, RefusesBadOwnersAndGivesUpPastItsBound) {
  EXPECT_EQ(ReferencedAmong(state_, "short", {"a"}, 10).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ReferencedAmong(state_, ObjectPrefix(0, "k"), {"a"}, 10).status().code(),
            StatusCode::kInvalidArgument);
  for (uint64_t seq = 100; seq < 1100; ++seq) {
    pb::VersionRecord version;
    *version.mutable_version() = Version({"many"});
    state_.Put(VersionKey(kBucket, "big", seq), version.SerializeAsString());
  }
  EXPECT_EQ(ReferencedAmong(state_, ObjectPrefix(kBucket, "big"), {"many"}, 1000).status().code(),
            StatusCode::kUnavailable);
  auto refs = ReferencedAmong(state_, ObjectPrefix(kBucket, "big"), {"many"}, 5000);
  ASSERT_TRUE(refs.ok());
  EXPECT_EQ(refs->size(), 1u);
}

TEST_F(BlobRefsTest, ScanPagesThroughEveryObjectRecord) {
  std::vector<std::string> all;
  std::string start;
  for (int pages = 0; pages < 20; ++pages) {
    auto page = ScanReferencedBlobs(state_, start, "", 2);
    ASSERT_TRUE(page.ok());
    all.insert(all.end(), page->referenced.begin(), page->referenced.end());
    if (page->next.empty()) break;
    start = page->next;
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<std::string>{"h1", "h2", "p1", "v1", "x1", "x1"}));
}

TEST_F(BlobRefsTest, UnparseableRecordIsCorruption) {
  state_.Put(HeadKey(kBucket, "bad"), "\xff\xff\xff");
  EXPECT_EQ(ReferencedAmong(state_, ObjectPrefix(kBucket, "bad"), {"a"}, 10).status().code(),
            StatusCode::kCorruption);
}

}  // namespace
}  // namespace tessera::s3::model
