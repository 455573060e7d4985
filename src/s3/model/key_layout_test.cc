// Goal: the hashed key layout's stored keys are a fixed format (pinned
// hashes), round-trip, keep 0x00 free, spread sequential keys, and the
// layout parser refuses every bad spelling with a message.
#include "s3/model/key_layout.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/limits.h"
#include "s3/model/s3_keys.h"

namespace tessera::s3::model {
namespace {

TEST(KeyLayoutTest, HashIsPinned) {
  // Part of the on-disk format: a change would move every existing key.
  EXPECT_EQ(ObjectKeyHash(""), 0xf52a15e9a9b5e89bull);
  EXPECT_EQ(ObjectKeyHash("a"), 0x02c0bdbf481420f8ull);
  EXPECT_EQ(ObjectKeyHash("2024-01-01/log-0001"), 0xe16bda24e821b919ull);
  EXPECT_EQ(HashRangeOf(KeyLayout{8}, "a"), 1);
  EXPECT_EQ(HashRangeOf(KeyLayout{8}, "photos/cat.jpg"), 4);
  EXPECT_EQ(HashRangeOf(KeyLayout{255}, "a"), 182);
}

TEST(KeyLayoutTest, OrderedStoresTheKeyItself) {
  const KeyLayout ordered;
  EXPECT_FALSE(ordered.hashed());
  EXPECT_EQ(StoredKey(ordered, "a/b"), "a/b");
  EXPECT_EQ(UserKey(ordered, "a/b"), "a/b");
}

TEST(KeyLayoutTest, HashedPrependsOneRangeByteAndRoundTrips) {
  for (const uint32_t n : {limits::kS3HashRangesMin, 8u, limits::kS3HashRangesMax}) {
    const KeyLayout layout{n};
    for (const std::string& key : std::vector<std::string>{"a", "2024-01-01/x", std::string(1024, 'z')}) {
      const std::string stored = StoredKey(layout, key);
      ASSERT_EQ(stored.size(), key.size() + 1);
      const uint8_t h = static_cast<uint8_t>(stored[0]);
      EXPECT_GE(h, 1) << "0x00 is kept for the bucket's own records";
      EXPECT_LE(h, n);
      EXPECT_EQ(h, HashRangeOf(layout, key));
      EXPECT_EQ(UserKey(layout, stored), key);
      EXPECT_EQ(stored, RangeStoredKey(h, key));
      // Every record of the key sorts after the bucket configuration record.
      EXPECT_GT(HeadKey(9, stored), BucketConfigKey(9));
    }
  }
}

TEST(KeyLayoutTest, SequentialKeysSpreadOverEveryRange) {
  const KeyLayout layout{8};
  std::map<uint8_t, int> counts;
  for (int i = 0; i < 800; ++i) {
    counts[HashRangeOf(layout, "2024-01-01/" + std::to_string(100000 + i))]++;
  }
  ASSERT_EQ(counts.size(), 8u);
  for (const auto& [range, count] : counts) {
    EXPECT_GT(count, 50) << "range " << int(range);
    EXPECT_LT(count, 150) << "range " << int(range);
  }
}

TEST(KeyLayoutTest, WithinARangeStoredOrderIsKeyOrder) {
  const KeyLayout layout{4};
  std::map<uint8_t, std::set<std::string>> by_range;
  for (int i = 0; i < 200; ++i) {
    const std::string key = "k" + std::to_string(i);
    by_range[HashRangeOf(layout, key)].insert(key);
  }
  for (const auto& [range, keys] : by_range) {
    std::string last;
    for (const std::string& key : keys) {
      const std::string stored = StoredKey(layout, key);
      EXPECT_LT(last, stored);
      last = stored;
    }
  }
}

TEST(KeyLayoutTest, ParsesLayoutsAndRefusesBadOnes) {
  EXPECT_EQ(ParseKeyLayout("ordered").value(), KeyLayout{});
  EXPECT_EQ(ParseKeyLayout("hashed:2").value(), KeyLayout{2});
  EXPECT_EQ(ParseKeyLayout("hashed:255").value(), KeyLayout{255});
  for (const char* bad : {"", "hashed", "hashed:", "hashed:1", "hashed:0", "hashed:256",
                          "hashed:-3", "hashed:8x", "hashed: 8", "Hashed:8", "range",
                          "hashed:99999999999"}) {
    auto parsed = ParseKeyLayout(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("2..255"), std::string::npos) << bad;
  }
  EXPECT_EQ(KeyLayoutName(KeyLayout{}), "ordered");
  EXPECT_EQ(KeyLayoutName(KeyLayout{16}), "hashed:16");
}

TEST(KeyLayoutTest, ValidatesDescriptorPairs) {
  EXPECT_TRUE(ValidateKeyLayout(pb::BUCKET_KEY_LAYOUT_ORDERED, 0).ok());
  EXPECT_FALSE(ValidateKeyLayout(pb::BUCKET_KEY_LAYOUT_ORDERED, 8).ok());
  EXPECT_TRUE(ValidateKeyLayout(pb::BUCKET_KEY_LAYOUT_HASHED, 8).ok());
  EXPECT_FALSE(ValidateKeyLayout(pb::BUCKET_KEY_LAYOUT_HASHED, 0).ok());
  EXPECT_FALSE(ValidateKeyLayout(pb::BUCKET_KEY_LAYOUT_HASHED, 1).ok());
  EXPECT_FALSE(ValidateKeyLayout(pb::BUCKET_KEY_LAYOUT_HASHED, 256).ok());
  EXPECT_FALSE(ValidateKeyLayout(static_cast<pb::BucketKeyLayout>(7), 0).ok());
  pb::BucketDescriptor d;
  EXPECT_FALSE(KeyLayoutOf(d).hashed());
  d.set_key_layout(pb::BUCKET_KEY_LAYOUT_HASHED);
  d.set_hash_ranges(8);
  EXPECT_EQ(KeyLayoutOf(d), KeyLayout{8});
}

}  // namespace
}  // namespace tessera::s3::model
