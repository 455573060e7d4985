// Goal: CheckS3State passes the state the S3 model leaves after a mix of
// operations (unversioned, enabled, suspended; puts, markers, deletes by
// version id) and names each planted violation: an operation applied
// twice, a usage delta dropped, a version unreachable from its head, a
// data record missing, a refused operation in effect, an acknowledged one
// missing.
#include "sim/s3_invariants.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "s3/model/model_test_util.h"
#include "s3/model/object_ops.h"
#include "s3/model/s3_keys.h"

namespace tessera::sim {
namespace {

constexpr uint64_t kBucket = 7;

class S3InvariantsTest : public ::testing::Test {
 protected:
  // Applies `op` at the next slot and records it as the clients would.
  S3SentOp& Apply(S3SentOp op) {
    pb::S3Op s3;
    if (op.kind == S3SentOp::Kind::kPut) {
      auto* put = s3.mutable_put_object();
      put->set_bucket_id(kBucket);
      put->set_key(op.key);
      put->set_versioning(op.versioning);
      put->mutable_object()->set_etag(op.tag);
      put->mutable_object()->set_size(op.body.size());
      put->mutable_object()->set_inline_data(op.body);
    } else {
      auto* del = s3.mutable_delete_object();
      del->set_bucket_id(kBucket);
      del->set_key(op.key);
      del->set_versioning(op.versioning);
      del->set_owner(op.tag);
      if (op.kind == S3SentOp::Kind::kDeleteVersion) del->set_version_id(op.version_id);
    }
    auto result = s3::model::ApplyS3Op(s3, ++slot_, state_);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    op.fate = S3SentOp::Fate::kAcked;
    op.s3_outcome = result->outcome();
    if (op.kind != S3SentOp::Kind::kDeleteVersion) op.version_id = result->version_id();
    sent_.push_back(op);
    return sent_.back();
  }
  S3SentOp Put(const std::string& key, const std::string& tag, pb::BucketVersioning v) {
    S3SentOp op;
    op.key = key;
    op.tag = tag;
    op.body = "body of " + tag;
    op.versioning = v;
    return op;
  }
  S3SentOp Delete(const std::string& key, const std::string& tag, pb::BucketVersioning v,
                  const std::string& version_id = "") {
    S3SentOp op;
    op.kind = version_id.empty() ? S3SentOp::Kind::kDeleteLatest : S3SentOp::Kind::kDeleteVersion;
    op.key = key;
    op.tag = tag;
    op.versioning = v;
    op.version_id = version_id;
    return op;
  }
  // A history touching every path: unversioned overwrite and delete, the
  // switch to versioning, markers, suspended null versions, deletes by id.
  void Mix() {
    Apply(Put("a", "op1", pb::VERSIONING_UNSET));
    Apply(Put("a", "op2", pb::VERSIONING_UNSET));
    Apply(Put("b", "op3", pb::VERSIONING_UNSET));
    Apply(Delete("b", "op4", pb::VERSIONING_UNSET));
    Apply(Put("c", "op5", pb::VERSIONING_UNSET));
    const std::string v6 = Apply(Put("a", "op6", pb::VERSIONING_ENABLED)).version_id;
    Apply(Put("a", "op7", pb::VERSIONING_ENABLED));
    Apply(Delete("c", "op8", pb::VERSIONING_ENABLED));
    Apply(Put("b", "op9", pb::VERSIONING_SUSPENDED));
    Apply(Put("b", "op10", pb::VERSIONING_SUSPENDED));
    Apply(Delete("a", "op11", pb::VERSIONING_ENABLED, v6));
    Apply(Put("d", "op12", pb::VERSIONING_ENABLED));
  }
  std::vector<s3::model::RecordRow> Rows() const {
    std::vector<s3::model::RecordRow> rows;
    for (const auto& [key, value] : state_.rows()) rows.push_back({key, value});
    return rows;
  }
  std::string Check() const { return CheckS3State(Rows(), kBucket, sent_); }

  s3::model::MemoryState state_;
  uint64_t slot_ = 100;
  std::vector<S3SentOp> sent_;
};

TEST_F(S3InvariantsTest, TheModelsStateAfterAMixPasses) {
  Mix();
  EXPECT_EQ(Check(), "");
  // An operation of unknown outcome may be absent; one the clients never
  // had answered may be in effect.
  S3SentOp lost = Put("e", "op13", pb::VERSIONING_ENABLED);
  lost.fate = S3SentOp::Fate::kUnknown;
  sent_.push_back(lost);
  EXPECT_EQ(Check(), "");
}

TEST_F(S3InvariantsTest, AnOperationAppliedTwiceIsCaught) {
  Mix();
  Apply(Put("d", "op12", pb::VERSIONING_ENABLED));  // the same put again
  EXPECT_EQ(Check().rfind("exactly-once: operation op12 in effect twice", 0), 0u) << Check();
}

TEST_F(S3InvariantsTest, ADroppedUsageDeltaIsCaught) {
  Mix();
  pb::BucketUsage usage;
  ASSERT_TRUE(usage.ParseFromString(state_.rows().at(s3::model::UsageKey(kBucket))));
  usage.set_bytes(usage.bytes() - 3);
  state_.Put(s3::model::UsageKey(kBucket), usage.SerializeAsString());
  EXPECT_EQ(Check().rfind("usage: ", 0), 0u) << Check();
}

TEST_F(S3InvariantsTest, GhostRecordsAreCaught) {
  Mix();
  // A version record no chain reaches: d's only version, its head gone.
  state_.Delete(s3::model::HeadKey(kBucket, "d"));
  EXPECT_EQ(Check().rfind("ghost: version records of 'd' without a head", 0), 0u) << Check();
}

TEST_F(S3InvariantsTest, AMissingDataRecordIsCaught) {
  Mix();
  pb::ObjectHead head;
  ASSERT_TRUE(head.ParseFromString(state_.rows().at(s3::model::HeadKey(kBucket, "d"))));
  state_.Delete(s3::model::DataKey(kBucket, "d", head.latest_seq()));
  EXPECT_EQ(Check().rfind("ghost: version ", 0), 0u) << Check();
}

TEST_F(S3InvariantsTest, ARefusedOperationInEffectIsCaught) {
  Mix();
  sent_.back().fate = S3SentOp::Fate::kRefused;  // op12, yet applied
  EXPECT_EQ(Check(), "exactly-once: operation op12 was refused but is in effect");
}

TEST_F(S3InvariantsTest, AnAcknowledgedOperationMissingIsCaught) {
  Mix();
  S3SentOp phantom = Put("e", "op13", pb::VERSIONING_ENABLED);
  phantom.fate = S3SentOp::Fate::kAcked;
  phantom.version_id = "whatever";
  sent_.push_back(phantom);
  EXPECT_EQ(Check().rfind("exactly-once: acknowledged operation op13", 0), 0u) << Check();
}

}  // namespace
}  // namespace tessera::sim
