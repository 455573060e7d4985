// Goal: SetTags replaces the tag set of exactly the version it addresses
// (the latest, a version by id, the null version), in the head copy and
// the version record alike, refuses delete markers and missing versions
// with the outcomes S3's errors need, and changes nothing else.
#include "s3/model/tagging_ops.h"

#include <gtest/gtest.h>

#include "s3/model/model_test_util.h"
#include "s3/model/object_ops.h"
#include "s3/model/s3_keys.h"
#include "s3/model/version_id.h"

namespace tessera::s3::model {
namespace {

constexpr uint64_t kBucket = 9;

class TaggingOpsTest : public ::testing::Test {
 protected:
  pb::S3OpResult Put(const std::string& key, std::string etag, pb::BucketVersioning versioning) {
    pb::S3Op op;
    auto* put = op.mutable_put_object();
    put->set_bucket_id(kBucket);
    put->set_key(key);
    put->mutable_object()->set_etag(std::move(etag));
    put->mutable_object()->set_size(3);
    put->set_versioning(versioning);
    return Apply(op);
  }
  pb::S3OpResult DeleteLatest(const std::string& key) {
    pb::S3Op op;
    auto* del = op.mutable_delete_object();
    del->set_bucket_id(kBucket);
    del->set_key(key);
    del->set_versioning(pb::VERSIONING_ENABLED);
    del->set_now_ms(5000);
    return Apply(op);
  }
  pb::S3OpResult Tag(const std::string& key, std::string version_id,
                     std::vector<std::pair<std::string, std::string>> tags) {
    pb::S3Op op;
    auto* set = op.mutable_set_tags();
    set->set_bucket_id(kBucket);
    set->set_key(key);
    set->set_version_id(std::move(version_id));
    for (auto& [n, v] : tags) {
      pb::MetadataPair* t = set->add_tags();
      t->set_name(n);
      t->set_value(v);
    }
    return Apply(op);
  }
  pb::S3OpResult Apply(const pb::S3Op& op) {
    auto r = ApplyS3Op(op, ++slot_, state_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : pb::S3OpResult();
  }
  pb::ObjectHead Head(const std::string& key) {
    pb::ObjectHead head;
    auto raw = state_.Get(HeadKey(kBucket, key));
    EXPECT_TRUE(raw.ok() && raw->has_value());
    if (raw.ok() && raw->has_value()) {
      EXPECT_TRUE(head.ParseFromString(**raw));
    }
    return head;
  }
  // The tags of version `id`'s record, as "k=v,k=v".
  std::string RecordTags(const std::string& key, const std::string& id) {
    const uint64_t seq = ParseVersionSeq(id).value_or(0);
    auto raw = state_.Get(VersionKey(kBucket, key, seq));
    EXPECT_TRUE(raw.ok() && raw->has_value()) << id;
    pb::VersionRecord record;
    if (raw.ok() && raw->has_value()) {
      EXPECT_TRUE(record.ParseFromString(**raw));
    }
    return Joined(record.version());
  }
  static std::string Joined(const pb::ObjectVersion& v) {
    std::string out;
    for (const pb::MetadataPair& t : v.tags()) {
      out += (out.empty() ? "" : ",") + t.name() + "=" + t.value();
    }
    return out;
  }

  MemoryState state_;
  uint64_t slot_ = 0;
};

TEST_F(TaggingOpsTest, LatestOfAnUnversionedKey) {
  Put("k", "e1", pb::VERSIONING_UNSET);
  const std::string usage_before = state_.Get(UsageKey(kBucket))->value_or("");
  EXPECT_EQ(Tag("k", "", {{"a", "1"}, {"b", ""}}).outcome(), pb::S3_OK);
  EXPECT_EQ(Joined(Head("k").latest()), "a=1,b=");
  EXPECT_EQ(Head("k").latest().etag(), "e1") << "nothing else of the version changes";
  EXPECT_EQ(state_.Get(UsageKey(kBucket))->value_or(""), usage_before) << "usage unchanged";
  EXPECT_EQ(Tag("k", "null", {{"c", "3"}}).outcome(), pb::S3_OK) << "the null version by name";
  EXPECT_EQ(Joined(Head("k").latest()), "c=3");
  EXPECT_EQ(Tag("k", "", {}).outcome(), pb::S3_OK);
  EXPECT_EQ(Joined(Head("k").latest()), "") << "an empty set deletes the tags";
  EXPECT_EQ(Tag("missing", "", {{"a", "1"}}).outcome(), pb::S3_NO_SUCH_KEY);
  EXPECT_EQ(Tag("missing", "null", {{"a", "1"}}).outcome(), pb::S3_NO_SUCH_VERSION);
}

TEST_F(TaggingOpsTest, VersionsByIdAndTheLatestStayInStep) {
  const std::string v1 = Put("k", "e1", pb::VERSIONING_ENABLED).version_id();
  const std::string v2 = Put("k", "e2", pb::VERSIONING_ENABLED).version_id();
  ASSERT_NE(v1, v2);
  const pb::S3OpResult old = Tag("k", v1, {{"old", "yes"}});
  EXPECT_EQ(old.outcome(), pb::S3_OK);
  EXPECT_EQ(old.version_id(), v1);
  EXPECT_EQ(RecordTags("k", v1), "old=yes");
  EXPECT_EQ(Joined(Head("k").latest()), "") << "the latest is another version";
  const pb::S3OpResult latest = Tag("k", "", {{"new", "yes"}});
  EXPECT_EQ(latest.version_id(), v2);
  EXPECT_EQ(Joined(Head("k").latest()), "new=yes");
  EXPECT_EQ(RecordTags("k", v2), "new=yes") << "head copy and record together";
  EXPECT_EQ(Tag("k", v2, {{"by", "id"}}).outcome(), pb::S3_OK);
  EXPECT_EQ(Joined(Head("k").latest()), "by=id") << "the latest named by id";
  EXPECT_EQ(RecordTags("k", v2), "by=id");
  EXPECT_EQ(RecordTags("k", v1), "old=yes");
  EXPECT_EQ(Tag("k", FormatVersionId(999, 1), {{"a", "1"}}).outcome(), pb::S3_NO_SUCH_VERSION);
}

TEST_F(TaggingOpsTest, DeleteMarkersHaveNoTags) {
  Put("k", "e1", pb::VERSIONING_ENABLED);
  const std::string marker = DeleteLatest("k").version_id();
  EXPECT_EQ(Tag("k", "", {{"a", "1"}}).outcome(), pb::S3_DELETE_MARKER);
  EXPECT_EQ(Tag("k", marker, {{"a", "1"}}).outcome(), pb::S3_DELETE_MARKER);
  EXPECT_EQ(Joined(Head("k").latest()), "");
}

// Goal: SetObjectAcl replaces the ACL of exactly the version it addresses
// (head copy and version record together) and keeps its tags; delete
// markers and missing keys are refused as for tags.
TEST_F(TaggingOpsTest, SetObjectAclAddressesOneVersion) {
  const std::string v1 = Put("k", "e1", pb::VERSIONING_ENABLED).version_id();
  const std::string v2 = Put("k", "e2", pb::VERSIONING_ENABLED).version_id();
  Tag("k", "", {{"t", "1"}});
  auto set_acl = [this](const std::string& key, const std::string& version, const char* grantee) {
    pb::S3Op op;
    auto* set = op.mutable_set_object_acl();
    set->set_bucket_id(kBucket);
    set->set_key(key);
    set->set_version_id(version);
    pb::StoredGrant* g = set->mutable_acl()->add_grants();
    g->set_grantee(grantee);
    g->set_permission("READ");
    return Apply(op);
  };
  EXPECT_FALSE(Head("k").latest().has_acl()) << "absent until set: the private ACL";
  const pb::S3OpResult latest = set_acl("k", "", "aa");
  EXPECT_EQ(latest.outcome(), pb::S3_OK);
  EXPECT_EQ(latest.version_id(), v2);
  ASSERT_TRUE(Head("k").latest().has_acl());
  EXPECT_EQ(Head("k").latest().acl().grants(0).grantee(), "aa");
  EXPECT_EQ(Joined(Head("k").latest()), "t=1") << "the tags stay";
  EXPECT_EQ(set_acl("k", v1, "bb").outcome(), pb::S3_OK);
  EXPECT_EQ(Head("k").latest().acl().grants(0).grantee(), "aa") << "v1 is not the latest";
  auto raw = state_.Get(VersionKey(kBucket, "k", ParseVersionSeq(v1).value_or(0)));
  ASSERT_TRUE(raw.ok() && raw->has_value());
  pb::VersionRecord record;
  ASSERT_TRUE(record.ParseFromString(**raw));
  EXPECT_EQ(record.version().acl().grants(0).grantee(), "bb");
  EXPECT_EQ(set_acl("missing", "", "aa").outcome(), pb::S3_NO_SUCH_KEY);
  DeleteLatest("k");
  EXPECT_EQ(set_acl("k", "", "aa").outcome(), pb::S3_DELETE_MARKER);
}

}  // namespace
}  // namespace tessera::s3::model
