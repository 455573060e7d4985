// Goal: a POST form is taken as its signer's only with a valid SigV4 or
// SigV2 signature of its policy; anything else is refused with S3's error.
#include "s3/auth/post_signature.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "common/base64.h"
#include "s3/auth/crypto.h"
#include "s3/auth/sigv4.h"

namespace tessera::s3::auth {
namespace {

const std::string kSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const std::string kPolicy = Base64Encode(R"({"expiration":"2031-01-01T00:00:00Z","conditions":[]})");

std::optional<std::string> Lookup(std::string_view key) {
  if (key == "AKIDEXAMPLE") return kSecret;
  return std::nullopt;
}

AuthConfig Config() {
  AuthConfig c;
  c.region = "eu-west-1";
  return c;
}

PostFields V4Fields(std::string region = "eu-west-1", std::string date = "20301201T000000Z") {
  const std::string date8 = date.substr(0, 8);
  const std::string signature = HmacSha256Hex(DeriveSigningKey(kSecret, date8, region), kPolicy);
  return {{"key", "k"},
          {"X-Amz-Algorithm", "AWS4-HMAC-SHA256"},
          {"X-Amz-Credential", "AKIDEXAMPLE/" + date8 + "/" + region + "/s3/aws4_request"},
          {"X-Amz-Date", date},
          {"Policy", kPolicy},
          {"X-Amz-Signature", signature}};
}

PostFields V2Fields() {
  return {{"key", "k"},
          {"AWSAccessKeyId", "AKIDEXAMPLE"},
          {"policy", kPolicy},
          {"signature", Base64Encode(HmacSha1(kSecret, kPolicy))}};
}

void Set(PostFields& f, std::string_view name, std::string value) {
  for (auto& [n, v] : f) {
    if (n == name) v = std::move(value);
  }
}

void Erase(PostFields& f, std::string_view name) {
  std::erase_if(f, [&](const auto& p) { return p.first == name; });
}

S3ErrorCode CodeOf(const PostFields& f) {
  auto r = AuthenticatePostForm(f, Config(), Lookup);
  EXPECT_FALSE(r.ok());
  return r.ok() ? S3ErrorCode::kInternalError : r.error().code;
}

TEST(PostSignature, ValidSignaturesNameTheSigner) {
  auto v4 = AuthenticatePostForm(V4Fields(), Config(), Lookup);
  ASSERT_TRUE(v4.ok()) << v4.error().Message();
  EXPECT_EQ(v4->access_key, "AKIDEXAMPLE");
  EXPECT_FALSE(v4->anonymous);
  EXPECT_TRUE(AuthenticatePostForm(V4Fields("us-east-1"), Config(), Lookup).ok());
  auto v2 = AuthenticatePostForm(V2Fields(), Config(), Lookup);
  ASSERT_TRUE(v2.ok()) << v2.error().Message();
  EXPECT_TRUE(v2->sigv2);
  auto anonymous = AuthenticatePostForm({{"key", "k"}}, Config(), Lookup);
  ASSERT_TRUE(anonymous.ok());
  EXPECT_TRUE(anonymous->anonymous);
}

TEST(PostSignature, EveryFlawIsRefused) {
  PostFields f = V4Fields();
  Set(f, "X-Amz-Signature", std::string(64, '0'));
  EXPECT_EQ(CodeOf(f), S3ErrorCode::kSignatureDoesNotMatch);
  f = V4Fields();
  Set(f, "Policy", Base64Encode(R"({"expiration":"2099-01-01T00:00:00Z","conditions":[]})"));
  EXPECT_EQ(CodeOf(f), S3ErrorCode::kSignatureDoesNotMatch);  // another policy, same signature
  f = V4Fields();
  Set(f, "X-Amz-Credential", "NOSUCHKEY/20301201/eu-west-1/s3/aws4_request");
  EXPECT_EQ(CodeOf(f), S3ErrorCode::kInvalidAccessKeyId);
  EXPECT_EQ(CodeOf(V4Fields("ap-south-1")), S3ErrorCode::kInvalidArgument);
  f = V4Fields();
  Set(f, "X-Amz-Date", "20301202T000000Z");  // not the credential's day
  EXPECT_EQ(CodeOf(f), S3ErrorCode::kInvalidArgument);
  f = V4Fields();
  Set(f, "X-Amz-Credential", "AKIDEXAMPLE/20301201/eu-west-1/s3");
  EXPECT_EQ(CodeOf(f), S3ErrorCode::kInvalidArgument);
  f = V4Fields();
  Set(f, "X-Amz-Algorithm", "AWS4-ECDSA-P256-SHA256");
  EXPECT_EQ(CodeOf(f), S3ErrorCode::kInvalidArgument);
  for (const char* field : {"X-Amz-Credential", "X-Amz-Date", "X-Amz-Signature", "Policy"}) {
    f = V4Fields();
    Erase(f, field);
    EXPECT_EQ(CodeOf(f), S3ErrorCode::kInvalidArgument) << field;
  }
  f = V2Fields();
  Set(f, "signature", Base64Encode(HmacSha1("wrong", kPolicy)));
  EXPECT_EQ(CodeOf(f), S3ErrorCode::kSignatureDoesNotMatch);
  f = V2Fields();
  Erase(f, "signature");
  EXPECT_EQ(CodeOf(f), S3ErrorCode::kInvalidArgument);
  EXPECT_EQ(CodeOf({{"key", "k"}, {"policy", kPolicy}}), S3ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::s3::auth
