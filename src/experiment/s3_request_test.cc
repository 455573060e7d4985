// Goal: the S3 workload's signed requests are accepted by the router's own
// verifier (and a changed request is not), and ListObjectsV2 answers parse.
#include "experiment/s3_request.h"

#include <gtest/gtest.h>

#include "s3/auth/authenticate.h"

namespace tessera::experiment {
namespace {

constexpr int64_t kNow = 1'700'000'000;

const S3Endpoint kEndpoint{"127.0.0.1", 9000, "us-east-1", "AKEXPERIMENT", "secret/Key+1"};

s3::S3Result<s3::auth::AuthContext> Verify(const std::string& method, const std::string& target,
                                           const S3Headers& headers) {
  s3::auth::RequestHead head{method, target, headers};
  s3::auth::AuthConfig config;
  config.now_unix_s = kNow + 5;
  return s3::auth::Authenticate(head, "", config, [](std::string_view key) {
    return key == kEndpoint.access_key ? std::optional<std::string>(kEndpoint.secret_key)
                                       : std::nullopt;
  });
}

TEST(S3Request, SignedRequestsVerify) {
  const std::string put = ObjectTarget("bucket", "exp-a-1-2/w0-p1/k03");
  EXPECT_EQ(put, "/bucket/exp-a-1-2/w0-p1/k03");
  const S3Headers headers =
      SignS3Request(kEndpoint, "PUT", put, {{"x-amz-meta-write-id", "w0-c1-2"}}, kNow);
  auto ok = Verify("PUT", put, headers);
  ASSERT_TRUE(ok.ok()) << ok.error().Message();
  EXPECT_EQ(ok->access_key, "AKEXPERIMENT");

  const std::string list = ListTarget("bucket", "exp-a-1-2/w0-p1/", "");
  EXPECT_EQ(list, "/bucket?list-type=2&max-keys=1000&prefix=exp-a-1-2%2Fw0-p1%2F");
  EXPECT_TRUE(Verify("GET", list, SignS3Request(kEndpoint, "GET", list, {}, kNow)).ok());

  // Another method, target or signed header value does not verify.
  EXPECT_FALSE(Verify("DELETE", put, headers).ok());
  EXPECT_FALSE(Verify("PUT", put + "x", headers).ok());
  S3Headers changed = headers;
  for (auto& [name, value] : changed) {
    if (name == "x-amz-meta-write-id") value = "w0-c1-3";
  }
  EXPECT_FALSE(Verify("PUT", put, changed).ok());
}

TEST(S3Request, MultipartTargetsSignAndParse) {
  const std::string create = CreateUploadTarget("b", "p/k01");
  EXPECT_EQ(create, "/b/p/k01?uploads");
  EXPECT_TRUE(Verify("POST", create, SignS3Request(kEndpoint, "POST", create, {}, kNow)).ok());
  const std::string part = PartTarget("b", "p/k01", "u/1+2", 1);
  EXPECT_EQ(part, "/b/p/k01?partNumber=1&uploadId=u%2F1%2B2");
  EXPECT_TRUE(Verify("PUT", part, SignS3Request(kEndpoint, "PUT", part, {}, kNow)).ok());
  EXPECT_EQ(CompleteTarget("b", "p/k01", "u1"), "/b/p/k01?uploadId=u1");
  EXPECT_EQ(CompleteBody({"\"abc\""}),
            "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&quot;abc&quot;"
            "</ETag></Part></CompleteMultipartUpload>");
  EXPECT_EQ(CompleteBody({"\"a\"", "\"b\""}),
            "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&quot;a&quot;"
            "</ETag></Part><Part><PartNumber>2</PartNumber><ETag>&quot;b&quot;</ETag></Part>"
            "</CompleteMultipartUpload>");
  EXPECT_EQ(XmlElement("<InitiateMultipartUploadResult><UploadId>u&amp;1</UploadId>", "UploadId"),
            "u&1");
  EXPECT_FALSE(XmlElement("<Error><Code>SlowDown</Code></Error>", "UploadId"));
}

TEST(S3Request, ListObjectsV2Parses) {
  auto page = ParseListObjectsV2(
      "<?xml version=\"1.0\"?><ListBucketResult><Name>b</Name><Prefix>p/</Prefix>"
      "<IsTruncated>true</IsTruncated><Contents><Key>p/a</Key><Size>3</Size></Contents>"
      "<Contents><Key>p/b&amp;c</Key></Contents>"
      "<NextContinuationToken>tok</NextContinuationToken></ListBucketResult>");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->keys, (std::vector<std::string>{"p/a", "p/b&c"}));
  EXPECT_EQ(page->next_token, "tok");
  auto last = ParseListObjectsV2(
      "<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>");
  ASSERT_TRUE(last.ok());
  EXPECT_TRUE(last->keys.empty());
  EXPECT_FALSE(last->next_token);
  EXPECT_FALSE(ParseListObjectsV2("<Error><Code>SlowDown</Code></Error>").ok());
  EXPECT_FALSE(
      ParseListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>").ok());
}

}  // namespace
}  // namespace tessera::experiment
