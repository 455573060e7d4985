// Goal: every AWS bucket-naming rule and object-key rule accepts what AWS
// accepts and rejects the rest with the code AWS answers.
#include "s3/protocol/names.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera::s3 {
namespace {

S3ErrorCode BucketCode(std::string_view name) {
  const S3Status status = ValidateBucketName(name);
  EXPECT_FALSE(status.ok()) << name;
  return status.ok() ? S3ErrorCode::kInternalError : status.error().code;
}

TEST(BucketName, AcceptsValidNames) {
  for (std::string_view name :
       {"abc", "my-bucket", "my.bucket.name", "a1b2c3", "123", "0bucket9", "xn-ok",
        "bucket-s3alias-not-suffix", "a-b-c", "docexamplebucket1", "192.168.5.4a",
        "1.2.3", "sthree", "amzn-s3-demo", "x.mrap.y"}) {
    EXPECT_TRUE(ValidateBucketName(name).ok()) << name;
  }
  EXPECT_TRUE(ValidateBucketName(std::string(63, 'a')).ok());
}

TEST(BucketName, RejectsLength) {
  EXPECT_EQ(BucketCode(""), S3ErrorCode::kInvalidBucketName);
  EXPECT_EQ(BucketCode("ab"), S3ErrorCode::kInvalidBucketName);
  EXPECT_EQ(BucketCode(std::string(64, 'a')), S3ErrorCode::kInvalidBucketName);
}

TEST(BucketName, RejectsCharacters) {
  for (std::string_view name : {"MyBucket", "my_bucket", "my bucket", "bücket", "a/b/c",
                                "bucket!", "ab:c"}) {
    EXPECT_EQ(BucketCode(name), S3ErrorCode::kInvalidBucketName) << name;
  }
}

TEST(BucketName, RejectsBadEnds) {
  for (std::string_view name : {"-bucket", "bucket-", ".bucket", "bucket."}) {
    EXPECT_EQ(BucketCode(name), S3ErrorCode::kInvalidBucketName) << name;
  }
}

TEST(BucketName, RejectsAdjacentDotsAndDotDash) {
  for (std::string_view name : {"my..bucket", "my.-bucket", "my-.bucket"}) {
    EXPECT_EQ(BucketCode(name), S3ErrorCode::kInvalidBucketName) << name;
  }
}

TEST(BucketName, RejectsIpAddressShape) {
  for (std::string_view name : {"192.168.5.4", "10.0.0.1", "999.999.999.999"}) {
    EXPECT_EQ(BucketCode(name), S3ErrorCode::kInvalidBucketName) << name;
  }
}

TEST(BucketName, RejectsReservedPrefixesAndSuffixes) {
  for (std::string_view name :
       {"xn--bucket", "sthree-bucket", "sthree-configurator", "amzn-s3-demo-bucket",
        "bucket-s3alias", "bucket--ol-s3", "bucket.mrap", "bucket--x-s3", "bucket--table-s3"}) {
    EXPECT_EQ(BucketCode(name), S3ErrorCode::kInvalidBucketName) << name;
  }
}

TEST(BucketName, MessageNamesTheRule) {
  const S3Status status = ValidateBucketName("192.168.5.4");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().Message().find("IP address"), std::string_view::npos);
}

TEST(ObjectKey, AcceptsOrdinaryAndUnusualKeys) {
  for (std::string_view key : {"a", "photos/2006/January/sample.jpg", "a b+c%20d", "한글/x.txt",
                               "emoji-\xF0\x9F\x98\x80", "\n", "//double//slash", "~!@#$^&*()"}) {
    EXPECT_TRUE(ValidateObjectKey(key).ok()) << key;
  }
  EXPECT_TRUE(ValidateObjectKey(std::string(1024, 'k')).ok());
}

TEST(ObjectKey, RejectsEmptyAndLong) {
  const S3Status empty = ValidateObjectKey("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, S3ErrorCode::kInvalidArgument);
  const S3Status long_key = ValidateObjectKey(std::string(1025, 'k'));
  ASSERT_FALSE(long_key.ok());
  EXPECT_EQ(long_key.error().code, S3ErrorCode::kKeyTooLongError);
  // The limit is in bytes: 342 three-byte characters are 1026 bytes.
  std::string wide;
  for (int i = 0; i < 342; ++i) wide += "\xE2\x82\xAC";
  EXPECT_EQ(ValidateObjectKey(wide).error().code, S3ErrorCode::kKeyTooLongError);
}

TEST(ObjectKey, RejectsInvalidUtf8AsInvalidUri) {
  for (std::string_view key : {"\xFF", "a\xC3", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                               "\x80", "ok\xE2\x82"}) {
    const S3Status status = ValidateObjectKey(key);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, S3ErrorCode::kInvalidURI);
  }
}

TEST(ObjectKey, RejectsNul) {
  const S3Status status = ValidateObjectKey(std::string_view("a\0b", 3));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, S3ErrorCode::kInvalidArgument);
}

TEST(Utf8, Boundaries) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("\x7F"));
  EXPECT_TRUE(IsValidUtf8("\xC2\x80"));          // U+0080
  EXPECT_TRUE(IsValidUtf8("\xEF\xBF\xBF"));      // U+FFFF
  EXPECT_TRUE(IsValidUtf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xC1\xBF"));         // overlong
  EXPECT_FALSE(IsValidUtf8("\xE0\x9F\xBF"));     // overlong
  EXPECT_FALSE(IsValidUtf8("\xF0\x8F\xBF\xBF")); // overlong
  EXPECT_FALSE(IsValidUtf8("\xF8\x88\x80\x80\x80"));
}

S3Status FailIfEmpty(std::string_view key) {
  TESSERA_S3_RETURN_IF_ERROR(ValidateObjectKey(key));
  return S3Status::Ok();
}

S3Result<size_t> LengthIfValid(std::string_view key) {
  TESSERA_S3_RETURN_IF_ERROR(ValidateObjectKey(key));
  return key.size();
}

TEST(S3Result, ValueErrorAndPropagation) {
  S3Result<int> value = 7;
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, 7);
  S3Result<int> error = S3ErrorCode::kNoSuchKey;
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.error().code, S3ErrorCode::kNoSuchKey);
  EXPECT_EQ(error.error().Message(), "The specified key does not exist.");
  EXPECT_TRUE(S3Status::Ok().ok());
  EXPECT_TRUE(FailIfEmpty("k").ok());
  EXPECT_EQ(FailIfEmpty("").error().code, S3ErrorCode::kInvalidArgument);
  EXPECT_EQ(*LengthIfValid("abc"), 3u);
  EXPECT_EQ(LengthIfValid(std::string(2000, 'k')).error().code, S3ErrorCode::kKeyTooLongError);
}

}  // namespace
}  // namespace tessera::s3

namespace tessera::s3 {
namespace {

TEST(CanonicalUserId, SixtyFourHexDigitsAFunctionOfTheName) {
  const std::string alice = CanonicalUserId("alice");
  EXPECT_EQ(alice.size(), 64u);
  EXPECT_EQ(alice.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(alice, CanonicalUserId("alice"));
  EXPECT_NE(alice, CanonicalUserId("bob"));
  EXPECT_NE(alice, CanonicalUserId("Alice"));
  // Pinned: ids are stored and granted to, so the function may never change.
  EXPECT_EQ(CanonicalUserId("admin"), "9dc3528bdf24f287983ff9b146673263515cb3ec8e8d2423e98586e6fb12c1bf");
}

}  // namespace
}  // namespace tessera::s3
