// Goal: GC records name their owner and never a blob the key still
// references (retried ops), and GcDoneOp retires handled blobs idempotently.
#include "s3/model/gc_ops.h"

#include <gtest/gtest.h>

#include "s3/model/model_test_util.h"
#include "s3/model/object_ops.h"
#include "s3/model/s3_keys.h"

namespace tessera::s3::model {
namespace {

constexpr uint64_t kBucket = 11;

class GcOpsTest : public ::testing::Test {
 protected:
  pb::S3Op PutOp(const std::string& key, std::vector<std::string> blobs, bool if_none_match = false,
                 pb::BucketVersioning versioning = pb::VERSIONING_UNSET) {
    pb::S3Op op;
    auto* put = op.mutable_put_object();
    put->set_bucket_id(kBucket);
    put->set_key(key);
    put->set_versioning(versioning);
    put->mutable_object()->set_size(blobs.size());
    put->mutable_object()->set_etag("e" + std::to_string(blobs.size()));
    for (auto& b : blobs) put->mutable_object()->add_blobs()->set_blob_id(b);
    put->set_if_none_match_any(if_none_match);
    return op;
  }

  pb::S3OpResult Apply(const pb::S3Op& op) {
    ++slot_;
    auto r = ApplyS3Op(op, slot_, state_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : pb::S3OpResult();
  }

  std::optional<pb::GcRecord> GcAt(uint64_t slot) {
    auto raw = state_.Get(GcKey(slot));
    if (!raw.ok() || !raw->has_value()) return std::nullopt;
    pb::GcRecord record;
    EXPECT_TRUE(record.ParseFromString(**raw));
    return record;
  }

  pb::S3Op GcDone(uint64_t gc_slot, std::vector<std::string> ids) {
    pb::S3Op op;
    op.mutable_gc_done()->set_gc_slot(gc_slot);
    for (auto& id : ids) op.mutable_gc_done()->add_blob_ids(id);
    return op;
  }

  MemoryState state_;
  uint64_t slot_ = 0;
};

TEST_F(GcOpsTest, OverwriteQueuesOldBlobsWithTheirOwner) {
  Apply(PutOp("k", {"a", "b"}));
  Apply(PutOp("k", {"c"}));
  auto gc = GcAt(2);
  ASSERT_TRUE(gc);
  EXPECT_EQ(gc->bucket_id(), kBucket);
  EXPECT_EQ(gc->key(), "k");
  EXPECT_EQ(std::vector<std::string>(gc->blob_ids().begin(), gc->blob_ids().end()),
            (std::vector<std::string>{"a", "b"}));
}

TEST_F(GcOpsTest, ReappliedPutQueuesNothingItKeeps) {
  const pb::S3Op put = PutOp("k", {"a", "b"});
  Apply(put);
  Apply(put);  // the router's retry after a timeout; the first did apply
  EXPECT_FALSE(GcAt(2));
}

TEST_F(GcOpsTest, RefusedRetryOfAnAppliedConditionalPutKeepsItsBlobs) {
  const pb::S3Op put = PutOp("k", {"a"}, /*if_none_match=*/true);
  EXPECT_EQ(Apply(put).outcome(), pb::S3_OK);
  EXPECT_EQ(Apply(put).outcome(), pb::S3_PRECONDITION_FAILED);
  EXPECT_FALSE(GcAt(2));
  // A genuinely refused put (other blobs) still queues its own.
  EXPECT_EQ(Apply(PutOp("k", {"z"}, true)).outcome(), pb::S3_PRECONDITION_FAILED);
  auto gc = GcAt(3);
  ASSERT_TRUE(gc);
  EXPECT_EQ(gc->blob_ids_size(), 1);
  EXPECT_EQ(gc->blob_ids(0), "z");
}

TEST_F(GcOpsTest, SuspendedOverwriteQueuesOnlyTheReplacedNullVersion) {
  const pb::S3Op put = PutOp("k", {"a"}, false, pb::VERSIONING_ENABLED);
  Apply(put);
  Apply(PutOp("k", {"b"}, false, pb::VERSIONING_SUSPENDED));
  // Suspended: overwriting the null version again drops "b" only.
  Apply(PutOp("k", {"c"}, false, pb::VERSIONING_SUSPENDED));
  auto gc = GcAt(3);
  ASSERT_TRUE(gc);
  EXPECT_EQ(gc->blob_ids_size(), 1);
  EXPECT_EQ(gc->blob_ids(0), "b");
}

TEST_F(GcOpsTest, GcDoneRetiresBlobsThenTheRecordIdempotently) {
  Apply(PutOp("k", {"a", "b"}));
  Apply(PutOp("k", {"c"}));
  EXPECT_EQ(Apply(GcDone(2, {"a"})).outcome(), pb::S3_OK);
  auto gc = GcAt(2);
  ASSERT_TRUE(gc);
  EXPECT_EQ(gc->blob_ids_size(), 1);
  EXPECT_EQ(gc->key(), "k");
  EXPECT_EQ(Apply(GcDone(2, {"a", "b"})).outcome(), pb::S3_OK);
  EXPECT_FALSE(GcAt(2));
  EXPECT_EQ(Apply(GcDone(2, {"b"})).outcome(), pb::S3_OK);  // absent: fine
  EXPECT_EQ(Apply(GcDone(77, {})).outcome(), pb::S3_OK);
}

TEST_F(GcOpsTest, ReadGcRecordsPagesOldestFirst) {
  Apply(PutOp("k", {"a"}));
  Apply(PutOp("k", {"b"}));
  Apply(PutOp("k", {"c"}));
  Apply(PutOp("j", {"d"}));
  auto page = ReadGcRecords(state_, 10);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].gc_slot, 2u);
  EXPECT_EQ((*page)[0].record.blob_ids(0), "a");
  EXPECT_EQ((*page)[1].gc_slot, 3u);
  auto one = ReadGcRecords(state_, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 1u);
}

}  // namespace
}  // namespace tessera::s3::model
