#include "s3/model/object_ops.h"

#include <gtest/gtest.h>

#include "s3/model/model_test_util.h"
#include "s3/model/s3_keys.h"
#include "s3/model/version_id.h"

namespace tessera::s3::model {
namespace {

constexpr uint64_t kBucket = 5;

class ObjectOpsTest : public ::testing::Test {
 protected:
  pb::ObjectVersion Object(uint64_t size, std::string etag, std::vector<std::string> blobs = {}) {
    pb::ObjectVersion v;
    v.set_size(size);
    v.set_etag(std::move(etag));
    v.set_last_modified_ms(1000 + static_cast<int64_t>(slot_));
    for (auto& b : blobs) v.add_blobs()->set_blob_id(b);
    return v;
  }

  pb::S3OpResult Put(const std::string& key, pb::ObjectVersion object,
                     pb::BucketVersioning versioning = pb::VERSIONING_UNSET,
                     bool if_none_match = false, std::string if_match = {}) {
    pb::S3Op op;
    auto* put = op.mutable_put_object();
    put->set_bucket_id(kBucket);
    put->set_key(key);
    *put->mutable_object() = std::move(object);
    put->set_versioning(versioning);
    put->set_if_none_match_any(if_none_match);
    put->set_if_match_etag(std::move(if_match));
    return Apply(op);
  }

  pb::S3OpResult Delete(const std::string& key,
                        pb::BucketVersioning versioning = pb::VERSIONING_UNSET,
                        std::string version_id = {}) {
    pb::S3Op op;
    auto* del = op.mutable_delete_object();
    del->set_bucket_id(kBucket);
    del->set_key(key);
    del->set_versioning(versioning);
    del->set_version_id(std::move(version_id));
    del->set_now_ms(2000);
    return Apply(op);
  }

  pb::S3OpResult Apply(const pb::S3Op& op) {
    ++slot_;
    auto r = ApplyS3Op(op, slot_, state_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : pb::S3OpResult();
  }

  std::optional<pb::ObjectHead> Head(const std::string& key) {
    auto raw = state_.Get(HeadKey(kBucket, key));
    if (!raw.ok() || !raw->has_value()) return std::nullopt;
    pb::ObjectHead head;
    EXPECT_TRUE(head.ParseFromString(**raw));
    return head;
  }

  pb::BucketUsage Usage() {
    pb::BucketUsage usage;
    auto raw = state_.Get(UsageKey(kBucket));
    if (raw.ok() && raw->has_value()) {
      EXPECT_TRUE(usage.ParseFromString(**raw));
    }
    return usage;
  }

  // Blob ids in the GC record written at `slot` (empty when none).
  std::vector<std::string> GcAt(uint64_t slot) {
    std::vector<std::string> out;
    auto raw = state_.Get(GcKey(slot));
    if (raw.ok() && raw->has_value()) {
      pb::GcRecord gc;
      EXPECT_TRUE(gc.ParseFromString(**raw));
      out.assign(gc.blob_ids().begin(), gc.blob_ids().end());
    }
    return out;
  }

  MemoryState state_;
  uint64_t slot_ = 0;
};

TEST_F(ObjectOpsTest, PutCreatesHeadAndCountsUsage) {
  auto r = Put("a", Object(10, "e1"));
  EXPECT_EQ(r.outcome(), pb::S3_OK);
  EXPECT_EQ(r.version_id(), "null");
  auto head = Head("a");
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->latest().etag(), "e1");
  EXPECT_EQ(head->latest_seq(), 0u);
  EXPECT_EQ(Usage().objects(), 1);
  EXPECT_EQ(Usage().bytes(), 10);
}

TEST_F(ObjectOpsTest, OverwriteQueuesOldBlobsForGc) {
  Put("a", Object(100, "e1", {"b1", "b2"}));
  Put("a", Object(30, "e2", {"b3"}));
  EXPECT_EQ(GcAt(slot_), (std::vector<std::string>{"b1", "b2"}));
  EXPECT_EQ(Head("a")->latest().etag(), "e2");
  EXPECT_EQ(Usage().objects(), 1);
  EXPECT_EQ(Usage().bytes(), 30);
}

TEST_F(ObjectOpsTest, ConditionalPuts) {
  EXPECT_EQ(Put("a", Object(1, "e1"), pb::VERSIONING_UNSET, true).outcome(), pb::S3_OK);
  auto refused = Put("a", Object(2, "e2", {"new"}), pb::VERSIONING_UNSET, true);
  EXPECT_EQ(refused.outcome(), pb::S3_PRECONDITION_FAILED);
  EXPECT_EQ(GcAt(slot_), std::vector<std::string>{"new"}) << "refused put's blobs are garbage";
  EXPECT_EQ(Put("a", Object(3, "e3"), pb::VERSIONING_UNSET, false, "wrong").outcome(),
            pb::S3_PRECONDITION_FAILED);
  EXPECT_EQ(Put("a", Object(3, "e3"), pb::VERSIONING_UNSET, false, "e1").outcome(),
            pb::S3_OK);
  EXPECT_EQ(Put("zz", Object(3, "e3"), pb::VERSIONING_UNSET, false, "e1").outcome(),
            pb::S3_NO_SUCH_KEY);
  EXPECT_EQ(Head("a")->latest().etag(), "e3");
  EXPECT_EQ(Usage().objects(), 1);
  EXPECT_EQ(Usage().bytes(), 3);
}

TEST_F(ObjectOpsTest, DeleteRemovesHeadAndUsage) {
  Put("a", Object(100, "e1", {"b1"}));
  EXPECT_EQ(Delete("a").outcome(), pb::S3_OK);
  EXPECT_FALSE(Head("a").has_value());
  EXPECT_EQ(GcAt(slot_), std::vector<std::string>{"b1"});
  EXPECT_EQ(Usage().objects(), 0);
  EXPECT_EQ(Usage().bytes(), 0);
  EXPECT_EQ(Delete("never-existed").outcome(), pb::S3_OK);
}

TEST_F(ObjectOpsTest, ConditionalDeletesCheckTheLatestVersion) {
  Put("a", Object(10, "e1"));  // last modified 1001 ms: second 1
  auto conditional = [this](const std::string& key, std::string etag,
                            std::optional<int64_t> seconds, std::optional<uint64_t> size) {
    pb::S3Op op;
    auto* del = op.mutable_delete_object();
    del->set_bucket_id(kBucket);
    del->set_key(key);
    del->set_if_match_etag(std::move(etag));
    if (seconds) del->set_if_match_last_modified_s(*seconds);
    if (size) del->set_if_match_size(*size);
    return Apply(op).outcome();
  };
  EXPECT_EQ(conditional("a", "e2", std::nullopt, std::nullopt), pb::S3_PRECONDITION_FAILED);
  EXPECT_EQ(conditional("a", "", std::nullopt, 11), pb::S3_PRECONDITION_FAILED);
  EXPECT_EQ(conditional("a", "", 2, std::nullopt), pb::S3_PRECONDITION_FAILED);
  EXPECT_EQ(conditional("a", "e1", 2, 10), pb::S3_PRECONDITION_FAILED) << "every condition holds";
  ASSERT_TRUE(Head("a").has_value()) << "refused deletes change nothing";
  EXPECT_EQ(conditional("a", "e1", 1, 10), pb::S3_OK);
  EXPECT_FALSE(Head("a").has_value());
  EXPECT_EQ(conditional("a", "e1", std::nullopt, std::nullopt), pb::S3_NO_SUCH_KEY);
  EXPECT_EQ(conditional("a", "", std::nullopt, 10), pb::S3_OK) << "size alone: a missing key is 204";
  Put("b", Object(5, "e5"));
  EXPECT_EQ(conditional("b", "*", std::nullopt, std::nullopt), pb::S3_OK);
  EXPECT_FALSE(Head("b").has_value());
}

TEST_F(ObjectOpsTest, InvalidTargetsAreRefusedAndTheirBlobsCollected) {
  pb::S3Op op;
  op.mutable_put_object()->set_bucket_id(kBucket);
  op.mutable_put_object()->set_key(std::string("a\0b", 3));
  op.mutable_put_object()->mutable_object()->add_blobs()->set_blob_id("x");
  EXPECT_EQ(Apply(op).outcome(), pb::S3_INVALID_REQUEST);
  EXPECT_EQ(GcAt(slot_), std::vector<std::string>{"x"});
  EXPECT_EQ(Apply(pb::S3Op()).outcome(), pb::S3_INVALID_REQUEST);
}

TEST_F(ObjectOpsTest, VersionedPutsKeepEveryVersion) {
  Put("a", Object(5, "legacy"));  // written while unversioned
  auto v1 = Put("a", Object(10, "e1", {"b1"}), pb::VERSIONING_ENABLED);
  auto v2 = Put("a", Object(20, "e2", {"b2"}), pb::VERSIONING_ENABLED);
  EXPECT_NE(v1.version_id(), v2.version_id());
  EXPECT_EQ(v1.version_id().size(), 32u);
  EXPECT_TRUE(GcAt(slot_).empty()) << "versioned overwrites keep the old blobs";
  EXPECT_EQ(Head("a")->latest().etag(), "e2");
  EXPECT_EQ(Usage().objects(), 1);
  EXPECT_EQ(Usage().bytes(), 35);
  EXPECT_EQ(Usage().versions(), 3);

  // A delete marker hides the key but keeps the versions.
  auto marker = Delete("a", pb::VERSIONING_ENABLED);
  EXPECT_TRUE(marker.delete_marker());
  EXPECT_TRUE(Head("a")->latest().delete_marker());
  EXPECT_EQ(Usage().objects(), 0);
  EXPECT_EQ(Usage().versions(), 4);

  // Deleting the marker brings v2 back; deleting v2 brings v1 back.
  EXPECT_TRUE(Delete("a", pb::VERSIONING_ENABLED, marker.version_id()).delete_marker());
  EXPECT_EQ(Head("a")->latest().etag(), "e2");
  EXPECT_EQ(Usage().objects(), 1);
  Delete("a", pb::VERSIONING_ENABLED, v2.version_id());
  EXPECT_EQ(GcAt(slot_), std::vector<std::string>{"b2"});
  EXPECT_EQ(Head("a")->latest().etag(), "e1");
  // Then the middle (legacy null) version, then the last one: no head left.
  Delete("a", pb::VERSIONING_ENABLED, "null");
  EXPECT_EQ(Head("a")->latest().etag(), "e1");
  Delete("a", pb::VERSIONING_ENABLED, v1.version_id());
  EXPECT_FALSE(Head("a").has_value());
  EXPECT_EQ(Usage().objects(), 0);
  EXPECT_EQ(Usage().bytes(), 0);
  EXPECT_EQ(Usage().versions(), 0);
  for (const auto& [key, value] : state_.rows()) {
    EXPECT_FALSE(ParseObjectRecordKey(key).has_value()) << "only usage and GC records remain";
  }
}

TEST_F(ObjectOpsTest, SuspendedPutsReplaceTheNullVersion) {
  auto v1 = Put("a", Object(10, "e1", {"b1"}), pb::VERSIONING_ENABLED);
  Put("a", Object(20, "n1", {"b2"}), pb::VERSIONING_SUSPENDED);
  Put("a", Object(30, "n2", {"b3"}), pb::VERSIONING_SUSPENDED);
  EXPECT_EQ(GcAt(slot_), std::vector<std::string>{"b2"});
  EXPECT_EQ(Head("a")->latest().etag(), "n2");
  EXPECT_EQ(Head("a")->latest().version_id(), "null");
  EXPECT_EQ(Usage().bytes(), 40);
  EXPECT_EQ(Usage().versions(), 2);
  Delete("a", pb::VERSIONING_ENABLED, "null");
  EXPECT_EQ(Head("a")->latest().version_id(), v1.version_id());
}

TEST_F(ObjectOpsTest, DeleteOfUnknownVersionSucceedsAndChangesNothing) {
  Put("a", Object(10, "e1"), pb::VERSIONING_ENABLED);
  const auto before = state_.rows();
  EXPECT_EQ(Delete("a", pb::VERSIONING_ENABLED, FormatVersionId(77, 1)).outcome(), pb::S3_OK);
  EXPECT_EQ(state_.rows(), before);
}

}  // namespace
}  // namespace tessera::s3::model
