#include "s3/model/multipart_ops.h"

#include <gtest/gtest.h>

#include "s3/model/model_test_util.h"
#include "s3/model/object_ops.h"
#include "s3/model/s3_keys.h"

namespace tessera::s3::model {
namespace {

constexpr uint64_t kBucket = 9;
constexpr uint64_t kMin = 100;  // min_part_bytes in these tests

class MultipartOpsTest : public ::testing::Test {
 protected:
  pb::S3OpResult Apply(const pb::S3Op& op) {
    auto r = ApplyS3Op(op, ++slot_, state_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : pb::S3OpResult();
  }
  pb::S3OpResult Create(const std::string& upload_id) {
    pb::S3Op op;
    auto* c = op.mutable_create_upload();
    c->set_bucket_id(kBucket);
    c->set_key("big");
    c->mutable_upload()->set_upload_id(upload_id);
    c->mutable_upload()->mutable_template_()->set_content_type("text/plain");
    return Apply(op);
  }
  pb::S3OpResult Part(const std::string& upload_id, uint32_t number, uint64_t size,
                      const std::string& etag, const std::string& blob) {
    pb::S3Op op;
    auto* p = op.mutable_upload_part();
    p->set_bucket_id(kBucket);
    p->set_key("big");
    p->set_upload_id(upload_id);
    p->mutable_part()->set_part_number(number);
    p->mutable_part()->set_size(size);
    p->mutable_part()->set_etag(etag);
    auto* b = p->mutable_part()->add_blobs();
    b->set_blob_id(blob);
    b->set_size(size);
    return Apply(op);
  }
  pb::S3OpResult Complete(const std::string& upload_id,
                          std::vector<std::pair<uint32_t, std::string>> parts) {
    pb::S3Op op;
    auto* c = op.mutable_complete_upload();
    c->set_bucket_id(kBucket);
    c->set_key("big");
    c->set_upload_id(upload_id);
    for (auto& [n, e] : parts) {
      auto* p = c->add_parts();
      p->set_part_number(n);
      p->set_etag(e);
    }
    c->set_etag("md5ofmd5s-" + std::to_string(parts.size()));
    c->set_min_part_bytes(kMin);
    c->set_now_ms(5000);
    return Apply(op);
  }
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
  pb::BucketUsage Usage() {
    pb::BucketUsage usage;
    auto raw = state_.Get(UsageKey(kBucket));
    if (raw.ok() && raw->has_value()) {
      EXPECT_TRUE(usage.ParseFromString(**raw));
    }
    return usage;
  }

  MemoryState state_;
  uint64_t slot_ = 0;
};

TEST_F(MultipartOpsTest, CompleteConcatenatesPartsWithAnOffsetIndex) {
  EXPECT_EQ(Create("u1").outcome(), pb::S3_OK);
  EXPECT_EQ(Usage().uploads(), 1);
  Part("u1", 2, 150, "e2", "b2");
  Part("u1", 1, 120, "e1", "b1");
  Part("u1", 3, 10, "e3", "b3");
  Part("u1", 2, 200, "e2b", "b2b");  // replaces part 2
  EXPECT_EQ(GcAt(slot_), std::vector<std::string>{"b2"});
  Part("u1", 4, 500, "e4", "b4");  // uploaded but not listed
  EXPECT_EQ(Usage().part_bytes(), 120 + 200 + 10 + 500);

  auto done = Complete("u1", {{1, "e1"}, {2, "e2b"}, {3, "e3"}});
  ASSERT_EQ(done.outcome(), pb::S3_OK) << done.message();
  EXPECT_EQ(GcAt(slot_), std::vector<std::string>{"b4"});
  const pb::ObjectVersion& object = done.object();
  EXPECT_EQ(object.size(), 330u);
  EXPECT_EQ(object.parts_count(), 3u);
  EXPECT_EQ(std::vector<uint64_t>(object.part_offsets().begin(), object.part_offsets().end()),
            (std::vector<uint64_t>{0, 120, 320}));
  ASSERT_EQ(object.blobs_size(), 3);
  EXPECT_EQ(object.blobs(1).blob_id(), "b2b");
  EXPECT_EQ(object.content_type(), "text/plain");
  EXPECT_EQ(Usage().uploads(), 0);
  EXPECT_EQ(Usage().part_bytes(), 0);
  EXPECT_EQ(Usage().objects(), 1);
  EXPECT_EQ(Usage().bytes(), 330);
  for (const auto& [key, value] : state_.rows()) {
    auto parsed = ParseObjectRecordKey(key);
    if (parsed) {
      EXPECT_EQ(parsed->type, RecordType::kHead) << "only the head remains";
    }
  }
  EXPECT_EQ(Complete("u1", {{1, "e1"}}).outcome(), pb::S3_NO_SUCH_UPLOAD);
}

// Goal: a CompleteMultipartUpload sent again after it succeeded (an SDK
// retrying a lost answer, or the router re-sending an op that committed)
// gets the first answer and changes nothing while its object is the key's
// latest version; a different part list, or an object replaced since,
// gets NoSuchUpload.
TEST_F(MultipartOpsTest, CompleteSentAgainAnswersAsTheFirstWhileItsObjectIsLatest) {
  Create("u1");
  Part("u1", 1, 120, "e1", "b1");
  Part("u1", 2, 30, "e2", "b2");
  const auto first = Complete("u1", {{1, "e1"}, {2, "e2"}});
  ASSERT_EQ(first.outcome(), pb::S3_OK) << first.message();
  EXPECT_EQ(first.object().completed_upload_id(), "u1");
  const auto rows_after_first = state_.rows();

  const auto again = Complete("u1", {{1, "e1"}, {2, "e2"}});
  ASSERT_EQ(again.outcome(), pb::S3_OK) << again.message();
  EXPECT_EQ(again.version_id(), first.version_id());
  EXPECT_EQ(again.object().SerializeAsString(), first.object().SerializeAsString());
  EXPECT_EQ(state_.rows(), rows_after_first) << "a repeated complete writes nothing";
  EXPECT_EQ(Complete("u1", {{1, "e1"}}).outcome(), pb::S3_NO_SUCH_UPLOAD) << "another part list";
  EXPECT_EQ(Complete("u2", {{1, "e1"}, {2, "e2"}}).outcome(), pb::S3_NO_SUCH_UPLOAD);

  pb::S3Op put;
  put.mutable_put_object()->set_bucket_id(kBucket);
  put.mutable_put_object()->set_key("big");
  put.mutable_put_object()->mutable_object()->set_version_id("null");
  put.mutable_put_object()->mutable_object()->set_etag("small");
  ASSERT_EQ(Apply(put).outcome(), pb::S3_OK);
  EXPECT_EQ(Complete("u1", {{1, "e1"}, {2, "e2"}}).outcome(), pb::S3_NO_SUCH_UPLOAD)
      << "the completed object is no longer the latest";
}

TEST_F(MultipartOpsTest, CompleteChecksOrderEtagsAndSizes) {
  Create("u");
  Part("u", 1, 120, "e1", "b1");
  Part("u", 2, 50, "e2", "b2");
  Part("u", 3, 120, "e3", "b3");
  EXPECT_EQ(Complete("u", {{2, "e2"}, {1, "e1"}}).outcome(), pb::S3_INVALID_PART_ORDER);
  EXPECT_EQ(Complete("u", {{1, "e1"}, {1, "e1"}}).outcome(), pb::S3_INVALID_PART_ORDER);
  EXPECT_EQ(Complete("u", {{1, "wrong"}}).outcome(), pb::S3_INVALID_PART);
  const pb::S3OpResult missing = Complete("u", {{1, "e1"}, {7, "e7"}});
  EXPECT_EQ(missing.outcome(), pb::S3_INVALID_PART);
  EXPECT_EQ(missing.part_number(), 7u) << "the error names the part at fault";
  EXPECT_EQ(missing.part_etag(), "e7") << "and the ETag the completion listed";
  const pb::S3OpResult small = Complete("u", {{1, "e1"}, {2, "e2"}, {3, "e3"}});
  EXPECT_EQ(small.outcome(), pb::S3_ENTITY_TOO_SMALL);
  EXPECT_EQ(small.part_number(), 2u);
  EXPECT_EQ(small.part_size(), 50u) << "and its size";
  EXPECT_EQ(small.part_etag(), "e2");
  EXPECT_EQ(Complete("u", {{1, "e1"}, {2, "e2"}}).outcome(), pb::S3_OK) << "a small last part is fine";
}

TEST_F(MultipartOpsTest, PartsOfUnknownUploadsAreRefusedAndCollected) {
  EXPECT_EQ(Part("nope", 1, 10, "e", "orphan").outcome(), pb::S3_NO_SUCH_UPLOAD);
  EXPECT_EQ(GcAt(slot_), std::vector<std::string>{"orphan"});
  Create("u");
  EXPECT_EQ(Part("u", 0, 10, "e", "b0").outcome(), pb::S3_INVALID_REQUEST);
  EXPECT_EQ(Part("u", 10'001, 10, "e", "bx").outcome(), pb::S3_INVALID_REQUEST);
}

TEST_F(MultipartOpsTest, AbortDropsEverything) {
  Create("u");
  Part("u", 1, 120, "e1", "b1");
  Part("u", 2, 120, "e2", "b2");
  pb::S3Op op;
  op.mutable_abort_upload()->set_bucket_id(kBucket);
  op.mutable_abort_upload()->set_key("big");
  op.mutable_abort_upload()->set_upload_id("u");
  const pb::S3OpResult aborted = Apply(op);
  EXPECT_EQ(aborted.outcome(), pb::S3_OK);
  EXPECT_EQ(aborted.parts_removed(), 2u);  // what the router charges (docs/admission.md)
  EXPECT_EQ(GcAt(slot_), (std::vector<std::string>{"b1", "b2"}));
  EXPECT_EQ(Usage().uploads(), 0);
  EXPECT_EQ(Usage().part_bytes(), 0);
  for (const auto& [key, value] : state_.rows()) EXPECT_FALSE(ParseObjectRecordKey(key).has_value());
  EXPECT_EQ(Apply(op).outcome(), pb::S3_NO_SUCH_UPLOAD);
}

TEST_F(MultipartOpsTest, CompletingTenThousandPartsIsOneOp) {
  Create("u");
  std::vector<std::pair<uint32_t, std::string>> listed;
  for (uint32_t n = 1; n <= 10'000; ++n) {
    Part("u", n, kMin, "e" + std::to_string(n), "b" + std::to_string(n));
    listed.emplace_back(n, "e" + std::to_string(n));
  }
  auto done = Complete("u", listed);
  ASSERT_EQ(done.outcome(), pb::S3_OK);
  EXPECT_EQ(done.object().part_offsets_size(), 10'000);
  EXPECT_EQ(done.object().size(), 10'000 * kMin);
}

// Uploads created with a checksum algorithm (composite checksums).
class ChecksumUploadTest : public MultipartOpsTest {
 protected:
  // Creates upload "u" of "big" with a checksum algorithm.
  pb::S3OpResult CreateWithChecksum(const std::string& algorithm, bool full_object) {
    pb::S3Op op;
    auto* c = op.mutable_create_upload();
    c->set_bucket_id(kBucket);
    c->set_key("big");
    c->mutable_upload()->set_upload_id("u");
    c->mutable_upload()->set_checksum_algorithm(algorithm);
    c->mutable_upload()->set_checksum_full_object(full_object);
    return Apply(op);
  }
  void CreateWithCrc32() { ASSERT_EQ(CreateWithChecksum("CRC32", false).outcome(), pb::S3_OK); }
  pb::S3OpResult PartWith(uint32_t number, const std::string& crc32, const std::string& blob) {
    pb::S3Op op;
    auto* p = op.mutable_upload_part();
    p->set_bucket_id(kBucket);
    p->set_key("big");
    p->set_upload_id("u");
    p->mutable_part()->set_part_number(number);
    p->mutable_part()->set_size(kMin);
    p->mutable_part()->set_etag("e" + std::to_string(number));
    p->mutable_part()->add_blobs()->set_blob_id(blob);
    if (!crc32.empty()) {
      auto* c = p->mutable_part()->add_checksums();
      c->set_algorithm("CRC32");
      c->set_value(crc32);
    }
    return Apply(op);
  }
  pb::S3Op CompleteOp(const std::vector<std::string>& listed_crc32s) {
    pb::S3Op op;
    auto* c = op.mutable_complete_upload();
    c->set_bucket_id(kBucket);
    c->set_key("big");
    c->set_upload_id("u");
    for (size_t i = 0; i < listed_crc32s.size(); ++i) {
      auto* p = c->add_parts();
      p->set_part_number(static_cast<uint32_t>(i + 1));
      p->set_etag("e" + std::to_string(i + 1));
      p->set_checksum(listed_crc32s[i]);
    }
    c->set_etag("x-" + std::to_string(listed_crc32s.size()));
    c->set_min_part_bytes(kMin);
    c->set_checksum_algorithm("CRC32");
    c->set_composite_checksum("wpn7tg==-2");
    return op;
  }
};

TEST_F(ChecksumUploadTest, PartsMustCarryTheUploadsChecksum) {
  CreateWithCrc32();
  EXPECT_EQ(PartWith(1, "", "b1").outcome(), pb::S3_INVALID_REQUEST);
  EXPECT_EQ(GcAt(slot_), std::vector<std::string>{"b1"});  // the refused part's blob
  EXPECT_EQ(PartWith(1, "NhCmhg==", "b2").outcome(), pb::S3_OK);
}

TEST_F(ChecksumUploadTest, CompleteChecksListedChecksumsAndStoresTheComposite) {
  CreateWithCrc32();
  ASSERT_EQ(PartWith(1, "NhCmhg==", "b1").outcome(), pb::S3_OK);
  ASSERT_EQ(PartWith(2, "OncRQw==", "b2").outcome(), pb::S3_OK);
  EXPECT_EQ(Apply(CompleteOp({"NhCmhg==", "AAAAAA=="})).outcome(), pb::S3_INVALID_PART);
  pb::S3Op no_algorithm = CompleteOp({"NhCmhg==", "OncRQw=="});
  no_algorithm.mutable_complete_upload()->clear_checksum_algorithm();
  EXPECT_EQ(Apply(no_algorithm).outcome(), pb::S3_INVALID_REQUEST);
  auto done = Apply(CompleteOp({"NhCmhg==", "OncRQw=="}));
  ASSERT_EQ(done.outcome(), pb::S3_OK);
  ASSERT_EQ(done.object().checksums_size(), 1);
  EXPECT_EQ(done.object().checksums(0).algorithm(), "CRC32");
  EXPECT_EQ(done.object().checksums(0).value(), "wpn7tg==-2");
  // Each part's checksum, in part order, for GetObjectAttributes.
  EXPECT_EQ(std::vector<std::string>(done.object().part_checksums().begin(),
                                     done.object().part_checksums().end()),
            (std::vector<std::string>{"NhCmhg==", "OncRQw=="}));
}

// Full-object uploads: parts of 100 bytes "a..." and "b...", whose CRC32s
// are r3B6ZA== and JQFi2w==; the whole 200 bytes has 0+vo5w==.
class FullObjectUploadTest : public ChecksumUploadTest {
 protected:
  void CreateFullObject(const std::string& algorithm) {
    ASSERT_EQ(CreateWithChecksum(algorithm, true).outcome(), pb::S3_OK);
  }
  pb::S3Op FullCompleteOp(const std::vector<std::string>& listed, const std::string& declared) {
    pb::S3Op op = CompleteOp(listed);
    op.mutable_complete_upload()->clear_composite_checksum();
    op.mutable_complete_upload()->set_declared_full_object_checksum(declared);
    return op;
  }
};

// Goal: completion stores the CRC of the whole body, combined from the
// parts' stored CRCs; listed part checksums are optional.
TEST_F(FullObjectUploadTest, CompleteStoresTheWholeObjectCrc) {
  CreateFullObject("CRC32");
  ASSERT_EQ(PartWith(1, "r3B6ZA==", "b1").outcome(), pb::S3_OK);
  ASSERT_EQ(PartWith(2, "JQFi2w==", "b2").outcome(), pb::S3_OK);
  EXPECT_EQ(Apply(FullCompleteOp({"r3B6ZA==", "AAAAAA=="}, "")).outcome(), pb::S3_INVALID_PART);
  auto done = Apply(FullCompleteOp({"", ""}, ""));
  ASSERT_EQ(done.outcome(), pb::S3_OK);
  ASSERT_EQ(done.object().checksums_size(), 1);
  EXPECT_EQ(done.object().checksums(0).algorithm(), "CRC32");
  EXPECT_EQ(done.object().checksums(0).value(), "0+vo5w==");
  EXPECT_EQ(std::vector<std::string>(done.object().part_checksums().begin(),
                                     done.object().part_checksums().end()),
            (std::vector<std::string>{"r3B6ZA==", "JQFi2w=="}));
}

// Goal: a declared whole-object checksum is checked: a wrong one is
// BadDigest and leaves the upload in place; the right one completes.
TEST_F(FullObjectUploadTest, DeclaredChecksumMustMatch) {
  CreateFullObject("CRC32");
  ASSERT_EQ(PartWith(1, "r3B6ZA==", "b1").outcome(), pb::S3_OK);
  ASSERT_EQ(PartWith(2, "JQFi2w==", "b2").outcome(), pb::S3_OK);
  EXPECT_EQ(Apply(FullCompleteOp({"r3B6ZA==", "JQFi2w=="}, "AAAAAA==")).outcome(),
            pb::S3_BAD_DIGEST);
  auto done = Apply(FullCompleteOp({"r3B6ZA==", "JQFi2w=="}, "0+vo5w=="));
  ASSERT_EQ(done.outcome(), pb::S3_OK);
  EXPECT_EQ(done.object().checksums(0).value(), "0+vo5w==");
}

// Goal: only CRC algorithms can make a full-object upload.
TEST_F(FullObjectUploadTest, ShaAlgorithmsAreRefused) {
  EXPECT_EQ(CreateWithChecksum("SHA256", true).outcome(), pb::S3_INVALID_REQUEST);
  EXPECT_EQ(CreateWithChecksum("SHA1", true).outcome(), pb::S3_INVALID_REQUEST);
}

TEST_F(ChecksumUploadTest, UploadsWithoutAlgorithmRefuseOneInTheOp) {
  Create("u");
  Part("u", 1, kMin, "e1", "b1");
  EXPECT_EQ(Apply(CompleteOp({"NhCmhg=="})).outcome(), pb::S3_INVALID_REQUEST);
}

}  // namespace
}  // namespace tessera::s3::model
