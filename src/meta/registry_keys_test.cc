// Goal: the registry's key encodings, name and key checks, the S3 table's
// even split points and the bucket-id range of a partition follow
// docs/formats/meta-keys.md.
#include "meta/registry_keys.h"

#include <gtest/gtest.h>

namespace tessera::meta {
namespace {

TEST(RegistryKeys, EncodingsAndPrefixes) {
  EXPECT_EQ(BucketKey("photos"), "b/photos");
  EXPECT_EQ(UserKey("admin"), "u/admin");
  EXPECT_EQ(AccessKeyKey("AKX"), "k/AKX");
  EXPECT_EQ(EncodeBucketId(0x0102030405060708ull), std::string("\x01\x02\x03\x04\x05\x06\x07\x08"));
  const std::string id_key = BucketIdKey(0xfedcba9876543210ull);
  EXPECT_EQ(id_key.size(), 12u);
  EXPECT_EQ(ParseBucketIdKey(id_key), 0xfedcba9876543210ull);
  EXPECT_FALSE(ParseBucketIdKey("bid/short"));
  EXPECT_FALSE(ParseBucketIdKey(BucketKey("12345678")));
  for (const std::string& k : {BucketKey("a"), id_key, UserKey("u"), AccessKeyKey("k")}) {
    EXPECT_TRUE(IsRegistryKey(k)) << k;
  }
  EXPECT_FALSE(IsRegistryKey("t/kv"));
  EXPECT_FALSE(IsRegistryKey("c/next_group_id"));
  EXPECT_FALSE(IsRegistryKey(std::string("p/kv\0", 5)));
}

TEST(RegistryKeys, BucketNames) {
  const std::string longest(63, 'a');
  for (const std::string& ok : {std::string("abc"), std::string("my-bucket.2024"),
                                std::string("0x0"), longest, std::string("1.2.3")}) {
    EXPECT_TRUE(ValidateBucketName(ok).ok()) << ok;
  }
  for (const char* bad : {"ab", "", "Upper", "under_score", "-lead", "trail-", ".dot", "a..b",
                          "192.168.1.1", "xn--abc", "sthree-x", "abc-s3alias", "abc--ol-s3",
                          "sp ace"}) {
    EXPECT_EQ(ValidateBucketName(bad).code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(ValidateBucketName(std::string(64, 'a')).ok());
}

TEST(RegistryKeys, UsersKeysRegions) {
  EXPECT_TRUE(ValidateUserName("admin").ok());
  EXPECT_TRUE(ValidateUserName("a.b@c+d=e,f_g-h").ok());
  EXPECT_FALSE(ValidateUserName("").ok());
  EXPECT_FALSE(ValidateUserName("a/b").ok());
  EXPECT_FALSE(ValidateUserName(std::string(65, 'a')).ok());
  EXPECT_TRUE(ValidateAccessKey("TK0123456789abcdef0123").ok());
  EXPECT_TRUE(ValidateAccessKey("AKABCDEFGHIJKLMNOPQR").ok());
  EXPECT_FALSE(ValidateAccessKey("").ok());
  EXPECT_FALSE(ValidateAccessKey("a b").ok());
  EXPECT_TRUE(ValidateSecretKey("0123456789abcdef").ok());
  EXPECT_TRUE(ValidateSecretKey("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY").ok());
  EXPECT_FALSE(ValidateSecretKey("short").ok());
  EXPECT_FALSE(ValidateSecretKey("0123456789abcdef with space").ok());
  EXPECT_TRUE(ValidateDisplayName("").ok());
  EXPECT_TRUE(ValidateDisplayName("Alice Smith (ops)").ok());
  EXPECT_FALSE(ValidateDisplayName("bad\nline").ok());
  EXPECT_FALSE(ValidateDisplayName(std::string(129, 'a')).ok());
  EXPECT_TRUE(ValidateEmail("").ok());
  EXPECT_TRUE(ValidateEmail("alice@example.com").ok());
  EXPECT_FALSE(ValidateEmail("alice").ok());
  EXPECT_FALSE(ValidateEmail("@example.com").ok());
  EXPECT_FALSE(ValidateEmail("alice@").ok());
  EXPECT_FALSE(ValidateEmail("a@b@c").ok());
  EXPECT_FALSE(ValidateEmail("a lice@example.com").ok());
  EXPECT_FALSE(ValidateEmail(std::string(250, 'a') + "@b.cd").ok());
  EXPECT_EQ(NormalizeEmail("Alice@Example.COM"), "alice@example.com");
  EXPECT_TRUE(ValidateRegion("us-east-1").ok());
  EXPECT_TRUE(ValidateRegion("").ok());
  EXPECT_FALSE(ValidateRegion("US_EAST").ok());
}

TEST(RegistryKeys, S3TableSplitPointsAreEvenEightByteIds) {
  const auto points = S3TableSplitPoints(8);
  ASSERT_EQ(points.size(), 7u);
  for (uint32_t k = 1; k < 8; ++k) {
    EXPECT_EQ(points[k - 1], EncodeBucketId(uint64_t{k} << 61)) << k;
  }
  EXPECT_TRUE(S3TableSplitPoints(1).empty());
  const auto thirds = S3TableSplitPoints(3);
  ASSERT_EQ(thirds.size(), 2u);
  EXPECT_EQ(thirds[0], EncodeBucketId(0x5555555555555555ull));
  EXPECT_EQ(thirds[1], EncodeBucketId(0xaaaaaaaaaaaaaaaaull));
}

std::optional<std::pair<uint64_t, uint64_t>> Ids(uint64_t first, uint64_t last) {
  return std::make_pair(first, last);
}

TEST(RegistryKeys, BucketIdRangeHoldsWholeBuckets) {
  // The first partition never holds the reserved id 0; the last is unbounded.
  EXPECT_EQ(BucketIdRange("", EncodeBucketId(1ull << 61)),
            Ids(1, (1ull << 61) - 1));
  EXPECT_EQ(BucketIdRange(EncodeBucketId(7ull << 61), ""),
            Ids(7ull << 61, UINT64_MAX));
  // Short (stripped) split points behave as their zero-padded 8 bytes.
  EXPECT_EQ(BucketIdRange("\x40", "\x80"), Ids(1ull << 62, (1ull << 63) - 1));
  // A split inside bucket 5's keys: bucket 5 lies in neither half wholly.
  const std::string inside = EncodeBucketId(5) + "photos/";
  EXPECT_EQ(BucketIdRange("", inside), Ids(1, 4));
  EXPECT_EQ(BucketIdRange(inside, ""), Ids(6, UINT64_MAX));
  // A range inside one bucket holds no whole bucket.
  EXPECT_FALSE(BucketIdRange(inside, EncodeBucketId(5) + "videos/"));
  EXPECT_FALSE(BucketIdRange("", EncodeBucketId(1)));  // only id 0
  EXPECT_FALSE(BucketIdRange(EncodeBucketId(UINT64_MAX) + "x", ""));
}

}  // namespace
}  // namespace tessera::meta
