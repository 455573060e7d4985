#include "s3/model/s3_keys.h"

#include <gtest/gtest.h>

#include "s3/model/version_id.h"

namespace tessera::s3::model {
namespace {

TEST(S3KeysTest, RecordsOfAKeySortBeforeKeysExtendingIt) {
  const std::string a_head = HeadKey(7, "a");
  const std::string a_version = VersionKey(7, "a", 3);
  const std::string a_end = ObjectEnd(7, "a");
  const std::string a_slash = HeadKey(7, "a/b");
  const std::string ab = HeadKey(7, "ab");
  EXPECT_LT(a_head, a_version);
  EXPECT_LT(a_version, a_end);
  EXPECT_LT(a_end, a_slash);
  EXPECT_LT(a_slash, ab);
  EXPECT_LT(ab, BucketPrefix(8));
}

TEST(S3KeysTest, DataRecordsSortAfterTheKeysOtherRecords) {
  EXPECT_LT(PartKey(7, "a", "u", 10'000), DataKey(7, "a", 9));
  EXPECT_LT(DataKey(7, "a", 9), DataKey(7, "a", 2));
  EXPECT_LT(DataKey(7, "a", 2), DataKey(7, "a", 0)) << "seq 0 (no versions) sorts last";
  EXPECT_LT(DataKey(7, "a", 0), ObjectEnd(7, "a"));
  const std::string data_key = DataKey(7, "a", 0);  // parsed views into it
  auto parsed = ParseObjectRecordKey(data_key);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->type, RecordType::kData);
  EXPECT_EQ(parsed->object_key, "a");
  EXPECT_EQ(~ReadBigEndian64(parsed->suffix), 0u);
}

TEST(S3KeysTest, NewerVersionsSortFirst) {
  EXPECT_LT(VersionKey(1, "k", 9), VersionKey(1, "k", 2));
}

TEST(S3KeysTest, ParseRoundTrip) {
  const std::string key = VersionKey(42, "dir/file.txt", 5);  // parsed views into it
  auto parsed = ParseObjectRecordKey(key);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->bucket_id, 42u);
  EXPECT_EQ(parsed->object_key, "dir/file.txt");
  EXPECT_EQ(parsed->type, RecordType::kVersion);
  EXPECT_EQ(ReadBigEndian64(parsed->suffix), ~uint64_t{5});
  EXPECT_FALSE(ParseObjectRecordKey(UsageKey(42)).has_value());
  EXPECT_FALSE(ParseObjectRecordKey(GcKey(42)).has_value());
  EXPECT_FALSE(ParseObjectRecordKey(BucketPrefix(1) + "nokeyend").has_value());
}

TEST(S3KeysTest, InternalRecordsSortBeforeEveryBucket) {
  EXPECT_LT(UsageKey(99), BucketPrefix(1));
  EXPECT_LT(GcKeysBegin(), GcKey(1));
  EXPECT_LT(GcKey(~uint64_t{0}), GcKeysEnd());
}

TEST(S3KeysTest, PrefixSuccessor) {
  EXPECT_EQ(PrefixSuccessor("ab"), "ac");
  EXPECT_EQ(PrefixSuccessor(std::string("a\xff", 2)), "b");
  EXPECT_EQ(PrefixSuccessor(std::string("\xff\xff", 2)), "");
  EXPECT_EQ(PrefixSuccessor(""), "");
}

TEST(VersionIdTest, RoundTrip) {
  const std::string id = FormatVersionId(12, 345);
  EXPECT_EQ(id.size(), 32u);
  EXPECT_EQ(ParseVersionSeq(id), 12u);
  EXPECT_FALSE(ParseVersionSeq("null").has_value());
  EXPECT_FALSE(ParseVersionSeq(std::string(32, 'g')).has_value());
  EXPECT_FALSE(ParseVersionSeq(FormatVersionId(0, 1)).has_value());
}

}  // namespace
}  // namespace tessera::s3::model
