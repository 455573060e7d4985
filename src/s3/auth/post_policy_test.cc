// Goal: a POST upload's form passes exactly when its signed policy allows
// it, and every failure is the error S3 answers.
#include "s3/auth/post_policy.h"

#include <gtest/gtest.h>

#include <string>

#include "common/base64.h"

namespace tessera::s3::auth {
namespace {

constexpr int64_t kNowMs = 1'900'000'000'000;  // 2030-03-17

S3Result<PostPolicy> Parse(const std::string& json) { return ParsePostPolicy(Base64Encode(json)); }

const std::string kPolicy = R"({"expiration": "2031-01-01T00:00:00.000Z",
  "conditions": [{"bucket": "photos"}, ["starts-with", "$key", "user/alice/"],
                 {"acl": "public-read"}, ["content-length-range", 10, "1000"],
                 ["eq", "$Content-Type", "image/png"], ["starts-with", "$x-amz-meta-tag", ""],
                 {"x-amz-credential": "AKID/20300317/us-east-1/s3/aws4_request"}]})";

PostFields GoodFields() {
  return {{"key", "user/alice/cat.png"},
          {"ACL", "public-read"},
          {"Content-Type", "image/png"},
          {"x-amz-meta-tag", "anything"},
          {"X-Amz-Credential", "AKID/20300317/us-east-1/s3/aws4_request"},
          {"Policy", "..."},
          {"X-Amz-Signature", "..."},
          {"x-ignore-tracking", "1"}};
}

void ExpectError(const S3Status& st, S3ErrorCode code, const std::string& message) {
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, code);
  EXPECT_EQ(std::string(st.error().Message()), message);
}

TEST(PostPolicy, AFormThePolicyAllowsPasses) {
  auto policy = Parse(kPolicy);
  ASSERT_TRUE(policy.ok()) << policy.error().Message();
  EXPECT_TRUE(CheckPostPolicy(*policy, GoodFields(), "photos", kNowMs).ok());
  EXPECT_TRUE(CheckContentLength(*policy, 10).ok());
  EXPECT_TRUE(CheckContentLength(*policy, 1000).ok());
}

TEST(PostPolicy, EachUnmetConditionIsRefusedByName) {
  auto policy = Parse(kPolicy);
  ASSERT_TRUE(policy.ok());
  ExpectError(CheckPostPolicy(*policy, GoodFields(), "other", kNowMs), S3ErrorCode::kAccessDenied,
              R"(Invalid according to Policy: Policy Condition failed: {"bucket":"photos"})");
  PostFields f = GoodFields();
  f[0].second = "user/bob/cat.png";
  ExpectError(CheckPostPolicy(*policy, f, "photos", kNowMs), S3ErrorCode::kAccessDenied,
              R"(Invalid according to Policy: Policy Condition failed: ["starts-with","$key","user/alice/"])");
  f = GoodFields();
  f[2].second = "image/PNG";  // values compare exactly
  EXPECT_FALSE(CheckPostPolicy(*policy, f, "photos", kNowMs).ok());
  f = GoodFields();
  f.erase(f.begin() + 1);  // an absent field is "" and fails its condition
  EXPECT_FALSE(CheckPostPolicy(*policy, f, "photos", kNowMs).ok());
  f = GoodFields();
  f.emplace_back("x-amz-meta-extra", "v");
  ExpectError(CheckPostPolicy(*policy, f, "photos", kNowMs), S3ErrorCode::kAccessDenied,
              "Invalid according to Policy: Extra input fields: x-amz-meta-extra");
  ExpectError(CheckPostPolicy(*policy, GoodFields(), "photos", 1'924'992'000'000), S3ErrorCode::kAccessDenied,
              "Invalid according to Policy: Policy expired.");
}

TEST(PostPolicy, ContentLengthRange) {
  auto policy = Parse(kPolicy);
  ASSERT_TRUE(policy.ok());
  S3Status small = CheckContentLength(*policy, 9);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.error().code, S3ErrorCode::kEntityTooSmall);
  EXPECT_TRUE(small.error().HasDetail("MinSizeAllowed"));
  S3Status large = CheckContentLength(*policy, 1001);
  ASSERT_FALSE(large.ok());
  EXPECT_EQ(large.error().code, S3ErrorCode::kEntityTooLarge);
  EXPECT_TRUE(large.error().HasDetail("MaxSizeAllowed"));
  auto unbounded = Parse(R"({"expiration": "2031-01-01T00:00:00Z", "conditions": []})");
  ASSERT_TRUE(unbounded.ok());
  EXPECT_TRUE(CheckContentLength(*unbounded, 5ull << 30).ok());
}

TEST(PostPolicy, MalformedDocumentsAreInvalidPolicyDocument) {
  const std::string cases[] = {
      "not json",
      "[]",
      R"({"conditions": []})",                                           // no expiration
      R"({"EXPIRATION": "2031-01-01T00:00:00Z", "conditions": []})",     // names are case-sensitive
      R"({"expiration": "tomorrow", "conditions": []})",
      R"({"expiration": 5, "conditions": []})",
      R"({"expiration": "2031-01-01T00:00:00Z"})",                        // no conditions
      R"({"expiration": "2031-01-01T00:00:00Z", "CONDITIONS": []})",
      R"({"expiration": "2031-01-01T00:00:00Z", "conditions": {}})",
      R"({"expiration": "2031-01-01T00:00:00Z", "conditions": [{"a": "1", "b": "2"}]})",
      R"({"expiration": "2031-01-01T00:00:00Z", "conditions": [{"a": 1}]})",
      R"({"expiration": "2031-01-01T00:00:00Z", "conditions": [["eq", "key", "v"]]})",
      R"({"expiration": "2031-01-01T00:00:00Z", "conditions": [["eq", "$key"]]})",
      R"({"expiration": "2031-01-01T00:00:00Z", "conditions": [["matches", "$key", "v"]]})",
      R"({"expiration": "2031-01-01T00:00:00Z", "conditions": [["content-length-range", -1, 5]]})",
      R"({"expiration": "2031-01-01T00:00:00Z", "conditions": [["content-length-range", 9, 5]]})",
      R"({"expiration": "2031-01-01T00:00:00Z", "conditions": [["content-length-range", 5]]})",
      R"({"expiration": "2031-01-01T00:00:00Z", "conditions": ["eq"]})",
  };
  for (const std::string& c : cases) {
    auto policy = Parse(c);
    ASSERT_FALSE(policy.ok()) << c;
    EXPECT_EQ(policy.error().code, S3ErrorCode::kInvalidPolicyDocument) << c;
    EXPECT_EQ(std::string(policy.error().Message()).rfind("Invalid Policy: ", 0), 0u) << c;
  }
  auto not_base64 = ParsePostPolicy("%%%");
  ASSERT_FALSE(not_base64.ok());
  EXPECT_EQ(not_base64.error().code, S3ErrorCode::kInvalidPolicyDocument);
}

}  // namespace
}  // namespace tessera::s3::auth
