// Goal: meta keys round-trip, even splits cover the key space in order, and
// bad create requests are refused.
#include "meta/meta_keys.h"

#include <gtest/gtest.h>

namespace tessera::meta {
namespace {

TEST(MetaKeys, PartitionKeysRoundTripAndSortByStartKey) {
  const std::string start("a\0b", 3);
  auto parsed = ParsePartitionKey(PartitionKey("tbl", start));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->first, "tbl");
  EXPECT_EQ(parsed->second, start);
  EXPECT_LT(PartitionKey("tbl", ""), PartitionKey("tbl", "a"));
  EXPECT_FALSE(ParsePartitionKey(TableKey("tbl")));
  EXPECT_EQ(*ParseTableKey(TableKey("tbl")), "tbl");
  EXPECT_FALSE(ParseTableKey("t/"));
}

TEST(MetaKeys, CountersAreEightBytesBigEndian) {
  EXPECT_EQ(EncodeCounter(0x0102), std::string("\0\0\0\0\0\0\x01\x02", 8));
  EXPECT_EQ(*DecodeCounter(EncodeCounter(123456789012345ull)), 123456789012345ull);
  EXPECT_EQ(DecodeCounter("abc").status().code(), StatusCode::kCorruption);
}

TEST(MetaKeys, EvenSplitsAreAscendingAndEven) {
  EXPECT_TRUE(EvenSplitPoints(1).empty());
  EXPECT_EQ(EvenSplitPoints(2), (std::vector<std::string>{"\x80"}));
  EXPECT_EQ(EvenSplitPoints(4), (std::vector<std::string>{"\x40", "\x80", "\xc0"}));
  auto many = EvenSplitPoints(1000);
  ASSERT_EQ(many.size(), 999u);
  for (size_t i = 1; i < many.size(); ++i) EXPECT_LT(many[i - 1], many[i]);
  EXPECT_FALSE(many.front().empty());
}

TEST(MetaKeys, CreateRequestsAreChecked) {
  pb::CreateTableRequest r;
  r.set_partitions(3);
  EXPECT_EQ(SplitPointsOf(r)->size(), 2u);
  r.set_partitions(100000);
  EXPECT_EQ(SplitPointsOf(r).status().code(), StatusCode::kInvalidArgument);
  r.set_partitions(0);
  r.add_split_points("m");
  r.add_split_points("c");  // descending
  EXPECT_EQ(SplitPointsOf(r).status().code(), StatusCode::kInvalidArgument);
  r.clear_split_points();
  r.add_split_points("");
  EXPECT_EQ(SplitPointsOf(r).status().code(), StatusCode::kInvalidArgument);
  r.clear_split_points();
  r.add_split_points("c");
  r.set_partitions(5);  // disagrees with the split points
  EXPECT_EQ(SplitPointsOf(r).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(ValidateTableName("users-2024.v1_x").ok());
  EXPECT_FALSE(ValidateTableName("").ok());
  EXPECT_FALSE(ValidateTableName(std::string("a\0b", 3)).ok());
  EXPECT_FALSE(ValidateTableName("a/b").ok());
}

}  // namespace
}  // namespace tessera::meta
