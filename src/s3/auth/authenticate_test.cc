// Goal: Authenticate picks the right mechanism for every form a client may
// send (SigV4 header/query, SigV2 header/query, anonymous), refuses mixed
// or unknown forms, and a request produced by the signers verifies end to
// end, aws-chunked body included.
#include "s3/auth/authenticate.h"

#include <gtest/gtest.h>

#include "s3/auth/auth_test_util.h"
#include "s3/auth/aws_chunked.h"
#include "s3/auth/sigv2.h"
#include "s3/auth/sigv4.h"

namespace tessera::s3::auth {
namespace {

using testing::ExampleConfig;
using testing::ExampleLookup;
using testing::kAccessKey;
using testing::kExampleTime;
using testing::kSecretKey;

const SigV4Credentials kCreds{std::string(kAccessKey), std::string(kSecretKey), "us-east-1"};

S3Result<AuthContext> Auth(const RequestHead& r, std::string_view bucket = "") {
  return Authenticate(r, bucket, ExampleConfig(), ExampleLookup());
}

TEST(Authenticate, SignV4ThenVerify) {
  RequestHead r{"PUT", "/bucket/photos/2024%20summer/a%2Bb.jpg?tagging",
                {{"Host", "localhost:9000"}, {"Content-Type", "image/jpeg"},
                 {"x-amz-meta-owner", "  me  "}}};
  SignV4(&r, kCreds, kExampleTime, Sha256Hex("body"));
  auto result = Auth(r);
  ASSERT_TRUE(result.ok()) << result.error().Message();
  EXPECT_FALSE(result->anonymous);
  EXPECT_FALSE(result->presigned);
  EXPECT_EQ(result->access_key, kAccessKey);
  EXPECT_EQ(result->mode, PayloadMode::kSignedHex);
  EXPECT_TRUE(VerifyPayloadSha256(*result, Sha256Hex("body")).ok());
  EXPECT_FALSE(VerifyPayloadSha256(*result, Sha256Hex("other")).ok());
}

TEST(Authenticate, EveryMechanism) {
  RequestHead v4{"GET", "/b/k", {{"Host", "h"}}};
  SignV4(&v4, kCreds, kExampleTime);
  EXPECT_TRUE(Auth(v4).ok());

  RequestHead v4q{"GET", "/b/k", {{"Host", "h"}}};
  v4q.target = PresignV4(v4q, kCreds, kExampleTime, 60);
  auto q = Auth(v4q);
  ASSERT_TRUE(q.ok()) << q.error().Message();
  EXPECT_TRUE(q->presigned);
  EXPECT_FALSE(q->sigv2);

  RequestHead v2{"GET", "/k", {{"Host", "b.s3.example"}, {"Date", "Fri, 24 May 2013 00:00:00 GMT"}}};
  SignV2(&v2, "b", kAccessKey, kSecretKey);
  auto h2 = Auth(v2, "b");
  ASSERT_TRUE(h2.ok()) << h2.error().Message();
  EXPECT_TRUE(h2->sigv2);
  EXPECT_FALSE(h2->presigned);

  RequestHead v2q{"GET", "/k", {{"Host", "b.s3.example"}}};
  v2q.target = PresignV2(v2q, "b", kAccessKey, kSecretKey, kExampleTime + 60);
  auto q2 = Auth(v2q, "b");
  ASSERT_TRUE(q2.ok()) << q2.error().Message();
  EXPECT_TRUE(q2->sigv2 && q2->presigned);

  auto anonymous = Auth(RequestHead{"GET", "/b/k?versionId=1", {{"Host", "h"}}});
  ASSERT_TRUE(anonymous.ok());
  EXPECT_TRUE(anonymous->anonymous);
  EXPECT_TRUE(anonymous->access_key.empty());

  // An empty Authorization header (a proxy's, or `curl -H "Authorization;"`)
  // is no credential: anonymous, as AWS treats it, not a malformed scheme.
  for (const char* empty : {"", "  "}) {
    auto blank = Auth(RequestHead{"PUT", "/b/k", {{"Host", "h"}, {"Authorization", empty}}});
    ASSERT_TRUE(blank.ok()) << blank.error().Message();
    EXPECT_TRUE(blank->anonymous);
  }
}

TEST(Authenticate, MixedAndUnknownMechanisms) {
  RequestHead both{"GET", "/b/k", {{"Host", "h"}}};
  SignV4(&both, kCreds, kExampleTime);
  both.target = PresignV4(RequestHead{"GET", "/b/k", {{"Host", "h"}}}, kCreds, kExampleTime, 60);
  auto mixed = Auth(both);
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.error().code, S3ErrorCode::kInvalidArgument);
  EXPECT_EQ(mixed.error().Message().substr(0, 32), "Only one auth mechanism allowed;");

  auto v2_and_v4_query =
      Auth(RequestHead{"GET", "/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&AWSAccessKeyId=a", {}});
  EXPECT_EQ(v2_and_v4_query.error().code, S3ErrorCode::kInvalidArgument);

  auto bearer = Auth(RequestHead{"GET", "/b/k", {{"Authorization", "Bearer abc"}}});
  EXPECT_EQ(bearer.error().code, S3ErrorCode::kInvalidArgument);
  EXPECT_EQ(bearer.error().Message(), "Unsupported Authorization Type");
  auto sigv4a = Auth(RequestHead{
      "GET", "/b/k", {{"Authorization", "AWS4-ECDSA-P256-SHA256 Credential=a/b/s3/aws4_request"}}});
  EXPECT_EQ(sigv4a.error().code, S3ErrorCode::kNotImplemented);
  // A V4 query without X-Amz-Algorithm is still V4 query auth, and incomplete.
  auto partial = Auth(RequestHead{"GET", "/b/k?X-Amz-Signature=abc", {{"Host", "h"}}});
  EXPECT_EQ(partial.error().code, S3ErrorCode::kAuthorizationQueryParametersError);
  auto partial_v2 = Auth(RequestHead{"GET", "/b/k?Signature=abc", {{"Host", "h"}}});
  EXPECT_EQ(partial_v2.error().code, S3ErrorCode::kAccessDenied);
}

TEST(Authenticate, StreamingUploadEndToEnd) {
  // What an SDK does for a PUT with a CRC32 trailer, and what the front does.
  const std::string data(300'000, 'z');
  const std::string crc = Base64Encode(ComputeChecksum(ChecksumAlgorithm::kCrc32, data));
  RequestHead r{"PUT", "/bucket/big.bin",
                {{"Host", "s3.local"}, {"Content-Encoding", "aws-chunked"},
                 {"x-amz-decoded-content-length", std::to_string(data.size())},
                 {"x-amz-trailer", "x-amz-checksum-crc32"},
                 {"x-amz-sdk-checksum-algorithm", "CRC32"}}};
  const SigningState signing =
      SignV4(&r, kCreds, kExampleTime, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER");
  const std::string body = EncodeAwsChunked(data, 65536, PayloadMode::kStreamingSignedTrailer,
                                            signing, {{"x-amz-checksum-crc32", crc}});

  auto context = Auth(r);
  ASSERT_TRUE(context.ok()) << context.error().Message();
  ASSERT_TRUE(IsStreaming(context->mode));
  auto options = AwsChunkedOptionsFor(r, *context);
  ASSERT_TRUE(options.ok()) << options.error().Message();
  AwsChunkedDecoder decoder(*options);
  std::string out;
  for (size_t at = 0; at < body.size(); at += 4000) {
    ASSERT_TRUE(decoder.Feed(std::string_view(body).substr(at, 4000), &out).ok());
  }
  ASSERT_TRUE(decoder.Finish().ok());
  EXPECT_EQ(out, data);
  EXPECT_EQ(decoder.computed_checksum_base64(), crc);
}

}  // namespace
}  // namespace tessera::s3::auth
