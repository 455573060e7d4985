// Goal: a size split halves a partition's bytes and, for `_s3`, never cuts
// the records of one object or the partition-internal records apart.
#include "node/split_key.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "s3/model/key_layout.h"
#include "s3/model/s3_keys.h"

namespace tessera::node {
namespace {

namespace s3m = tessera::s3::model;

std::optional<std::string> CrossingOf(const std::vector<std::pair<std::string, uint64_t>>& rows) {
  uint64_t total = 0;
  for (const auto& [key, bytes] : rows) total += bytes;
  HalfBytesCursor cursor(total);
  for (const auto& [key, bytes] : rows) {
    if (cursor.Feed(key, bytes)) break;
  }
  return cursor.crossing_key();
}

TEST(HalfBytesCursor, PicksTheFirstRowWithHalfTheBytesBeforeIt) {
  EXPECT_EQ(CrossingOf({{"a", 10}, {"b", 10}, {"c", 10}, {"d", 10}}), "c");
  // Uneven rows: 60 of 100 bytes lie before "c", only 30 before "b".
  EXPECT_EQ(CrossingOf({{"a", 30}, {"b", 30}, {"c", 20}, {"d", 20}}), "c");
  EXPECT_EQ(CrossingOf({{"a", 90}, {"b", 5}, {"c", 5}}), "b");
}

TEST(HalfBytesCursor, NoCrossingWhenTheLastRowHoldsMostBytes) {
  EXPECT_EQ(CrossingOf({{"a", 1}, {"b", 100}}), std::nullopt);
  EXPECT_EQ(CrossingOf({{"a", 100}}), std::nullopt);
  EXPECT_EQ(CrossingOf({}), std::nullopt);
}

TEST(ChooseSplitKey, OrdinaryTableSplitsAtTheCrossingKeyInsideTheRange) {
  SplitKeyRules rules{"b", "m", false};
  EXPECT_EQ(ChooseSplitKey("f", rules), "f");
  EXPECT_EQ(ChooseSplitKey("b", rules), std::nullopt);  // the parent would be empty
  EXPECT_EQ(ChooseSplitKey("m", rules), std::nullopt);  // outside the range
  SplitKeyRules unbounded{"", "", false};
  EXPECT_EQ(ChooseSplitKey("zzz", unbounded), "zzz");
  EXPECT_EQ(ChooseSplitKey("", unbounded), std::nullopt);
}

TEST(ChooseSplitKey, S3RoundsDownToTheCrossingObjectsStart) {
  const SplitKeyRules rules{s3m::BucketPrefix(1), s3m::BucketPrefix(2), true};
  const std::string object = s3m::ObjectPrefix(1, "photos/b.jpg");
  for (const std::string& record :
       {s3m::HeadKey(1, "photos/b.jpg"), s3m::VersionKey(1, "photos/b.jpg", 7),
        s3m::DataKey(1, "photos/b.jpg", 7), s3m::UploadKey(1, "photos/b.jpg", "u1"),
        s3m::PartKey(1, "photos/b.jpg", "u1", 3)}) {
    EXPECT_EQ(ChooseSplitKey(record, rules), object);
  }
}

TEST(ChooseSplitKey, S3RoundsUpPastTheFirstObjectWhenItStartsTheRange) {
  const SplitKeyRules rules{s3m::ObjectPrefix(1, "a"), s3m::BucketPrefix(2), true};
  const auto key = ChooseSplitKey(s3m::VersionKey(1, "a", 3), rules);
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(*key, s3m::ObjectEnd(1, "a"));
  // Every record of "a" stays left, keys extending "a" go right.
  EXPECT_LT(s3m::DataKey(1, "a", 0), *key);
  EXPECT_GT(s3m::HeadKey(1, "a/b"), *key);
}

TEST(ChooseSplitKey, S3NeverSplitsInternalRecords) {
  const SplitKeyRules rules{"", "", true};
  EXPECT_EQ(ChooseSplitKey(s3m::UsageKey(5), rules), s3m::BucketPrefix(1));
  EXPECT_EQ(ChooseSplitKey(s3m::GcKey(12), rules), s3m::BucketPrefix(1));
  // A partition starting past bucket 0 whose crossing row is internal
  // cannot move the key past its start.
  const SplitKeyRules later{s3m::BucketPrefix(1), "", true};
  EXPECT_EQ(ChooseSplitKey(s3m::GcKey(12), later), std::nullopt);
}

TEST(SplitKeyAllowed, S3RefusesKeysInsideAnObjectsRecords) {
  const SplitKeyRules rules{"", "", true};
  EXPECT_TRUE(SplitKeyAllowed(s3m::ObjectPrefix(3, "k"), rules));
  // The op's routing key `B k` would stay left while the records go right.
  EXPECT_FALSE(SplitKeyAllowed(s3m::HeadKey(3, "k"), rules));
  EXPECT_FALSE(SplitKeyAllowed(s3m::ObjectPrefix(3, "k") + std::string("\0", 1), rules));
  EXPECT_TRUE(SplitKeyAllowed(s3m::ObjectEnd(3, "k"), rules));  // every record of k stays left
  EXPECT_FALSE(SplitKeyAllowed(s3m::VersionKey(3, "k", 1), rules));
  EXPECT_FALSE(SplitKeyAllowed(s3m::DataKey(3, "k", 0), rules));
  EXPECT_FALSE(SplitKeyAllowed(s3m::HeadKey(3, "k") + "x", rules));
  EXPECT_FALSE(SplitKeyAllowed(s3m::UsageKey(3), rules));
  EXPECT_TRUE(SplitKeyAllowed(std::string("\x01", 1), rules));
  // An ordinary table takes any key strictly inside the range.
  EXPECT_TRUE(SplitKeyAllowed(s3m::VersionKey(3, "k", 1), SplitKeyRules{"", "", false}));
}

TEST(SplitKeyAllowed, S3HashRangeBoundariesOfAHashedBucketAreSplitPoints) {
  // A hashed bucket stores key K as `B h K` (s3/model/key_layout.h): every
  // range start `B h` is an object boundary, and a size split inside a
  // range rounds to one of its objects as in an ordered bucket.
  const SplitKeyRules rules{"", "", true};
  const s3m::KeyLayout layout{8};
  for (uint8_t h = 1; h <= 8; ++h) {
    EXPECT_TRUE(SplitKeyAllowed(s3m::ObjectPrefix(3, s3m::RangeStoredKey(h, "")), rules)) << int(h);
  }
  const std::string stored = s3m::StoredKey(layout, "2024-01-01/a");
  EXPECT_EQ(ChooseSplitKey(s3m::VersionKey(3, stored, 2), SplitKeyRules{s3m::BucketPrefix(3), "", true}),
            s3m::ObjectPrefix(3, stored));
  EXPECT_FALSE(SplitKeyAllowed(s3m::HeadKey(3, stored), rules));
  // The configuration record `B 00 'c'` sorts before range 1.
  EXPECT_LT(s3m::BucketConfigKey(3), s3m::ObjectPrefix(3, s3m::RangeStoredKey(1, "")));
}

}  // namespace
}  // namespace tessera::node
