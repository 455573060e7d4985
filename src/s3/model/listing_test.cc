#include "s3/model/listing.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "s3/model/model_test_util.h"
#include "s3/model/object_ops.h"
#include "s3/model/s3_keys.h"

namespace tessera::s3::model {
namespace {

constexpr uint64_t kBucket = 3;

// Items as strings: "k:<key>" for entries, "p:<prefix>" for common prefixes.
std::vector<std::string> Render(const pb::S3ListResponse& r) {
  std::vector<std::string> out;
  for (const auto& item : r.items()) {
    out.push_back(item.has_entry() ? "k:" + item.entry().key() : "p:" + item.common_prefix());
  }
  return out;
}

// S3's listing semantics, by brute force over the live keys.
std::vector<std::string> Reference(const std::set<std::string>& keys, const std::string& prefix,
                                   const std::string& delimiter, const std::string& start_after,
                                   size_t max_keys) {
  std::vector<std::string> out;
  std::string last_prefix;
  for (const std::string& k : keys) {
    if (k.compare(0, prefix.size(), prefix) != 0) continue;
    if (!start_after.empty() && k <= start_after) continue;
    if (!delimiter.empty()) {
      size_t at = k.find(delimiter, prefix.size());
      if (at != std::string::npos) {
        std::string common = k.substr(0, at + delimiter.size());
        if (common == last_prefix || common <= start_after) continue;
        last_prefix = common;
        out.push_back("p:" + common);
        if (out.size() == max_keys) break;
        continue;
      }
    }
    out.push_back("k:" + k);
    if (out.size() == max_keys) break;
  }
  return out;
}

class ListingTest : public ::testing::Test {
 protected:
  void Put(const std::string& key, pb::BucketVersioning versioning = pb::VERSIONING_UNSET) {
    pb::S3Op op;
    op.mutable_put_object()->set_bucket_id(kBucket);
    op.mutable_put_object()->set_key(key);
    op.mutable_put_object()->mutable_object()->set_etag("e");
    // Inline bytes: every version has a data record the listings must skip.
    op.mutable_put_object()->mutable_object()->set_size(1);
    op.mutable_put_object()->mutable_object()->set_inline_data("x");
    op.mutable_put_object()->set_versioning(versioning);
    ASSERT_TRUE(ApplyS3Op(op, ++slot_, state_).ok());
  }
  void DeleteVersioned(const std::string& key) {
    pb::S3Op op;
    op.mutable_delete_object()->set_bucket_id(kBucket);
    op.mutable_delete_object()->set_key(key);
    op.mutable_delete_object()->set_versioning(pb::VERSIONING_ENABLED);
    ASSERT_TRUE(ApplyS3Op(op, ++slot_, state_).ok());
  }
  std::vector<std::string> List(const std::string& prefix, const std::string& delimiter,
                                const std::string& start_after, uint32_t max_keys,
                                std::string end_key = {}) {
    pb::S3ListRequest req;
    req.set_bucket_id(kBucket);
    req.set_prefix(prefix);
    req.set_delimiter(delimiter);
    req.set_start_after(start_after);
    req.set_max_keys(max_keys);
    req.set_end_key(std::move(end_key));
    auto r = ListPartition(state_, req);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? Render(*r) : std::vector<std::string>{};
  }

  MemoryState state_;
  uint64_t slot_ = 0;
};

TEST_F(ListingTest, PrefixDelimiterAndStartAfter) {
  for (const char* k : {"a", "a/1", "a/2", "a/b/c", "ab", "b", "photos/2024/x.jpg",
                        "photos/2025/y.jpg", "photos/z.jpg"}) {
    Put(k);
  }
  EXPECT_EQ(List("", "", "", 100),
            (std::vector<std::string>{"k:a", "k:a/1", "k:a/2", "k:a/b/c", "k:ab", "k:b",
                                      "k:photos/2024/x.jpg", "k:photos/2025/y.jpg",
                                      "k:photos/z.jpg"}));
  EXPECT_EQ(List("", "/", "", 100),
            (std::vector<std::string>{"k:a", "p:a/", "k:ab", "k:b", "p:photos/"}));
  EXPECT_EQ(List("photos/", "/", "", 100),
            (std::vector<std::string>{"p:photos/2024/", "p:photos/2025/", "k:photos/z.jpg"}));
  EXPECT_EQ(List("photos/", "/", "photos/2024/", 100),
            (std::vector<std::string>{"p:photos/2025/", "k:photos/z.jpg"}));
  EXPECT_EQ(List("a", "", "a/1", 2), (std::vector<std::string>{"k:a/2", "k:a/b/c"}));
  EXPECT_EQ(List("zzz", "", "", 10), std::vector<std::string>{});
}

TEST_F(ListingTest, DeleteMarkersHideKeysAndVersionsAreSkipped) {
  for (int i = 0; i < 50; ++i) Put("many", pb::VERSIONING_ENABLED);
  Put("gone", pb::VERSIONING_ENABLED);
  DeleteVersioned("gone");
  Put("kept", pb::VERSIONING_ENABLED);
  const size_t rows_before = state_.walked_rows();
  EXPECT_EQ(List("", "", "", 100), (std::vector<std::string>{"k:kept", "k:many"}));
  // "many" has 101 records after its head: the walk steps over a few, then
  // seeks past the rest.
  EXPECT_LT(state_.walked_rows() - rows_before, 60u);
}

TEST_F(ListingTest, CommonPrefixIsSkippedBySeekingNotReading) {
  for (int i = 0; i < 2000; ++i) Put("dir/" + std::to_string(i));
  Put("end");
  const size_t walks_before = state_.walks();
  const size_t rows_before = state_.walked_rows();
  EXPECT_EQ(List("", "/", "", 100), (std::vector<std::string>{"p:dir/", "k:end"}));
  EXPECT_LE(state_.walks() - walks_before, 3u);
  EXPECT_LT(state_.walked_rows() - rows_before, 40u);
}

// Goal: a listing longer than one walk resumes where the walk stopped and
// reads only head records' values.
TEST_F(ListingTest, LongListingSpansWalksAndReadsHeadsOnly) {
  std::set<std::string> keys;
  for (int i = 0; i < 3000; ++i) {
    const std::string key = "k" + std::to_string(100000 + i);
    keys.insert(key);
    Put(key);
  }
  const size_t walks_before = state_.walks();
  EXPECT_EQ(List("", "", "", 5000), Reference(keys, "", "", "", 5000));
  EXPECT_GE(state_.walks() - walks_before, 2u);  // 6,000 rows: more than one walk
  EXPECT_EQ(List("", "", "k101499", 1000), Reference(keys, "", "", "k101499", 1000));
  for (const std::string& key : state_.values_read()) {
    auto parsed = ParseObjectRecordKey(key);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(parsed->type, RecordType::kHead) << "read a non-head value at " << parsed->object_key;
  }
}

TEST_F(ListingTest, EndKeyBoundsThePartition) {
  for (const char* k : {"a", "b", "c", "d"}) Put(k);
  EXPECT_EQ(List("", "", "", 100, HeadKey(kBucket, "c")),
            (std::vector<std::string>{"k:a", "k:b"}));
}

TEST_F(ListingTest, VersionListingShowsEveryVersionNewestFirst) {
  Put("c");  // unversioned: one null version
  Put("a", pb::VERSIONING_ENABLED);
  Put("a", pb::VERSIONING_ENABLED);
  Put("b", pb::VERSIONING_ENABLED);
  DeleteVersioned("b");
  Put("a", pb::VERSIONING_ENABLED);
  auto list = [this](const std::string& key_marker, const std::string& version_marker,
                     uint32_t max_keys) {
    pb::S3ListRequest req;
    req.set_bucket_id(kBucket);
    req.set_versions(true);
    req.set_start_after(key_marker);
    req.set_version_id_marker(version_marker);
    req.set_max_keys(max_keys);
    auto r = ListPartition(state_, req);
    EXPECT_TRUE(r.ok());
    std::vector<std::string> out;
    for (const auto& item : r->items()) {
      const auto& e = item.entry();
      out.push_back(e.key() + (e.is_latest() ? "*" : "") + (e.delete_marker() ? "x" : "") +
                    (e.version_id() == "null" ? "n" : ""));
    }
    return std::make_pair(out, r.ok() ? *r : pb::S3ListResponse());
  };
  auto [all, response] = list("", "", 100);
  EXPECT_EQ(all, (std::vector<std::string>{"a*", "a", "a", "b*x", "b", "c*n"}));
  // Resume inside a's versions after the second one.
  const std::string second = response.items(1).entry().version_id();
  auto [rest, unused] = list("a", second, 100);
  EXPECT_EQ(rest, (std::vector<std::string>{"a", "b*x", "b", "c*n"}));
  auto [after_a, unused2] = list("a", "", 100);
  EXPECT_EQ(after_a, (std::vector<std::string>{"b*x", "b", "c*n"}));
}

TEST_F(ListingTest, MatchesReferenceOnRandomKeys) {
  std::mt19937 rng(7);
  const std::string alphabet = "ab/c.";
  std::set<std::string> keys;
  for (int i = 0; i < 400; ++i) {
    std::string k;
    const int len = 1 + static_cast<int>(rng() % 6);
    for (int j = 0; j < len; ++j) k.push_back(alphabet[rng() % alphabet.size()]);
    keys.insert(k);
    Put(k);
  }
  for (int trial = 0; trial < 300; ++trial) {
    std::string prefix = trial % 3 == 0 ? "" : std::string(1, alphabet[rng() % alphabet.size()]);
    std::string delimiter = trial % 2 == 0 ? "/" : (trial % 5 == 0 ? "b." : "");
    std::string start_after;
    if (trial % 4 == 1) start_after = *std::next(keys.begin(), static_cast<long>(rng() % keys.size()));
    if (trial % 7 == 3) start_after = prefix + "/";
    const uint32_t max_keys = 1 + rng() % 40;
    EXPECT_EQ(List(prefix, delimiter, start_after, max_keys),
              Reference(keys, prefix, delimiter, start_after, max_keys))
        << "prefix=" << prefix << " delimiter=" << delimiter << " start_after=" << start_after
        << " max_keys=" << max_keys;
  }
}

// Upload listings: "u:<key>/<upload id>" entries and "p:<prefix>" prefixes.
class UploadListingTest : public ListingTest {
 protected:
  void CreateUpload(const std::string& key, const std::string& upload_id) {
    pb::S3Op op;
    auto* c = op.mutable_create_upload();
    c->set_bucket_id(kBucket);
    c->set_key(key);
    c->mutable_upload()->set_upload_id(upload_id);
    c->mutable_upload()->set_initiated_ms(1000 + static_cast<int64_t>(slot_));
    c->mutable_upload()->mutable_template_()->set_owner("alice");
    ASSERT_TRUE(ApplyS3Op(op, ++slot_, state_).ok());
  }
  void AddPart(const std::string& key, const std::string& upload_id, uint32_t n) {
    pb::S3Op op;
    auto* p = op.mutable_upload_part();
    p->set_bucket_id(kBucket);
    p->set_key(key);
    p->set_upload_id(upload_id);
    p->mutable_part()->set_part_number(n);
    p->mutable_part()->set_size(1);
    ASSERT_TRUE(ApplyS3Op(op, ++slot_, state_).ok());
  }
  std::vector<std::string> Uploads(const std::string& prefix, const std::string& delimiter,
                                   const std::string& key_marker,
                                   const std::string& upload_id_marker, uint32_t max_keys) {
    pb::S3ListRequest req;
    req.set_bucket_id(kBucket);
    req.set_prefix(prefix);
    req.set_delimiter(delimiter);
    req.set_start_after(key_marker);
    req.set_uploads(true);
    req.set_upload_id_marker(upload_id_marker);
    req.set_max_keys(max_keys);
    auto r = ListPartition(state_, req);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::vector<std::string> out;
    if (!r.ok()) return out;
    for (const auto& item : r->items()) {
      if (item.has_entry()) {
        EXPECT_EQ(item.entry().owner(), "alice");
        EXPECT_GE(item.entry().last_modified_ms(), 1000);
        out.push_back("u:" + item.entry().key() + "/" + item.entry().upload_id());
      } else {
        out.push_back("p:" + item.common_prefix());
      }
    }
    return out;
  }
};

TEST_F(UploadListingTest, ListsUploadsNotObjectsInKeyThenIdOrder) {
  Put("a");             // an object without uploads: never listed
  Put("b");
  CreateUpload("b", "u2");
  CreateUpload("b", "u1");
  AddPart("b", "u1", 1);
  AddPart("b", "u1", 2);
  CreateUpload("c/x", "u3");
  CreateUpload("c/y", "u4");
  Put("d/only-object");
  CreateUpload("e", "u5");
  EXPECT_EQ(Uploads("", "", "", "", 100),
            (std::vector<std::string>{"u:b/u1", "u:b/u2", "u:c/x/u3", "u:c/y/u4", "u:e/u5"}));
  // Only prefixes holding an upload are shown ("d/" holds just an object).
  EXPECT_EQ(Uploads("", "/", "", "", 100),
            (std::vector<std::string>{"u:b/u1", "u:b/u2", "p:c/", "u:e/u5"}));
  EXPECT_EQ(Uploads("c/", "", "", "", 100), (std::vector<std::string>{"u:c/x/u3", "u:c/y/u4"}));
}

TEST_F(UploadListingTest, MarkersResumeInsideAndAfterAKey) {
  CreateUpload("b", "u1");
  CreateUpload("b", "u2");
  CreateUpload("b", "u3");
  CreateUpload("c", "u4");
  EXPECT_EQ(Uploads("", "", "b", "u1", 100),
            (std::vector<std::string>{"u:b/u2", "u:b/u3", "u:c/u4"}));
  EXPECT_EQ(Uploads("", "", "b", "", 100), (std::vector<std::string>{"u:c/u4"}));
  EXPECT_EQ(Uploads("", "", "", "", 2), (std::vector<std::string>{"u:b/u1", "u:b/u2"}));
  // Paging by (key, upload id) markers visits every upload exactly once.
  std::vector<std::string> all;
  std::string key_marker, id_marker;
  for (int page = 0; page < 10; ++page) {
    auto got = Uploads("", "", key_marker, id_marker, 1);
    if (got.empty()) break;
    all.push_back(got.front());
    const std::string item = got.front().substr(2);
    key_marker = item.substr(0, item.rfind('/'));
    id_marker = item.substr(item.rfind('/') + 1);
  }
  EXPECT_EQ(all, (std::vector<std::string>{"u:b/u1", "u:b/u2", "u:b/u3", "u:c/u4"}));
}

TEST_F(UploadListingTest, CommonPrefixAfterMarkerIsNotRepeated) {
  CreateUpload("c/x", "u1");
  CreateUpload("c/y", "u2");
  CreateUpload("d", "u3");
  EXPECT_EQ(Uploads("", "/", "c/", "", 100), (std::vector<std::string>{"u:d/u3"}));
}

}  // namespace
}  // namespace tessera::s3::model
