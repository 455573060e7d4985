// Goal: SigV2 verification matches the examples of AWS's "Signing and
// authenticating REST requests" page (header and query forms, virtual-hosted
// and path-style, sub-resources, repeated amz headers, URL-encoded unicode
// keys), and rejects skewed, expired, unknown-key and tampered requests.
#include "s3/auth/sigv2.h"

#include <gtest/gtest.h>

#include "s3/auth/amz_time.h"
#include "s3/auth/auth_test_util.h"

namespace tessera::s3::auth {
namespace {

using testing::ExampleLookup;
using testing::kAccessKey;
using testing::kSecretKey;

AuthConfig ConfigAt(int64_t now) {
  AuthConfig config;
  config.now_unix_s = now;
  return config;
}

// Tue, 27 Mar 2007 19:36:42 +0000, the first example's date.
constexpr int64_t kT0 = 1175024202;

RequestHead WithAuth(RequestHead r, std::string_view signature) {
  r.headers.emplace_back("Authorization",
                         "AWS " + std::string(kAccessKey) + ":" + std::string(signature));
  return r;
}

std::string MessageOf(const S3Result<AuthContext>& r) {
  return r.ok() ? "" : std::string(r.error().Message());
}

struct Example {
  const char* name;
  RequestHead request;
  const char* bucket;  // virtual-hosted bucket, "" for path-style
  const char* signature;
};

std::vector<Example> DocumentedExamples() {
  return {
      {"object GET",
       {"GET", "/photos/puppy.jpg",
        {{"Host", "awsexamplebucket1.us-west-1.s3.amazonaws.com"},
         {"Date", "Tue, 27 Mar 2007 19:36:42 +0000"}}},
       "awsexamplebucket1",
       "qgk2+6Sv9/oM7G3qLEjTH1a1l1g="},
      {"object PUT",
       {"PUT", "/photos/puppy.jpg",
        {{"Content-Type", "image/jpeg"},
         {"Content-Length", "94328"},
         {"Host", "awsexamplebucket1.s3.us-west-1.amazonaws.com"},
         {"Date", "Tue, 27 Mar 2007 21:15:45 +0000"}}},
       "awsexamplebucket1",
       "iqRzw+ileNPu1fhspnRs8nOjjIA="},
      {"list (query parameters that are not sub-resources)",
       {"GET", "/?prefix=photos&max-keys=50&marker=puppy",
        {{"User-Agent", "Mozilla/5.0"},
         {"Host", "awsexamplebucket1.s3.us-west-1.amazonaws.com"},
         {"Date", "Tue, 27 Mar 2007 19:42:41 +0000"}}},
       "awsexamplebucket1",
       "m0WP8eCtspQl5Ahe6L1SozdX9YA="},
      {"fetch ?acl",
       {"GET", "/?acl",
        {{"Host", "awsexamplebucket1.s3.us-west-1.amazonaws.com"},
         {"Date", "Tue, 27 Mar 2007 19:44:46 +0000"}}},
       "awsexamplebucket1",
       "82ZHiFIjc+WbcwFKGUVEQspPn+0="},
      {"delete, path-style, x-amz-date overrides Date",
       {"DELETE", "/awsexamplebucket1/photos/puppy.jpg",
        {{"User-Agent", "dotnet"},
         {"Host", "s3.us-west-1.amazonaws.com"},
         {"Date", "Tue, 27 Mar 2007 21:20:27 +0000"},
         {"x-amz-date", "Tue, 27 Mar 2007 21:20:26 +0000"}}},
       "",
       "Ri1hpB1zpS9pGqR7y8kuNFCl4sE="},
      {"upload with metadata and a repeated amz header (CNAME bucket)",
       {"PUT", "/db-backup.dat.gz",
        {{"User-Agent", "curl/7.15.5"},
         {"Host", "static.example.com:8080"},
         {"Date", "Tue, 27 Mar 2007 21:06:08 +0000"},
         {"x-amz-acl", "public-read"},
         {"content-type", "application/x-download"},
         {"Content-MD5", "4gJE4saaMU4BqNR0kLY+lw=="},
         {"X-Amz-Meta-ReviewedBy", "joe@example.com"},
         {"X-Amz-Meta-ReviewedBy", "jane@example.com"},
         {"X-Amz-Meta-FileChecksum", "0x02661779"},
         {"X-Amz-Meta-ChecksumAlgorithm", "crc32"},
         {"Content-Disposition", "attachment; filename=database.dat"},
         {"Content-Encoding", "gzip"},
         {"Content-Length", "5913339"}}},
       "static.example.com",
       "jtBQa0Aq+DkULFI8qrpwIjGEx0E="},
      {"list all buckets",
       {"GET", "/",
        {{"Host", "s3.us-west-1.amazonaws.com"}, {"Date", "Wed, 28 Mar 2007 01:29:59 +0000"}}},
       "",
       "qGdzdERIC03wnaRNKh6OqZehG9s="},
      {"unicode keys, URL-encoding taken literally (mixed case)",
       {"GET", "/dictionary/fran%C3%A7ais/pr%c3%a9f%c3%a8re",
        {{"Host", "s3.us-west-1.amazonaws.com"}, {"Date", "Wed, 28 Mar 2007 01:49:49 +0000"}}},
       "",
       "DNEZGsoieTZ92F3bUfSPQcbGmlM="},
      {"unicode keys, URL-encoding taken literally (upper case)",
       {"GET", "/dictionary/fran%C3%A7ais/pr%C3%A9f%C3%A8re",
        {{"Host", "s3.us-west-1.amazonaws.com"}, {"Date", "Wed, 28 Mar 2007 01:49:49 +0000"}}},
       "",
       "81VEw/Bc3GDt/k65Xrrk3AdfI4c="},
  };
}

TEST(SigV2Examples, HeaderAuthentication) {
  for (const Example& e : DocumentedExamples()) {
    RequestHead r = WithAuth(e.request, e.signature);
    // Each example is checked at its own time (the skew window is 15 min).
    const std::optional<int64_t> now = ParseHttpDate(*FindHeader(r.headers, "date"));
    ASSERT_TRUE(now.has_value()) << e.name;
    auto result = VerifySigV2Header(r, e.bucket, ConfigAt(*now), ExampleLookup());
    ASSERT_TRUE(result.ok()) << e.name << ": " << MessageOf(result);
    EXPECT_TRUE(result->sigv2);
    EXPECT_EQ(result->access_key, kAccessKey);
    EXPECT_EQ(result->mode, PayloadMode::kUnsigned);
  }
}

TEST(SigV2Examples, StringToSignOfTheUploadExample) {
  const Example e = DocumentedExamples()[5];
  EXPECT_EQ(SigV2StringToSign(e.request, e.bucket, "Tue, 27 Mar 2007 21:06:08 +0000"),
            "PUT\n4gJE4saaMU4BqNR0kLY+lw==\napplication/x-download\n"
            "Tue, 27 Mar 2007 21:06:08 +0000\n"
            "x-amz-acl:public-read\nx-amz-meta-checksumalgorithm:crc32\n"
            "x-amz-meta-filechecksum:0x02661779\n"
            "x-amz-meta-reviewedby:joe@example.com,jane@example.com\n"
            "/static.example.com/db-backup.dat.gz");
}

TEST(SigV2Examples, QueryStringAuthentication) {
  // The documented presigned GET (bucket johnsmith, Expires 1175139620).
  RequestHead r{"GET",
                "/photos/puppy.jpg?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature="
                "NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D&Expires=1175139620",
                {{"Host", "johnsmith.s3.amazonaws.com"}}};
  auto ok = VerifySigV2Query(r, "johnsmith", ConfigAt(1175139620), ExampleLookup());
  ASSERT_TRUE(ok.ok()) << MessageOf(ok);
  EXPECT_TRUE(ok->presigned && ok->sigv2);
  // Path-style, the same resource.
  RequestHead path_style = r;
  path_style.target = "/johnsmith" + r.target;
  EXPECT_TRUE(VerifySigV2Query(path_style, "", ConfigAt(1175139620), ExampleLookup()).ok());
  auto expired = VerifySigV2Query(r, "johnsmith", ConfigAt(1175139621), ExampleLookup());
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(expired.error().code, S3ErrorCode::kAccessDenied);
  EXPECT_EQ(MessageOf(expired), "Request has expired");
  auto other_bucket = VerifySigV2Query(r, "janesmith", ConfigAt(1175139620), ExampleLookup());
  EXPECT_EQ(other_bucket.error().code, S3ErrorCode::kSignatureDoesNotMatch);
}

TEST(SigV2, SubResourcesAreSortedAndSigned) {
  RequestHead r{"GET",
                "/b/k?versionId=3&uploadId=x%2By&partNumber=2&max-parts=5&response-content-type="
                "text%2Fplain&acl",
                {{"Date", "Tue, 27 Mar 2007 19:36:42 +0000"}}};
  EXPECT_EQ(SigV2StringToSign(r, "", "D"),
            "GET\n\n\nD\n/b/k?acl&partNumber=2&response-content-type=text/plain&uploadId=x+y&"
            "versionId=3");
  // botocore's later additions count too.
  EXPECT_EQ(SigV2StringToSign(RequestHead{"PUT", "/b?object-lock&x=1&accelerate", {}}, "", "D"),
            "PUT\n\n\nD\n/b?accelerate&object-lock");
  SignV2(&r, "", kAccessKey, kSecretKey);
  EXPECT_TRUE(VerifySigV2Header(r, "", ConfigAt(kT0), ExampleLookup()).ok());
  // A sub-resource changed after signing breaks the signature; a plain
  // parameter does not take part.
  RequestHead changed = r;
  changed.target.replace(changed.target.find("versionId=3"), 11, "versionId=4");
  EXPECT_EQ(VerifySigV2Header(changed, "", ConfigAt(kT0), ExampleLookup()).error().code,
            S3ErrorCode::kSignatureDoesNotMatch);
  RequestHead plain = r;
  plain.target.replace(plain.target.find("max-parts=5"), 11, "max-parts=6");
  EXPECT_TRUE(VerifySigV2Header(plain, "", ConfigAt(kT0), ExampleLookup()).ok());
}

// Goal: a sub-resource is signed under the name and value it is routed by.
// Appending a percent-encoded sub-resource name (%76ersionId, %74agging,
// %75ploadId) to a presigned URL, or turning an encoded '+' into a raw one
// (routed as a space), breaks the signature instead of reaching another
// version, sub-resource or upload.
TEST(SigV2, SubResourcesAreSignedAsRouted) {
  RequestHead r{"GET", "/k?uploadId=a%2Bb", {}};
  RequestHead presigned = r;
  presigned.target = PresignV2(r, "bucket", kAccessKey, kSecretKey, kT0 + 60);
  ASSERT_TRUE(VerifySigV2Query(presigned, "bucket", ConfigAt(kT0), ExampleLookup()).ok());
  for (const std::string extra : {"&%76ersionId=old", "&%74agging", "&%75ploadId=x", "&version%49d=1",
                                  "&%76ersionId", "&versionId=old"}) {
    RequestHead tampered = presigned;
    tampered.target += extra;
    auto verified = VerifySigV2Query(tampered, "bucket", ConfigAt(kT0), ExampleLookup());
    ASSERT_FALSE(verified.ok()) << extra;
    EXPECT_EQ(verified.error().code, S3ErrorCode::kSignatureDoesNotMatch) << extra;
  }
  RequestHead plus = presigned;
  plus.target.replace(plus.target.find("a%2Bb"), 5, "a+b");
  EXPECT_EQ(VerifySigV2Query(plus, "bucket", ConfigAt(kT0), ExampleLookup()).error().code,
            S3ErrorCode::kSignatureDoesNotMatch);
  EXPECT_EQ(SigV2StringToSign(RequestHead{"GET", "/k?%76ersionId=1&%61cl&x+y=2", {}}, "b", "D"),
            "GET\n\n\nD\n/b/k?acl&versionId=1");
}

// Goal: a presigned URL valid for more than a week (SigV4's bound) is
// refused, so a leaked one cannot grant access for years; a week is fine.
TEST(SigV2, PresignedExpiryIsAtMostAWeekAway) {
  RequestHead r{"GET", "/k", {}};
  RequestHead week = r;
  week.target = PresignV2(r, "bucket", kAccessKey, kSecretKey, kT0 + 604800);
  EXPECT_TRUE(VerifySigV2Query(week, "bucket", ConfigAt(kT0), ExampleLookup()).ok());
  RequestHead decade = r;
  decade.target = PresignV2(r, "bucket", kAccessKey, kSecretKey, kT0 + 604801);
  auto refused = VerifySigV2Query(decade, "bucket", ConfigAt(kT0), ExampleLookup());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, S3ErrorCode::kAccessDenied);
}

TEST(SigV2, PresignRoundTrip) {
  RequestHead r{"GET", "/k%20with%20space?response-content-disposition=attachment", {}};
  RequestHead presigned = r;
  presigned.target = PresignV2(r, "bucket", kAccessKey, kSecretKey, kT0 + 60);
  EXPECT_TRUE(VerifySigV2Query(presigned, "bucket", ConfigAt(kT0), ExampleLookup()).ok());
  EXPECT_EQ(VerifySigV2Query(presigned, "bucket", ConfigAt(kT0 + 61), ExampleLookup())
                .error()
                .code,
            S3ErrorCode::kAccessDenied);
}

TEST(SigV2Errors, HeaderForms) {
  const Example e = DocumentedExamples()[0];
  auto verify = [&](std::string authorization, int64_t now = kT0) {
    RequestHead r = e.request;
    r.headers.emplace_back("Authorization", std::move(authorization));
    return VerifySigV2Header(r, e.bucket, ConfigAt(now), ExampleLookup());
  };
  EXPECT_TRUE(verify("AWS AKIAIOSFODNN7EXAMPLE:qgk2+6Sv9/oM7G3qLEjTH1a1l1g=").ok());
  for (std::string bad : {"AWS ", "AWS AKIAIOSFODNN7EXAMPLE", "AWS :sig", "AWS AK:"}) {
    auto r = verify(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, S3ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(verify("AWS AKIAIOSFODNN7EXAMPLE:qgk2+6Sv9/oM7G3qLEjTH1a1l1h=").error().code,
            S3ErrorCode::kSignatureDoesNotMatch);
  EXPECT_EQ(verify("AWS AKIAUNKNOWN:qgk2+6Sv9/oM7G3qLEjTH1a1l1g=").error().code,
            S3ErrorCode::kInvalidAccessKeyId);
  EXPECT_EQ(verify("AWS AKIAIOSFODNN7EXAMPLE:qgk2+6Sv9/oM7G3qLEjTH1a1l1g=", kT0 + 901)
                .error()
                .code,
            S3ErrorCode::kRequestTimeTooSkewed);
  EXPECT_TRUE(verify("AWS AKIAIOSFODNN7EXAMPLE:qgk2+6Sv9/oM7G3qLEjTH1a1l1g=", kT0 - 900).ok());
  RequestHead no_date{"GET", "/x", {{"Authorization", "AWS AKIAIOSFODNN7EXAMPLE:abc="}}};
  EXPECT_EQ(VerifySigV2Header(no_date, "", ConfigAt(kT0), ExampleLookup()).error().code,
            S3ErrorCode::kAccessDenied);
}

// Goal: a Date with any numeric zone (what `date -R` sends outside UTC,
// and botocore's "-0000") is read as the instant it names and signs; a
// date before the epoch is invalid (AccessDenied), one far ahead skewed.
TEST(SigV2Dates, NumericZonesAndDatesOutOfRange) {
  for (const char* same : {"Tue, 27 Mar 2007 19:36:42 +0000", "Tue, 27 Mar 2007 19:36:42 -0000",
                           "Wed, 28 Mar 2007 03:36:42 +0800", "Tue, 27 Mar 2007 14:06:42 -0530",
                           "Tue, 27 Mar 2007 19:36:42 GMT", "Tue, 27 Mar 2007 19:36:42 UTC"}) {
    EXPECT_EQ(ParseHttpDate(same), std::optional<int64_t>(kT0)) << same;
  }
  for (const char* bad : {"Tue, 27 Mar 2007 19:36:42 +2400", "Tue, 27 Mar 2007 19:36:42 +0860",
                          "Tue, 27 Mar 2007 19:36:42 +08", "Tue, 27 Mar 2007 19:36:42 0800",
                          "Tue, 27 Mar 2007 19:36:42 PST"}) {
    EXPECT_EQ(ParseHttpDate(bad), std::nullopt) << bad;
  }

  const auto verify_at_t0 = [](std::string date) {
    RequestHead r{"PUT", "/bucket/key", {{"Host", "s3.example"}, {"Date", std::move(date)}}};
    SignV2(&r, "", kAccessKey, kSecretKey);
    return VerifySigV2Header(r, "", ConfigAt(kT0), ExampleLookup());
  };
  const auto east = verify_at_t0("Wed, 28 Mar 2007 03:36:42 +0800");
  EXPECT_TRUE(east.ok()) << MessageOf(east);
  EXPECT_TRUE(verify_at_t0("Tue, 27 Mar 2007 19:36:42 -0000").ok());
  EXPECT_EQ(verify_at_t0("Tue, 27 Mar 2007 19:36:42 +0100").error().code,
            S3ErrorCode::kRequestTimeTooSkewed);  // an hour early
  EXPECT_EQ(verify_at_t0("Fri, 07 Jul 1950 21:53:04 GMT").error().code, S3ErrorCode::kAccessDenied);
  EXPECT_EQ(verify_at_t0("Wed, 07 Jul 9999 21:53:04 GMT").error().code,
            S3ErrorCode::kRequestTimeTooSkewed);
}

TEST(SigV2Errors, QueryForms) {
  auto verify = [](std::string target) {
    RequestHead r{"GET", std::move(target), {}};
    return VerifySigV2Query(r, "", ConfigAt(kT0), ExampleLookup());
  };
  EXPECT_EQ(verify("/b/k?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=1175139620").error().code,
            S3ErrorCode::kAccessDenied);
  EXPECT_EQ(verify("/b/k?Signature=x&Expires=1175139620").error().code,
            S3ErrorCode::kAccessDenied);
  EXPECT_EQ(verify("/b/k?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=x").error().code,
            S3ErrorCode::kAccessDenied);
  EXPECT_EQ(verify("/b/k?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=x&Expires=soon")
                .error()
                .code,
            S3ErrorCode::kAccessDenied);
  EXPECT_EQ(verify("/b/k?AWSAccessKeyId=NOBODY&Signature=x&Expires=1175139620").error().code,
            S3ErrorCode::kInvalidAccessKeyId);
  EXPECT_EQ(verify("/b/k?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=x&Expires=1175139620")
                .error()
                .code,
            S3ErrorCode::kSignatureDoesNotMatch);
}

}  // namespace
}  // namespace tessera::s3::auth
