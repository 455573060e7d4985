// Goal: SigV4 verification accepts exactly what AWS accepts: the S3
// documentation's worked examples verify, canonicalisation follows AWS's
// rules for keys and queries with special characters, and every kind of
// bad request (skew, expiry, region, key, signature, headers) is rejected
// with S3's error.
#include "s3/auth/sigv4.h"

#include <gtest/gtest.h>

#include "s3/auth/auth_test_util.h"
#include "s3/auth/checksum.h"

namespace tessera::s3::auth {
namespace {

using testing::ExampleConfig;
using testing::ExampleLookup;
using testing::kAccessKey;
using testing::kExampleTime;
using testing::kSecretKey;

constexpr std::string_view kEmptySha =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string ExampleAuthorization(std::string_view signed_headers, std::string_view signature) {
  return "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
         "SignedHeaders=" + std::string(signed_headers) + ",Signature=" + std::string(signature);
}

// sig-v4-header-based-auth: "GET Object" (with a Range header).
RequestHead GetObjectExample() {
  return {"GET",
          "/test.txt",
          {{"Host", "examplebucket.s3.amazonaws.com"},
           {"Range", "bytes=0-9"},
           {"x-amz-content-sha256", std::string(kEmptySha)},
           {"x-amz-date", "20130524T000000Z"},
           {"Authorization",
            ExampleAuthorization(
                "host;range;x-amz-content-sha256;x-amz-date",
                "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")}}};
}

S3ErrorCode CodeOf(const S3Result<AuthContext>& r) {
  EXPECT_FALSE(r.ok());
  return r.ok() ? S3ErrorCode::kInternalError : r.error().code;
}

std::string MessageOf(const S3Result<AuthContext>& r) {
  return r.ok() ? "" : std::string(r.error().Message());
}

void SetHeader(RequestHead* r, std::string_view name, std::string value) {
  for (auto& [n, v] : r->headers) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  r->headers.emplace_back(std::string(name), std::move(value));
}

TEST(SigV4Examples, GetObjectWithRange) {
  auto r = VerifySigV4Header(GetObjectExample(), ExampleConfig(), ExampleLookup());
  ASSERT_TRUE(r.ok()) << MessageOf(r);
  EXPECT_EQ(r->access_key, kAccessKey);
  EXPECT_EQ(r->mode, PayloadMode::kSignedHex);
  EXPECT_EQ(r->payload_sha256_hex, kEmptySha);
  EXPECT_FALSE(r->presigned);
  EXPECT_FALSE(r->sigv2);
  EXPECT_TRUE(VerifyPayloadSha256(*r, Sha256Hex("")).ok());
  S3Status mismatch = VerifyPayloadSha256(*r, Sha256Hex("x"));
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().code, S3ErrorCode::kXAmzContentSHA256Mismatch);
}

TEST(SigV4Examples, PutObjectWithDollarInKeyAndDateHeader) {
  RequestHead put{
      "PUT",
      "/test%24file.text",
      {{"Host", "examplebucket.s3.amazonaws.com"},
       {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
       {"x-amz-date", "20130524T000000Z"},
       {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
       {"x-amz-content-sha256", "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"},
       {"Authorization",
        ExampleAuthorization("date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
                             "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")}}};
  auto r = VerifySigV4Header(put, ExampleConfig(), ExampleLookup());
  ASSERT_TRUE(r.ok()) << MessageOf(r);
  EXPECT_TRUE(VerifyPayloadSha256(*r, Sha256Hex("Welcome to Amazon S3.")).ok());
}

TEST(SigV4Examples, GetBucketLifecycle) {
  RequestHead get{"GET",
                  "/?lifecycle",
                  {{"Host", "examplebucket.s3.amazonaws.com"},
                   {"x-amz-date", "20130524T000000Z"},
                   {"x-amz-content-sha256", std::string(kEmptySha)},
                   {"Authorization", ExampleAuthorization("host;x-amz-content-sha256;x-amz-date",
                                                          "fea454ca298b7da1c68078a5d1bdbfbbe0d65c6"
                                                          "99e0f91ac7a200a0136783543")}}};
  auto r = VerifySigV4Header(get, ExampleConfig(), ExampleLookup());
  EXPECT_TRUE(r.ok()) << MessageOf(r);
}

TEST(SigV4Examples, ListObjectsQueryIsSorted) {
  RequestHead get{"GET",
                  "/?max-keys=2&prefix=J",
                  {{"Host", "examplebucket.s3.amazonaws.com"},
                   {"x-amz-date", "20130524T000000Z"},
                   {"x-amz-content-sha256", std::string(kEmptySha)},
                   {"Authorization", ExampleAuthorization("host;x-amz-content-sha256;x-amz-date",
                                                          "34b48302e7b5fa45bde8084f4b7868a86f0a534"
                                                          "bc59db6670ed5711ef69dc6f7")}}};
  EXPECT_TRUE(VerifySigV4Header(get, ExampleConfig(), ExampleLookup()).ok());
  // The same parameters in another order sign the same.
  get.target = "/?prefix=J&max-keys=2";
  EXPECT_TRUE(VerifySigV4Header(get, ExampleConfig(), ExampleLookup()).ok());
}

// sigv4-query-string-auth: the presigned GET of test.txt, valid 86400 s.
RequestHead PresignedExample() {
  return {"GET",
          "/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F"
          "20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires="
          "86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330"
          "da4c265957d157751f604d404",
          {{"Host", "examplebucket.s3.amazonaws.com"}}};
}

TEST(SigV4Examples, PresignedUrl) {
  auto r = VerifySigV4Query(PresignedExample(), ExampleConfig(kExampleTime + 3600),
                            ExampleLookup());
  ASSERT_TRUE(r.ok()) << MessageOf(r);
  EXPECT_TRUE(r->presigned);
  EXPECT_EQ(r->mode, PayloadMode::kUnsigned);
  // Valid through its last second, expired after.
  EXPECT_TRUE(
      VerifySigV4Query(PresignedExample(), ExampleConfig(kExampleTime + 86400), ExampleLookup())
          .ok());
  auto expired =
      VerifySigV4Query(PresignedExample(), ExampleConfig(kExampleTime + 86401), ExampleLookup());
  EXPECT_EQ(CodeOf(expired), S3ErrorCode::kAccessDenied);
  EXPECT_EQ(MessageOf(expired), "Request has expired");
  auto early =
      VerifySigV4Query(PresignedExample(), ExampleConfig(kExampleTime - 901), ExampleLookup());
  EXPECT_EQ(CodeOf(early), S3ErrorCode::kAccessDenied);
  EXPECT_EQ(MessageOf(early), "Request is not valid yet");
}

TEST(SigV4Examples, StreamingSeedSignature) {
  RequestHead put{
      "PUT",
      "/examplebucket/chunkObject.txt",
      {{"Host", "s3.amazonaws.com"},
       {"x-amz-date", "20130524T000000Z"},
       {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
       {"Authorization",
        ExampleAuthorization("content-encoding;content-length;host;x-amz-content-sha256;"
                             "x-amz-date;x-amz-decoded-content-length;x-amz-storage-class",
                             "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9")},
       {"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
       {"Content-Encoding", "aws-chunked"},
       {"x-amz-decoded-content-length", "66560"},
       {"Content-Length", "66824"}}};
  auto r = VerifySigV4Header(put, ExampleConfig(), ExampleLookup());
  ASSERT_TRUE(r.ok()) << MessageOf(r);
  EXPECT_EQ(r->mode, PayloadMode::kStreamingSigned);
  EXPECT_EQ(r->signing.seed_signature_hex,
            "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9");
  EXPECT_EQ(r->signing.amz_date, "20130524T000000Z");
  EXPECT_EQ(r->signing.scope, "20130524/us-east-1/s3/aws4_request");
  EXPECT_EQ(r->signing.signing_key, DeriveSigningKey(kSecretKey, "20130524", "us-east-1"));
}

TEST(SigV4Canonical, QueryStringEncoding) {
  // Decoded as routed ('+' a space, %XX its byte), re-encoded with
  // UriEncode, sorted by name then value.
  EXPECT_EQ(CanonicalQueryString("prefix=a+b&max-keys=2&acl", false),
            "acl=&max-keys=2&prefix=a%20b");
  EXPECT_EQ(CanonicalQueryString("prefix=a%2Bb", false), "prefix=a%2Bb");
  EXPECT_EQ(CanonicalQueryString("prefix=a%20b&x=%7e&y=%2f&z=%2F", false),
            "prefix=a%20b&x=~&y=%2F&z=%2F");
  EXPECT_EQ(CanonicalQueryString("b=2&a=2&a=1&a=", false), "a=&a=1&a=2&b=2");
  EXPECT_EQ(CanonicalQueryString("prefix=\xc3\xa9&k=%C3%A9", false), "k=%C3%A9&prefix=%C3%A9");
  EXPECT_EQ(CanonicalQueryString("prefix=100%25&bad=%zz", false), "bad=%25zz&prefix=100%25");
  EXPECT_EQ(CanonicalQueryString("X-Amz-Signature=abc&X-Amz-Date=1", true), "X-Amz-Date=1");
  EXPECT_EQ(CanonicalQueryString("", false), "");
  EXPECT_EQ(UriEncode("a b/c~d"), "a%20b%2Fc~d");
}

TEST(SigV4Canonical, HeaderValuesTrimCollapseAndJoinRepeats) {
  // The canonical request written out by hand, independently of the
  // implementation's CanonicalRequest.
  RequestHead r{"PUT",
                "/bucket/key",
                {{"Host", "h.example"},
                 {"X-Amz-Meta-A", "  one   two  "},
                 {"x-amz-date", "20130524T000000Z"},
                 {"x-amz-meta-a", "three"},
                 {"x-amz-content-sha256", "UNSIGNED-PAYLOAD"}}};
  const std::string canonical =
      "PUT\n/bucket/key\n\n"
      "host:h.example\nx-amz-content-sha256:UNSIGNED-PAYLOAD\nx-amz-date:20130524T000000Z\n"
      "x-amz-meta-a:one two,three\n\n"
      "host;x-amz-content-sha256;x-amz-date;x-amz-meta-a\nUNSIGNED-PAYLOAD";
  const std::string sts = "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n" +
                          Sha256Hex(canonical);
  const std::string signature =
      HmacSha256Hex(DeriveSigningKey(kSecretKey, "20130524", "us-east-1"), sts);
  r.headers.emplace_back("Authorization",
                         ExampleAuthorization("host;x-amz-content-sha256;x-amz-date;x-amz-meta-a",
                                              signature));
  auto result = VerifySigV4Header(r, ExampleConfig(), ExampleLookup());
  EXPECT_TRUE(result.ok()) << MessageOf(result);
  EXPECT_EQ(result->mode, PayloadMode::kUnsigned);
}

RequestHead Signed(std::string method, std::string target, HeaderList headers,
                   std::string region = "us-east-1", int64_t now = kExampleTime,
                   std::string_view payload = "UNSIGNED-PAYLOAD") {
  RequestHead r{std::move(method), std::move(target), std::move(headers)};
  SignV4(&r, {std::string(kAccessKey), std::string(kSecretKey), std::move(region)}, now, payload);
  return r;
}

TEST(SigV4Signer, AwkwardKeysAndQueriesRoundTrip) {
  const std::vector<std::string> targets = {
      "/bucket/my%20key%20with%20spaces",
      "/bucket/caf%C3%A9/%E2%82%AC%20euro",
      "/bucket/a%2Bplus+literal",
      "/bucket/100%25/percent",
      "/bucket//double//slashes/",
      "/bucket/dot/./dot/../x",
      "/bucket/key?uploadId=abc%2Fdef&partNumber=3",
      "/bucket?list-type=2&prefix=a%20b%2Bc&delimiter=%2F&encoding-type=url",
      "/bucket?prefix=caf%C3%A9&start-after=%F0%9F%98%80",
      "/?x-id=ListBuckets",
      "",
  };
  for (const std::string& target : targets) {
    RequestHead r = Signed("GET", target, {{"Host", "s3.example"}, {"X-Amz-Meta-Z", "v"}});
    auto result = VerifySigV4Header(r, ExampleConfig(), ExampleLookup());
    EXPECT_TRUE(result.ok()) << target << ": " << MessageOf(result);
    // The path is signed as sent: any other spelling of it does not verify.
    RequestHead changed = r;
    changed.target = target.empty() ? "/x" : target + "x";
    EXPECT_EQ(CodeOf(VerifySigV4Header(changed, ExampleConfig(), ExampleLookup())),
              S3ErrorCode::kSignatureDoesNotMatch)
        << target;
  }
  // A raw '+' in a query is a space, as the router reads it: "a+b" and
  // "a%20b" sign the same, and a signed "a%2Bb" (a plus) cannot be turned
  // into a raw '+' (routed as a space) without breaking the signature.
  RequestHead plus = Signed("GET", "/b?prefix=a+b", {{"Host", "s3.example"}});
  plus.target = "/b?prefix=a%20b";
  EXPECT_TRUE(VerifySigV4Header(plus, ExampleConfig(), ExampleLookup()).ok());
  RequestHead literal = Signed("GET", "/b?prefix=a%2Bb", {{"Host", "s3.example"}});
  literal.target = "/b?prefix=a+b";
  EXPECT_EQ(CodeOf(VerifySigV4Header(literal, ExampleConfig(), ExampleLookup())),
            S3ErrorCode::kSignatureDoesNotMatch);
  // Encoded or not, the same query value signs the same.
  RequestHead tilde = Signed("GET", "/b?prefix=%7Ex", {{"Host", "s3.example"}});
  tilde.target = "/b?prefix=~x";
  EXPECT_TRUE(VerifySigV4Header(tilde, ExampleConfig(), ExampleLookup()).ok());
}

TEST(SigV4Signer, SignsDateOnlyRequestsAndReturnsSigningState) {
  RequestHead r = Signed("PUT", "/b/k", {{"Host", "s3.example"}}, "us-east-1", kExampleTime,
                         "STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
  auto result = VerifySigV4Header(r, ExampleConfig(), ExampleLookup());
  ASSERT_TRUE(result.ok()) << MessageOf(result);
  EXPECT_EQ(result->mode, PayloadMode::kStreamingSigned);
  // A request dated by the Date header alone (no x-amz-date).
  RequestHead date_only{"GET", "/b/k", {{"Host", "s3.example"},
                                        {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                                        {"x-amz-content-sha256", "UNSIGNED-PAYLOAD"}}};
  const std::string canonical =
      "GET\n/b/k\n\ndate:Fri, 24 May 2013 00:00:00 GMT\nhost:s3.example\n"
      "x-amz-content-sha256:UNSIGNED-PAYLOAD\n\ndate;host;x-amz-content-sha256\nUNSIGNED-PAYLOAD";
  const std::string sts = "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n" +
                          Sha256Hex(canonical);
  date_only.headers.emplace_back(
      "Authorization",
      ExampleAuthorization("date;host;x-amz-content-sha256",
                           HmacSha256Hex(DeriveSigningKey(kSecretKey, "20130524", "us-east-1"),
                                         sts)));
  auto dated = VerifySigV4Header(date_only, ExampleConfig(), ExampleLookup());
  EXPECT_TRUE(dated.ok()) << MessageOf(dated);
}

TEST(SigV4Signer, PresignRoundTrip) {
  RequestHead r{"GET",
                "/bucket/a%20key%2Bplus?response-content-disposition=attachment%3B%20filename%3D"
                "%22caf%C3%A9.txt%22&versionId=v1",
                {{"Host", "bucket.s3.example:9000"}}};
  const SigV4Credentials creds{std::string(kAccessKey), std::string(kSecretKey), "us-east-1"};
  RequestHead presigned = r;
  presigned.target = PresignV4(r, creds, kExampleTime, 600);
  auto ok = VerifySigV4Query(presigned, ExampleConfig(kExampleTime + 600), ExampleLookup());
  ASSERT_TRUE(ok.ok()) << MessageOf(ok);
  EXPECT_TRUE(ok->presigned);
  EXPECT_EQ(MessageOf(VerifySigV4Query(presigned, ExampleConfig(kExampleTime + 601),
                                       ExampleLookup())),
            "Request has expired");
  // Changing any parameter breaks it.
  RequestHead tampered = presigned;
  tampered.target.replace(tampered.target.find("versionId=v1"), 12, "versionId=v2");
  EXPECT_EQ(CodeOf(VerifySigV4Query(tampered, ExampleConfig(), ExampleLookup())),
            S3ErrorCode::kSignatureDoesNotMatch);
  // A header added by the client after signing but not signed: AccessDenied.
  RequestHead extra = presigned;
  extra.headers.emplace_back("X-Amz-Date", "20130524T000000Z");
  extra.headers.emplace_back("x-amz-acl", "public-read");
  extra.headers.emplace_back("x-amz-acl", "private");
  extra.headers.emplace_back("x-amz-content-sha256", "UNSIGNED-PAYLOAD");
  auto denied = VerifySigV4Query(extra, ExampleConfig(), ExampleLookup());
  EXPECT_EQ(CodeOf(denied), S3ErrorCode::kAccessDenied);
  EXPECT_EQ(MessageOf(denied), "There were headers present in the request which were not signed");
  ASSERT_FALSE(denied.ok());
  // Named in request order, lower case, once each; the payload hash is
  // never named, and in a presigned URL x-amz-date is not exempt (AWS).
  ASSERT_EQ(denied.error().details.size(), 1u);
  EXPECT_EQ(denied.error().details[0],
            (S3ErrorDetail{"HeadersNotSigned", "x-amz-date, x-amz-acl"}));
}

TEST(SigV4Errors, ClockSkew) {
  RequestHead r = GetObjectExample();
  EXPECT_TRUE(VerifySigV4Header(r, ExampleConfig(kExampleTime + 900), ExampleLookup()).ok());
  EXPECT_TRUE(VerifySigV4Header(r, ExampleConfig(kExampleTime - 900), ExampleLookup()).ok());
  EXPECT_EQ(CodeOf(VerifySigV4Header(r, ExampleConfig(kExampleTime + 901), ExampleLookup())),
            S3ErrorCode::kRequestTimeTooSkewed);
  EXPECT_EQ(CodeOf(VerifySigV4Header(r, ExampleConfig(kExampleTime - 901), ExampleLookup())),
            S3ErrorCode::kRequestTimeTooSkewed);
}

TEST(SigV4Errors, RegionServiceTerminalAndDateOfTheScope) {
  // us-east-1 is always accepted, besides the configured region.
  EXPECT_TRUE(VerifySigV4Header(GetObjectExample(), ExampleConfig(kExampleTime, "eu-west-1"),
                                ExampleLookup())
                  .ok());
  RequestHead other = Signed("GET", "/b/k", {{"Host", "s3.example"}}, "ap-south-1");
  auto wrong = VerifySigV4Header(other, ExampleConfig(kExampleTime, "eu-west-1"), ExampleLookup());
  EXPECT_EQ(CodeOf(wrong), S3ErrorCode::kAuthorizationHeaderMalformed);
  EXPECT_EQ(MessageOf(wrong),
            "The authorization header is malformed; the region 'ap-south-1' is wrong; expecting "
            "'eu-west-1'");
  EXPECT_TRUE(
      VerifySigV4Header(other, ExampleConfig(kExampleTime, "ap-south-1"), ExampleLookup()).ok());

  auto with_credential = [](std::string credential) {
    RequestHead r = GetObjectExample();
    SetHeader(&r, "Authorization",
              "AWS4-HMAC-SHA256 Credential=" + credential +
                  ",SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=" +
                  std::string(64, '0'));
    return VerifySigV4Header(r, ExampleConfig(), ExampleLookup());
  };
  EXPECT_EQ(CodeOf(with_credential("AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/ec2/aws4_request")),
            S3ErrorCode::kAuthorizationHeaderMalformed);
  EXPECT_EQ(CodeOf(with_credential("AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws5_request")),
            S3ErrorCode::kAuthorizationHeaderMalformed);
  EXPECT_EQ(CodeOf(with_credential("AKIAIOSFODNN7EXAMPLE/20130523/us-east-1/s3/aws4_request")),
            S3ErrorCode::kAuthorizationHeaderMalformed);
  EXPECT_EQ(CodeOf(with_credential("AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3")),
            S3ErrorCode::kAuthorizationHeaderMalformed);
  EXPECT_EQ(CodeOf(with_credential("/20130524/us-east-1/s3/aws4_request")),
            S3ErrorCode::kAuthorizationHeaderMalformed);
}

TEST(SigV4Errors, UnknownKeyAndTamperedSignature) {
  RequestHead r = GetObjectExample();
  auto lookup_none = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
  EXPECT_EQ(CodeOf(VerifySigV4Header(r, ExampleConfig(), lookup_none)),
            S3ErrorCode::kInvalidAccessKeyId);
  auto wrong_secret = [](std::string_view) -> std::optional<std::string> { return "x"; };
  EXPECT_EQ(CodeOf(VerifySigV4Header(r, ExampleConfig(), wrong_secret)),
            S3ErrorCode::kSignatureDoesNotMatch);
  RequestHead tampered = r;
  SetHeader(&tampered, "Range", "bytes=0-10");
  EXPECT_EQ(CodeOf(VerifySigV4Header(tampered, ExampleConfig(), ExampleLookup())),
            S3ErrorCode::kSignatureDoesNotMatch);
  tampered = r;
  SetHeader(&tampered, "Authorization",
            ExampleAuthorization("host;range;x-amz-content-sha256;x-amz-date",
                                 "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb42"));
  EXPECT_EQ(CodeOf(VerifySigV4Header(tampered, ExampleConfig(), ExampleLookup())),
            S3ErrorCode::kSignatureDoesNotMatch);
  tampered = r;
  tampered.method = "HEAD";
  EXPECT_EQ(CodeOf(VerifySigV4Header(tampered, ExampleConfig(), ExampleLookup())),
            S3ErrorCode::kSignatureDoesNotMatch);
}

TEST(SigV4Errors, AuthorizationHeaderSyntax) {
  const std::string sig = "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41";
  const std::string cred = "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request";
  const std::string sh = "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date";
  auto verify = [](std::string authorization) {
    RequestHead r = GetObjectExample();
    SetHeader(&r, "Authorization", std::move(authorization));
    return VerifySigV4Header(r, ExampleConfig(), ExampleLookup());
  };
  // Spacing and order as clients send them.
  EXPECT_TRUE(verify("AWS4-HMAC-SHA256 " + cred + ", " + sh + ", Signature=" + sig).ok());
  EXPECT_TRUE(verify("AWS4-HMAC-SHA256  " + cred + " ,  " + sh + ",Signature=" + sig + " ").ok());
  EXPECT_TRUE(verify("AWS4-HMAC-SHA256 Signature=" + sig + "," + sh + "," + cred).ok());
  for (const std::string& bad : std::vector<std::string>{"AWS4-HMAC-SHA256", "AWS4-HMAC-SHA256 " + cred + "," + sh,
                          "AWS4-HMAC-SHA256 " + cred + "," + sh + ",Signature=" + sig + "," + sh,
                          "AWS4-HMAC-SHA256 " + cred + "," + sh + ",Signature=" + sig + ",Foo=1",
                          "AWS4-HMAC-SHA256 " + cred + "," + sh + ",Signature",
                          "AWS4-HMAC-SHA256," + cred + "," + sh + ",Signature=" + sig,
                          "AWS4-HMAC-SHA256 " + cred + ",SignedHeaders=host;;range,Signature=" + sig}) {
    EXPECT_EQ(CodeOf(verify(bad)), S3ErrorCode::kAuthorizationHeaderMalformed) << bad;
  }
}

TEST(SigV4Errors, ContentSha256Header) {
  RequestHead r = GetObjectExample();
  r.headers.erase(r.headers.begin() + 2);  // x-amz-content-sha256
  auto missing = VerifySigV4Header(r, ExampleConfig(), ExampleLookup());
  EXPECT_EQ(CodeOf(missing), S3ErrorCode::kInvalidRequest);
  EXPECT_EQ(MessageOf(missing), "Missing required header for this request: x-amz-content-sha256");
  for (const std::string& bad : std::vector<std::string>{"abc", "UNSIGNED", std::string(64, 'A'), "streaming-unsigned-payload-trailer"}) {
    RequestHead b = GetObjectExample();
    SetHeader(&b, "x-amz-content-sha256", bad);
    EXPECT_EQ(CodeOf(VerifySigV4Header(b, ExampleConfig(), ExampleLookup())),
              S3ErrorCode::kInvalidArgument)
        << bad;
  }
  RequestHead ecdsa = GetObjectExample();
  SetHeader(&ecdsa, "x-amz-content-sha256", "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD");
  EXPECT_EQ(CodeOf(VerifySigV4Header(ecdsa, ExampleConfig(), ExampleLookup())),
            S3ErrorCode::kNotImplemented);
  // Each accepted value maps to its mode.
  const std::pair<std::string, PayloadMode> modes[] = {
      {"UNSIGNED-PAYLOAD", PayloadMode::kUnsigned},
      {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD", PayloadMode::kStreamingSigned},
      {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER", PayloadMode::kStreamingSignedTrailer},
      {"STREAMING-UNSIGNED-PAYLOAD-TRAILER", PayloadMode::kStreamingUnsignedTrailer},
      {std::string(kEmptySha), PayloadMode::kSignedHex}};
  for (const auto& [value, mode] : modes) {
    RequestHead s = Signed("PUT", "/b/k", {{"Host", "h"}}, "us-east-1", kExampleTime, value);
    auto result = VerifySigV4Header(s, ExampleConfig(), ExampleLookup());
    ASSERT_TRUE(result.ok()) << value;
    EXPECT_EQ(result->mode, mode) << value;
  }
}

TEST(SigV4Errors, DateHeaders) {
  RequestHead r = GetObjectExample();
  r.headers.erase(r.headers.begin() + 3);  // x-amz-date
  auto no_date = VerifySigV4Header(r, ExampleConfig(), ExampleLookup());
  EXPECT_EQ(CodeOf(no_date), S3ErrorCode::kAccessDenied);
  RequestHead bad = GetObjectExample();
  SetHeader(&bad, "x-amz-date", "2013-05-24T00:00:00Z");
  EXPECT_EQ(CodeOf(VerifySigV4Header(bad, ExampleConfig(), ExampleLookup())),
            S3ErrorCode::kAccessDenied);
}

TEST(SigV4Errors, SignedHeadersRules) {
  // host must be signed.
  RequestHead no_host{"GET", "/b/k", {{"Host", "h"}}};
  SignV4(&no_host, {std::string(kAccessKey), std::string(kSecretKey), "us-east-1"}, kExampleTime);
  for (auto& [n, v] : no_host.headers) {
    if (n == "Authorization") {
      v.replace(v.find("SignedHeaders=host;"), 19, "SignedHeaders=");
    }
  }
  EXPECT_EQ(CodeOf(VerifySigV4Header(no_host, ExampleConfig(), ExampleLookup())),
            S3ErrorCode::kAuthorizationHeaderMalformed);
  // An x-amz-* header that is present but not signed.
  RequestHead extra = Signed("PUT", "/b/k", {{"Host", "h"}});
  extra.headers.emplace_back("x-amz-meta-added", "later");
  auto denied = VerifySigV4Header(extra, ExampleConfig(), ExampleLookup());
  EXPECT_EQ(CodeOf(denied), S3ErrorCode::kAccessDenied);
  // Other unsigned headers (User-Agent, Content-Length...) are fine.
  RequestHead ua = Signed("PUT", "/b/k", {{"Host", "h"}});
  ua.headers.emplace_back("User-Agent", "aws-cli/2");
  EXPECT_TRUE(VerifySigV4Header(ua, ExampleConfig(), ExampleLookup()).ok());
  // A signed header absent from the request does not verify.
  RequestHead absent = Signed("PUT", "/b/k", {{"Host", "h"}, {"Content-Type", "text/plain"}});
  absent.headers.erase(absent.headers.begin() + 1);
  EXPECT_EQ(CodeOf(VerifySigV4Header(absent, ExampleConfig(), ExampleLookup())),
            S3ErrorCode::kSignatureDoesNotMatch);
}

TEST(SigV4Errors, SecurityTokensAreRejected) {
  RequestHead r = Signed("GET", "/b/k", {{"Host", "h"}, {"x-amz-security-token", "tok"}});
  EXPECT_EQ(CodeOf(VerifySigV4Header(r, ExampleConfig(), ExampleLookup())),
            S3ErrorCode::kInvalidArgument);
  RequestHead q = PresignedExample();
  q.target += "&X-Amz-Security-Token=tok";
  EXPECT_EQ(CodeOf(VerifySigV4Query(q, ExampleConfig(), ExampleLookup())),
            S3ErrorCode::kInvalidArgument);
}

TEST(SigV4Errors, PresignedParameters) {
  auto verify_target = [](std::string target) {
    RequestHead r{"GET", std::move(target), {{"Host", "examplebucket.s3.amazonaws.com"}}};
    return VerifySigV4Query(r, ExampleConfig(), ExampleLookup());
  };
  const std::string base = PresignedExample().target;
  auto without = [&](std::string_view param) {
    std::string t = base;
    const size_t at = t.find(param);
    const size_t end = t.find('&', at);
    t.erase(at, end == std::string::npos ? std::string::npos : end - at + 1);
    return t;
  };
  for (std::string_view p : {"X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires",
                             "X-Amz-SignedHeaders", "X-Amz-Signature", "X-Amz-Algorithm"}) {
    EXPECT_EQ(CodeOf(verify_target(without(p))), S3ErrorCode::kAuthorizationQueryParametersError)
        << p;
  }
  auto with_expires = [&](std::string value) {
    std::string t = base;
    t.replace(t.find("X-Amz-Expires=86400"), 19, "X-Amz-Expires=" + value);
    return verify_target(t);
  };
  for (const std::string& bad : std::vector<std::string>{"0", "604801", "-1", "abc", ""}) {
    EXPECT_EQ(CodeOf(with_expires(bad)), S3ErrorCode::kAuthorizationQueryParametersError) << bad;
  }
  EXPECT_EQ(CodeOf(with_expires("604800")), S3ErrorCode::kSignatureDoesNotMatch);
  std::string algo = base;
  algo.replace(algo.find("AWS4-HMAC-SHA256"), 16, "AWS4-HMAC-SHA1");
  EXPECT_EQ(CodeOf(verify_target(algo)), S3ErrorCode::kAuthorizationQueryParametersError);
  std::string region = base;
  region.replace(region.find("us-east-1"), 9, "eu-west-3");
  auto wrong_region = verify_target(region);
  EXPECT_EQ(CodeOf(wrong_region), S3ErrorCode::kAuthorizationQueryParametersError);
  EXPECT_EQ(MessageOf(wrong_region),
            "Error parsing the X-Amz-Credential parameter; the region 'eu-west-3' is wrong; "
            "expecting 'us-east-1'");
  RequestHead unknown = PresignedExample();
  unknown.target.replace(unknown.target.find("AKIAIOSFODNN7EXAMPLE"), 20, "AKIAIOSFODNN7EXAMPLF");
  EXPECT_EQ(CodeOf(VerifySigV4Query(unknown, ExampleConfig(), ExampleLookup())),
            S3ErrorCode::kInvalidAccessKeyId);
}

}  // namespace
}  // namespace tessera::s3::auth
