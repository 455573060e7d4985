// Goal: every S3 op keeps a version's inline bytes in exactly one data
// record (B K 00 05 ~seq) and removes it with the version, head and
// version records never carry bytes, and ReadObject returns each version's
// own bytes (records written before data records existed included).
#include <gtest/gtest.h>

#include <set>

#include "s3/model/model_test_util.h"
#include "s3/model/object_ops.h"
#include "s3/model/object_read.h"
#include "s3/model/s3_keys.h"
#include "s3/model/version_id.h"

namespace tessera::s3::model {
namespace {

constexpr uint64_t kBucket = 9;

class Points : public PointReader {
 public:
  explicit Points(MemoryState& state) : state_(state) {}
  Result<std::optional<std::string>> Get(const std::string& key) const override {
    ++reads_;
    keys_.insert(key);
    return state_.Get(key);
  }
  size_t reads() const { return reads_; }
  const std::set<std::string>& keys() const { return keys_; }

 private:
  MemoryState& state_;
  mutable size_t reads_ = 0;
  mutable std::set<std::string> keys_;
};

class InlineDataTest : public ::testing::Test {
 protected:
  pb::S3OpResult Put(const std::string& key, const std::string& bytes,
                     pb::BucketVersioning versioning = pb::VERSIONING_UNSET) {
    pb::S3Op op;
    auto* put = op.mutable_put_object();
    put->set_bucket_id(kBucket);
    put->set_key(key);
    put->mutable_object()->set_size(bytes.size());
    put->mutable_object()->set_etag("etag-" + bytes);
    put->mutable_object()->set_inline_data(bytes);
    put->set_versioning(versioning);
    return Apply(op);
  }

  pb::S3OpResult Delete(const std::string& key, pb::BucketVersioning versioning,
                        std::string version_id = {}) {
    pb::S3Op op;
    auto* del = op.mutable_delete_object();
    del->set_bucket_id(kBucket);
    del->set_key(key);
    del->set_versioning(versioning);
    del->set_version_id(std::move(version_id));
    return Apply(op);
  }

  pb::S3OpResult Apply(const pb::S3Op& op) {
    auto r = ApplyS3Op(op, ++slot_, state_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r.ok() ? r->outcome() : pb::S3_OK, pb::S3_OK);
    return r.ok() ? *r : pb::S3OpResult();
  }

  // The sequence numbers of the key's data records, and their bytes.
  std::map<uint64_t, std::string> DataRecords(const std::string& key) {
    std::map<uint64_t, std::string> out;
    for (const auto& [k, v] : state_.rows()) {
      auto parsed = ParseObjectRecordKey(k);
      if (!parsed || parsed->object_key != key) continue;
      if (parsed->type == RecordType::kData) {
        pb::ObjectData data;
        EXPECT_TRUE(data.ParseFromString(v));
        out[~ReadBigEndian64(parsed->suffix)] = data.data();
      }
    }
    return out;
  }

  // Head and version records carry no bytes, only the flag.
  void ExpectNoBytesInMetadata() {
    for (const auto& [k, v] : state_.rows()) {
      auto parsed = ParseObjectRecordKey(k);
      if (!parsed) continue;
      if (parsed->type == RecordType::kHead) {
        pb::ObjectHead head;
        ASSERT_TRUE(head.ParseFromString(v));
        EXPECT_TRUE(head.latest().inline_data().empty()) << parsed->object_key;
      } else if (parsed->type == RecordType::kVersion) {
        pb::VersionRecord record;
        ASSERT_TRUE(record.ParseFromString(v));
        EXPECT_TRUE(record.version().inline_data().empty()) << parsed->object_key;
      }
    }
  }

  // What s3.get answers: found, the bytes (with_data) or nullopt.
  std::optional<std::string> Get(const std::string& key, const std::string& version_id = {}) {
    pb::S3GetRequest request;
    request.set_bucket_id(kBucket);
    request.set_key(key);
    request.set_version_id(version_id);
    request.set_with_data(true);
    auto r = ReadObject(Points(state_), request);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || !r->found()) return std::nullopt;
    EXPECT_FALSE(r->version().bytes_in_data_record());
    EXPECT_EQ(r->version().inline_data().size(), r->version().size());
    return r->version().inline_data();
  }

  std::string HeadValue(const std::string& key) {
    auto raw = state_.Get(HeadKey(kBucket, key));
    return raw.ok() && raw->has_value() ? **raw : std::string();
  }

  MemoryState state_;
  uint64_t slot_ = 0;
};

TEST_F(InlineDataTest, UnversionedPutOverwriteAndDelete) {
  Put("k", "one");
  EXPECT_EQ(DataRecords("k"), (std::map<uint64_t, std::string>{{0, "one"}}));
  ExpectNoBytesInMetadata();
  pb::ObjectHead head;
  ASSERT_TRUE(head.ParseFromString(HeadValue("k")));
  EXPECT_TRUE(head.latest().bytes_in_data_record());
  EXPECT_EQ(head.latest().size(), 3u);
  EXPECT_EQ(Get("k"), "one");

  Put("k", "second");
  EXPECT_EQ(DataRecords("k"), (std::map<uint64_t, std::string>{{0, "second"}}));
  EXPECT_EQ(Get("k"), "second");
  Put("k", "");  // an empty object has no data record
  EXPECT_TRUE(DataRecords("k").empty());
  EXPECT_EQ(Get("k"), "");
  Put("k", "three");
  Delete("k", pb::VERSIONING_UNSET);
  EXPECT_TRUE(DataRecords("k").empty());
  EXPECT_EQ(Get("k"), std::nullopt);
  Put("k", "four");
  Delete("k", pb::VERSIONING_UNSET, "null");
  EXPECT_TRUE(DataRecords("k").empty());
  for (const auto& [key, value] : state_.rows()) {
    EXPECT_FALSE(ParseObjectRecordKey(key).has_value()) << "only usage and GC records remain";
  }
}

TEST_F(InlineDataTest, VersionsKeepTheirOwnBytes) {
  Put("k", "legacy");  // unversioned: data at seq 0, moved when versioning starts
  auto v1 = Put("k", "v1", pb::VERSIONING_ENABLED);
  auto v2 = Put("k", "v2", pb::VERSIONING_ENABLED);
  auto marker = Delete("k", pb::VERSIONING_ENABLED);
  auto v3 = Put("k", "v3", pb::VERSIONING_ENABLED);
  ExpectNoBytesInMetadata();
  EXPECT_EQ(DataRecords("k"), (std::map<uint64_t, std::string>{
                                  {1, "legacy"}, {2, "v1"}, {3, "v2"}, {5, "v3"}}));
  EXPECT_EQ(Get("k"), "v3");
  EXPECT_EQ(Get("k", "null"), "legacy");
  EXPECT_EQ(Get("k", v1.version_id()), "v1");
  EXPECT_EQ(Get("k", v2.version_id()), "v2");
  EXPECT_EQ(Get("k", v3.version_id()), "v3");
  EXPECT_EQ(Get("k", FormatVersionId(3, 999)), std::nullopt) << "right seq, wrong slot";

  // Deleting versions by id removes exactly their data records.
  Delete("k", pb::VERSIONING_ENABLED, v3.version_id());  // the latest: marker is latest again
  Delete("k", pb::VERSIONING_ENABLED, marker.version_id());
  EXPECT_EQ(Get("k"), "v2");
  Delete("k", pb::VERSIONING_ENABLED, v1.version_id());
  EXPECT_EQ(DataRecords("k"), (std::map<uint64_t, std::string>{{1, "legacy"}, {3, "v2"}}));
  Delete("k", pb::VERSIONING_ENABLED, "null");
  Delete("k", pb::VERSIONING_ENABLED, v2.version_id());
  EXPECT_TRUE(DataRecords("k").empty());
  EXPECT_EQ(Get("k"), std::nullopt);
  for (const auto& [key, value] : state_.rows()) {
    EXPECT_FALSE(ParseObjectRecordKey(key).has_value()) << "only usage and GC records remain";
  }
}

TEST_F(InlineDataTest, SuspendedWritesReplaceTheNullVersionsBytes) {
  auto v1 = Put("k", "v1", pb::VERSIONING_ENABLED);
  Put("k", "n1", pb::VERSIONING_SUSPENDED);
  Put("k", "n2", pb::VERSIONING_SUSPENDED);
  EXPECT_EQ(DataRecords("k"), (std::map<uint64_t, std::string>{{1, "v1"}, {3, "n2"}}));
  EXPECT_EQ(Get("k", "null"), "n2");
  Delete("k", pb::VERSIONING_SUSPENDED);  // a null delete marker replaces n2
  EXPECT_EQ(DataRecords("k"), (std::map<uint64_t, std::string>{{1, "v1"}}));
  EXPECT_EQ(Get("k", v1.version_id()), "v1");
  ExpectNoBytesInMetadata();
}

TEST_F(InlineDataTest, HeadReadsNoDataRecord) {
  Put("k", "bytes");
  pb::S3GetRequest request;
  request.set_bucket_id(kBucket);
  request.set_key("k");
  Points points(state_);
  auto r = ReadObject(points, request);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->found());
  EXPECT_TRUE(r->version().inline_data().empty());
  EXPECT_TRUE(r->version().bytes_in_data_record());
  EXPECT_EQ(points.keys(), std::set<std::string>{HeadKey(kBucket, "k")});

  request.set_version_id("not-an-id");
  EXPECT_EQ(ReadObject(points, request).status().code(), StatusCode::kInvalidArgument);
  request.set_version_id("");
  request.set_key("absent");
  auto absent = ReadObject(points, request);
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->found());
}

TEST_F(InlineDataTest, MissingDataRecordIsCorruption) {
  Put("k", "bytes");
  state_.Delete(DataKey(kBucket, "k", 0));
  pb::S3GetRequest request;
  request.set_bucket_id(kBucket);
  request.set_key("k");
  request.set_with_data(true);
  EXPECT_EQ(ReadObject(Points(state_), request).status().code(), StatusCode::kCorruption);
}

TEST_F(InlineDataTest, RecordsWithBytesInsideStillReadAndConvert) {
  // A head written before data records existed: bytes inside the version.
  pb::ObjectHead old;
  old.mutable_latest()->set_version_id("null");
  old.mutable_latest()->set_size(3);
  old.mutable_latest()->set_etag("old");
  old.mutable_latest()->set_inline_data("old");
  state_.Put(HeadKey(kBucket, "k"), old.SerializeAsString());
  EXPECT_EQ(Get("k"), "old");
  EXPECT_EQ(Get("k", "null"), "old");
  pb::S3GetRequest head_only;
  head_only.set_bucket_id(kBucket);
  head_only.set_key("k");
  auto r = ReadObject(Points(state_), head_only);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->version().inline_data().empty()) << "HEAD answers carry no bytes";

  // Its first versioned write moves the bytes to the null version's data
  // record.
  auto v1 = Put("k", "new", pb::VERSIONING_ENABLED);
  ExpectNoBytesInMetadata();
  EXPECT_EQ(DataRecords("k"), (std::map<uint64_t, std::string>{{1, "old"}, {2, "new"}}));
  EXPECT_EQ(Get("k", "null"), "old");
  EXPECT_EQ(Get("k"), "new");

  // An old-style head overwritten while unversioned leaves no record behind.
  state_.Put(HeadKey(kBucket, "u"), old.SerializeAsString());
  Put("u", "");
  EXPECT_TRUE(DataRecords("u").empty());
  EXPECT_EQ(Get("u"), "");
}

}  // namespace
}  // namespace tessera::s3::model
