// Goal: x-amz-copy-source and x-amz-copy-source-range parse as AWS
// documents them (encoded keys, leading slash or not, versionId) and bad
// values answer the documented errors.
#include "s3/front/copy_source.h"

#include <gtest/gtest.h>

namespace tessera::s3::front {
namespace {

TEST(CopySourceTest, ParsesWithAndWithoutLeadingSlash) {
  for (const char* header : {"bucket/dir/a%20b%2Bc.txt", "/bucket/dir/a%20b%2Bc.txt"}) {
    auto s = ParseCopySource(header);
    ASSERT_TRUE(s.ok()) << header;
    EXPECT_EQ(s->bucket, "bucket");
    EXPECT_EQ(s->key, "dir/a b+c.txt");
    EXPECT_EQ(s->version_id, "");
  }
}

TEST(CopySourceTest, KeepsPlusAndParsesVersionId) {
  auto s = ParseCopySource("/b/k+1?versionId=0000abcd");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->key, "k+1");
  EXPECT_EQ(s->version_id, "0000abcd");
  auto utf8 = ParseCopySource("b/%E2%82%AC");
  ASSERT_TRUE(utf8.ok());
  EXPECT_EQ(utf8->key, "\xE2\x82\xAC");
}

TEST(CopySourceTest, RefusesBadSources) {
  for (const char* header : {"", "/", "bucket", "bucket/", "/bucket/", "/k%ZZ/x", "b/k?versionId=",
                             "b/k?other=1", "b/a%00b"}) {
    auto s = ParseCopySource(header);
    ASSERT_FALSE(s.ok()) << header;
    EXPECT_EQ(s.error().code, S3ErrorCode::kInvalidArgument) << header;
  }
}

TEST(CopyRangeTest, ParsesAndBounds) {
  auto whole = ParseCopyRange(std::nullopt, 10);
  ASSERT_TRUE(whole.ok());
  ASSERT_TRUE(whole->has_value());
  EXPECT_EQ((*whole)->first, 0u);
  EXPECT_EQ((*whole)->last, 9u);
  auto empty = ParseCopyRange(std::nullopt, 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->has_value());
  auto r = ParseCopyRange("bytes=2-5", 10);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->first, 2u);
  EXPECT_EQ((*r)->last, 5u);
  auto past = ParseCopyRange("bytes=2-10", 10);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().code, S3ErrorCode::kInvalidArgument);
  EXPECT_EQ(past.error().Message(), "Range specified is not valid for source object of size: 10");
  auto beyond = ParseCopyRange("bytes=10-20", 10);
  ASSERT_FALSE(beyond.ok());
  EXPECT_EQ(beyond.error().code, S3ErrorCode::kInvalidRequest);
  for (const char* bad : {"bytes=5-2", "bytes=-5", "bytes=3-", "2-5", "bytes=a-b", "bytes=1-2,4-5"}) {
    auto b = ParseCopyRange(bad, 10);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.error().code, S3ErrorCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace tessera::s3::front
