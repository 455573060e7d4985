// Goal: SetBucketConfig keeps one record per bucket at B 00 'c', before
// every object record of the bucket, replaces only the parts it names,
// deletes an empty record, refuses an oversized one without writing, and
// is invisible to listings.
#include "s3/model/bucket_config_ops.h"

#include <gtest/gtest.h>

#include "common/limits.h"
#include "s3/model/listing.h"
#include "s3/model/model_test_util.h"
#include "s3/model/object_ops.h"
#include "s3/model/s3_keys.h"

namespace tessera::s3::model {
namespace {

constexpr uint64_t kBucket = 7;

pb::S3Op SetCors(std::vector<std::string> origins) {
  pb::S3Op op;
  auto* set = op.mutable_set_bucket_config();
  set->set_bucket_id(kBucket);
  set->set_set_cors(true);
  for (auto& origin : origins) {
    pb::CorsRule* rule = set->add_cors_rules();
    rule->add_allowed_origins(origin);
    rule->add_allowed_methods("GET");
  }
  return op;
}

class BucketConfigOpsTest : public ::testing::Test {
 protected:
  pb::S3OpResult Apply(const pb::S3Op& op) {
    auto r = ApplyS3Op(op, ++slot_, state_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : pb::S3OpResult();
  }
  std::optional<pb::BucketConfig> Config() {
    auto raw = state_.Get(BucketConfigKey(kBucket));
    EXPECT_TRUE(raw.ok());
    if (!raw.ok() || !raw->has_value()) return std::nullopt;
    pb::BucketConfig config;
    EXPECT_TRUE(config.ParseFromString(**raw));
    return config;
  }
  MemoryState state_;
  uint64_t slot_ = 0;
};

TEST(BucketConfigKeyTest, SortsBeforeEveryObjectOfItsBucketAndAfterThePrevious) {
  const std::string key = BucketConfigKey(kBucket);
  EXPECT_GT(key, BucketPrefix(kBucket));
  EXPECT_LT(key, HeadKey(kBucket, std::string(1, '\x01')));
  EXPECT_LT(key, ObjectPrefix(kBucket, "a"));
  EXPECT_GT(key, HeadKey(kBucket - 1, "\xff\xff"));
  EXPECT_LT(key, BucketPrefix(kBucket + 1));
  EXPECT_FALSE(ParseObjectRecordKey(key).has_value());
}

TEST_F(BucketConfigOpsTest, SetReplacesCorsAndEmptyDeletesTheRecord) {
  EXPECT_FALSE(Config().has_value());
  EXPECT_EQ(Apply(SetCors({"https://a.example", "*"})).outcome(), pb::S3_OK);
  ASSERT_TRUE(Config().has_value());
  ASSERT_EQ(Config()->cors_rules_size(), 2);
  EXPECT_EQ(Config()->cors_rules(0).allowed_origins(0), "https://a.example");
  EXPECT_EQ(Apply(SetCors({"https://b.example"})).outcome(), pb::S3_OK);
  ASSERT_EQ(Config()->cors_rules_size(), 1);
  EXPECT_EQ(Config()->cors_rules(0).allowed_origins(0), "https://b.example");
  EXPECT_EQ(Apply(SetCors({})).outcome(), pb::S3_OK);
  EXPECT_FALSE(Config().has_value());
  EXPECT_EQ(Apply(SetCors({})).outcome(), pb::S3_OK);  // twice: nothing changes
}

TEST_F(BucketConfigOpsTest, UnnamedPartsAreKept) {
  ASSERT_EQ(Apply(SetCors({"*"})).outcome(), pb::S3_OK);
  pb::S3Op nothing;
  nothing.mutable_set_bucket_config()->set_bucket_id(kBucket);
  EXPECT_EQ(Apply(nothing).outcome(), pb::S3_OK);
  ASSERT_TRUE(Config().has_value());
  EXPECT_EQ(Config()->cors_rules_size(), 1);
}

TEST_F(BucketConfigOpsTest, AclAndCorsChangeIndependently) {
  ASSERT_EQ(Apply(SetCors({"*"})).outcome(), pb::S3_OK);
  pb::S3Op set_acl;
  auto* op = set_acl.mutable_set_bucket_config();
  op->set_bucket_id(kBucket);
  op->set_set_acl(true);
  pb::StoredGrant* grant = op->mutable_acl()->add_grants();
  grant->set_group(true);
  grant->set_grantee("http://acs.amazonaws.com/groups/global/AllUsers");
  grant->set_permission("READ");
  ASSERT_EQ(Apply(set_acl).outcome(), pb::S3_OK);
  ASSERT_TRUE(Config().has_value());
  EXPECT_EQ(Config()->cors_rules_size(), 1);
  ASSERT_TRUE(Config()->has_acl());
  EXPECT_EQ(Config()->acl().grants(0).permission(), "READ");
  ASSERT_EQ(Apply(SetCors({})).outcome(), pb::S3_OK);  // the ACL stays
  ASSERT_TRUE(Config().has_value());
  EXPECT_TRUE(Config()->has_acl());
  // An ACL with no grants is stored (it grants nothing, the owner's
  // ACP rights aside); set_acl without one goes back to private: no record.
  op->mutable_acl()->clear_grants();
  ASSERT_EQ(Apply(set_acl).outcome(), pb::S3_OK);
  ASSERT_TRUE(Config().has_value());
  EXPECT_TRUE(Config()->has_acl());
  op->clear_acl();
  ASSERT_EQ(Apply(set_acl).outcome(), pb::S3_OK);
  EXPECT_FALSE(Config().has_value());
}

// Goal: ownership controls are set and removed without touching the ACL.
TEST_F(BucketConfigOpsTest, OwnershipControlsChangeIndependently) {
  ASSERT_EQ(Apply(SetCors({"*"})).outcome(), pb::S3_OK);
  pb::S3Op set;
  auto* op = set.mutable_set_bucket_config();
  op->set_bucket_id(kBucket);
  op->set_set_ownership_controls(true);
  op->mutable_ownership_controls()->set_object_ownership(pb::BUCKET_OWNER_ENFORCED);
  ASSERT_EQ(Apply(set).outcome(), pb::S3_OK);
  ASSERT_TRUE(Config().has_value());
  EXPECT_EQ(Config()->ownership_controls().object_ownership(), pb::BUCKET_OWNER_ENFORCED);
  EXPECT_EQ(Config()->cors_rules_size(), 1) << "the CORS rules stay";
  ASSERT_EQ(Apply(SetCors({})).outcome(), pb::S3_OK);
  ASSERT_TRUE(Config().has_value()) << "the controls alone keep the record";
  op->clear_ownership_controls();
  ASSERT_EQ(Apply(set).outcome(), pb::S3_OK);
  EXPECT_FALSE(Config().has_value()) << "no part left: no record";
}

TEST_F(BucketConfigOpsTest, DeleteRecordRemovesIt) {
  ASSERT_EQ(Apply(SetCors({"*"})).outcome(), pb::S3_OK);
  pb::S3Op del;
  del.mutable_set_bucket_config()->set_bucket_id(kBucket);
  del.mutable_set_bucket_config()->set_delete_record(true);
  EXPECT_EQ(Apply(del).outcome(), pb::S3_OK);
  EXPECT_FALSE(Config().has_value());
  EXPECT_EQ(Apply(del).outcome(), pb::S3_OK);
}

TEST_F(BucketConfigOpsTest, OversizedAndBucketZeroAreRefusedWithoutWriting) {
  ASSERT_EQ(Apply(SetCors({"https://kept.example"})).outcome(), pb::S3_OK);
  const std::string origin(limits::kS3BucketConfigBytesMax / 4, 'o');
  EXPECT_EQ(Apply(SetCors({origin, origin, origin, origin})).outcome(), pb::S3_INVALID_REQUEST);
  ASSERT_TRUE(Config().has_value());
  EXPECT_EQ(Config()->cors_rules(0).allowed_origins(0), "https://kept.example");
  pb::S3Op zero = SetCors({"*"});
  zero.mutable_set_bucket_config()->set_bucket_id(kInternalBucketId);
  EXPECT_EQ(Apply(zero).outcome(), pb::S3_INVALID_REQUEST);
}

TEST_F(BucketConfigOpsTest, ListingsDoNotSeeTheRecord) {
  ASSERT_EQ(Apply(SetCors({"*"})).outcome(), pb::S3_OK);
  pb::S3Op put;
  put.mutable_put_object()->set_bucket_id(kBucket);
  put.mutable_put_object()->set_key("a");
  put.mutable_put_object()->mutable_object()->set_etag("e");
  ASSERT_EQ(Apply(put).outcome(), pb::S3_OK);
  for (bool versions : {false, true}) {
    for (bool uploads : {false, true}) {
      pb::S3ListRequest list;
      list.set_bucket_id(kBucket);
      list.set_max_keys(10);
      list.set_versions(versions && !uploads);
      list.set_uploads(uploads);
      auto listed = ListPartition(state_, list);
      ASSERT_TRUE(listed.ok()) << listed.status().ToString();
      ASSERT_EQ(listed->items_size(), uploads ? 0 : 1);
      if (!uploads) {
        EXPECT_EQ(listed->items(0).entry().key(), "a");
      }
    }
  }
}

}  // namespace
}  // namespace tessera::s3::model

namespace tessera::s3::model {
namespace {

// Goal: the policy and the public access block are parts like the others:
// set, kept when another part changes, cleared on their own.
TEST_F(BucketConfigOpsTest, PolicyAndPublicAccessBlockAreParts) {
  pb::S3Op policy;
  auto* set = policy.mutable_set_bucket_config();
  set->set_bucket_id(kBucket);
  set->set_set_policy(true);
  set->set_policy(R"({"Statement":[]})");
  ASSERT_EQ(Apply(policy).outcome(), pb::S3_OK);
  pb::S3Op block;
  block.mutable_set_bucket_config()->set_bucket_id(kBucket);
  block.mutable_set_bucket_config()->set_set_public_access_block(true);
  block.mutable_set_bucket_config()->mutable_public_access_block()->set_block_public_policy(true);
  ASSERT_EQ(Apply(block).outcome(), pb::S3_OK);
  ASSERT_EQ(Apply(SetCors({"*"})).outcome(), pb::S3_OK);
  ASSERT_TRUE(Config().has_value());
  EXPECT_EQ(Config()->policy(), R"({"Statement":[]})");
  EXPECT_TRUE(Config()->public_access_block().block_public_policy());
  set->clear_policy();  // set_policy without a policy: deleted
  ASSERT_EQ(Apply(policy).outcome(), pb::S3_OK);
  EXPECT_FALSE(Config()->has_policy());
  EXPECT_TRUE(Config()->has_public_access_block());
  block.mutable_set_bucket_config()->clear_public_access_block();
  ASSERT_EQ(Apply(block).outcome(), pb::S3_OK);
  ASSERT_EQ(Apply(SetCors({})).outcome(), pb::S3_OK);
  EXPECT_FALSE(Config().has_value());
}

}  // namespace
}  // namespace tessera::s3::model
