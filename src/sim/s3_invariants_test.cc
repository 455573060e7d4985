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
    if (op.kind == S3SentOp::Kind::kCreateUpload) {
      s3.mutable_create_upload()->set_bucket_id(kBucket);
      s3.mutable_create_upload()->set_key(op.key);
      s3.mutable_create_upload()->mutable_upload()->set_upload_id(op.tag);
    } else if (op.kind == S3SentOp::Kind::kUploadPart) {
      auto* part = s3.mutable_upload_part();
      part->set_bucket_id(kBucket);
      part->set_key(op.key);
      part->set_upload_id(op.upload_id);
      part->mutable_part()->set_part_number(op.part_number);
      part->mutable_part()->set_size(op.part_size);
      part->mutable_part()->set_etag(op.tag);
      part->mutable_part()->add_blobs()->set_blob_id("blob-" + op.tag);
    } else if (op.kind == S3SentOp::Kind::kCompleteUpload) {
      auto* complete = s3.mutable_complete_upload();
      complete->set_bucket_id(kBucket);
      complete->set_key(op.key);
      complete->set_upload_id(op.upload_id);
      complete->set_etag(op.tag);
      complete->set_versioning(op.versioning);
      for (const auto& [number, etag] : op.parts) {
        complete->add_parts()->set_part_number(number);
        complete->mutable_parts()->rbegin()->set_etag(etag);
      }
    } else if (op.kind == S3SentOp::Kind::kSetTags) {
      auto* tags = s3.mutable_set_tags();
      tags->set_bucket_id(kBucket);
      tags->set_key(op.key);
      tags->set_version_id(op.version_id);
      tags->add_tags()->set_name("op");
      tags->mutable_tags(0)->set_value(op.tag);
    } else if (op.kind == S3SentOp::Kind::kPut) {
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
    if (op.kind != S3SentOp::Kind::kDeleteVersion && op.kind != S3SentOp::Kind::kSetTags) {
      op.version_id = result->version_id();
    }
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
    // Multipart: one upload completed over d, one left open on e.
    Apply(Upload(S3SentOp::Kind::kCreateUpload, "d", "op13", ""));
    Apply(Part("d", "op14", "op13", 1, 1000));
    Apply(Part("d", "op15", "op13", 2, 10));
    S3SentOp complete = Upload(S3SentOp::Kind::kCompleteUpload, "d", "op16", "op13");
    complete.versioning = pb::VERSIONING_ENABLED;
    complete.parts = {{1, "op14"}, {2, "op15"}};
    EXPECT_EQ(Apply(complete).s3_outcome, pb::S3_OK);
    Apply(Upload(S3SentOp::Kind::kCreateUpload, "e", "op17", ""));
    Apply(Part("e", "op18", "op17", 1, 300));
    // Tags on the latest version of a and on d's older version by id.
    EXPECT_EQ(Apply(Upload(S3SentOp::Kind::kSetTags, "a", "op19", "")).s3_outcome, pb::S3_OK);
    S3SentOp tag_d = Upload(S3SentOp::Kind::kSetTags, "d", "op20", "");
    tag_d.version_id = VersionOf("op12");
    EXPECT_EQ(Apply(tag_d).s3_outcome, pb::S3_OK);
  }
  std::string VersionOf(const std::string& tag) const {
    for (const S3SentOp& op : sent_) {
      if (op.tag == tag) return op.version_id;
    }
    return "";
  }
  S3SentOp Upload(S3SentOp::Kind kind, const std::string& key, const std::string& tag,
                  const std::string& upload_id) {
    S3SentOp op;
    op.kind = kind;
    op.key = key;
    op.tag = tag;
    op.upload_id = upload_id;
    return op;
  }
  S3SentOp Part(const std::string& key, const std::string& tag, const std::string& upload_id,
                uint32_t number, uint64_t size) {
    S3SentOp op = Upload(S3SentOp::Kind::kUploadPart, key, tag, upload_id);
    op.part_number = number;
    op.part_size = size;
    return op;
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
  S3SentOp lost = Put("e", "op99", pb::VERSIONING_ENABLED);
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
  std::string data_key;  // op12's bytes, under d
  for (const auto& [key, value] : state_.rows()) {
    auto parsed = s3::model::ParseObjectRecordKey(key);
    if (parsed && parsed->object_key == "d" && parsed->type == s3::model::RecordType::kData) {
      data_key = key;
    }
  }
  ASSERT_FALSE(data_key.empty());
  state_.Delete(data_key);
  EXPECT_EQ(Check().rfind("ghost: version ", 0), 0u) << Check();
}

TEST_F(S3InvariantsTest, ARefusedOperationInEffectIsCaught) {
  Mix();
  for (S3SentOp& op : sent_) {
    if (op.tag == "op12") op.fate = S3SentOp::Fate::kRefused;  // yet applied
  }
  EXPECT_EQ(Check(), "exactly-once: operation op12 was refused but is in effect");
}

TEST_F(S3InvariantsTest, AnAcknowledgedOperationMissingIsCaught) {
  Mix();
  S3SentOp phantom = Put("e", "op99", pb::VERSIONING_ENABLED);
  phantom.fate = S3SentOp::Fate::kAcked;
  phantom.version_id = "whatever";
  sent_.push_back(phantom);
  EXPECT_EQ(Check().rfind("exactly-once: acknowledged operation op99", 0), 0u) << Check();
}

TEST_F(S3InvariantsTest, TagsOnHalfTheVersionAreCaught) {
  Mix();
  // Tags set in the head's copy of a's latest version, not in its record.
  pb::ObjectHead head;
  ASSERT_TRUE(head.ParseFromString(state_.rows().at(s3::model::HeadKey(kBucket, "a"))));
  head.mutable_latest()->mutable_tags(0)->set_value("op7");
  state_.Put(s3::model::HeadKey(kBucket, "a"), head.SerializeAsString());
  EXPECT_EQ(Check(), "ghost: the head of 'a' is not its newest version");
}

TEST_F(S3InvariantsTest, PartsWithoutTheirUploadAreCaught) {
  Mix();
  state_.Delete(s3::model::UploadKey(kBucket, "e", "op17"));
  EXPECT_EQ(Check(), "ghost: parts of upload op17 of 'e' without the upload");
}

TEST_F(S3InvariantsTest, AnAcknowledgedUploadGoneIsCaught) {
  Mix();
  const std::string part = s3::model::PartKey(kBucket, "e", "op17", 1);
  pb::BucketUsage usage;
  ASSERT_TRUE(usage.ParseFromString(state_.rows().at(s3::model::UsageKey(kBucket))));
  usage.set_uploads(usage.uploads() - 1);
  usage.set_part_bytes(usage.part_bytes() - 300);
  state_.Put(s3::model::UsageKey(kBucket), usage.SerializeAsString());
  state_.Delete(part);
  state_.Delete(s3::model::UploadKey(kBucket, "e", "op17"));
  EXPECT_EQ(Check(), "exactly-once: acknowledged upload op17 of 'e' is gone");
}

}  // namespace
}  // namespace tessera::sim
