// Goal: CombineFullObjectChecksum gives the base64 big-endian CRC of the
// concatenated parts for each full-object algorithm, and refuses other
// algorithms and malformed part values.
#include "s3/model/full_object_checksum.h"

#include <gtest/gtest.h>

namespace tessera::s3::model {
namespace {

// Goal: CRC32 of "a"*100 + "b"*100 from its parts (values from zlib).
TEST(FullObjectChecksum, Crc32OfTwoParts) {
  auto whole = CombineFullObjectChecksum("CRC32", {{"r3B6ZA==", 100}, {"JQFi2w==", 100}});
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(*whole, "0+vo5w==");
  auto one = CombineFullObjectChecksum("CRC32", {{"r3B6ZA==", 100}});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, "r3B6ZA==");
}

// Goal: "123456789" split as "1234" + "56789" gives each algorithm's check
// value (CRC-32C e3069283, CRC64NVME ae8b14860a799888).
TEST(FullObjectChecksum, CheckValuesFromSplitInput) {
  // Part values computed with the algorithms' definitions.
  auto crc32c = CombineFullObjectChecksum("CRC32C", {{"9jr07g==", 4}, {"g7Vl2A==", 5}});
  ASSERT_TRUE(crc32c.ok()) << crc32c.status().ToString();
  EXPECT_EQ(*crc32c, "4waSgw==");
  auto crc64 = CombineFullObjectChecksum("CRC64NVME", {{"KfXb5+L/cdQ=", 4}, {"+H3Ihxds5mc=", 5}});
  ASSERT_TRUE(crc64.ok()) << crc64.status().ToString();
  EXPECT_EQ(*crc64, "rosUhgp5mIg=");
}

// Goal: other algorithms and values of the wrong width are refused.
TEST(FullObjectChecksum, RefusesOtherAlgorithmsAndBadValues) {
  EXPECT_FALSE(IsFullObjectAlgorithm("SHA256"));
  EXPECT_TRUE(IsFullObjectAlgorithm("CRC64NVME"));
  EXPECT_EQ(CombineFullObjectChecksum("SHA256", {{"r3B6ZA==", 1}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(CombineFullObjectChecksum("CRC32", {{"not base64", 1}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(CombineFullObjectChecksum("CRC64NVME", {{"r3B6ZA==", 1}}).status().code(),
            StatusCode::kInvalidArgument);
}

// Goal: a stored checksum's type is read off its shape: "base64-n" is
// composite, anything else full-object.
TEST(ChecksumType, CompositeValuesEndInAPartCount) {
  EXPECT_TRUE(IsCompositeChecksum("wpn7tg==-2"));
  EXPECT_FALSE(IsCompositeChecksum("wpn7tg=="));
  EXPECT_FALSE(IsCompositeChecksum("abc-"));
  EXPECT_FALSE(IsCompositeChecksum("abc-2x"));
  EXPECT_EQ(ChecksumTypeOf("wpn7tg==-2"), "COMPOSITE");
  EXPECT_EQ(ChecksumTypeOf("wpn7tg=="), "FULL_OBJECT");
}

}  // namespace
}  // namespace tessera::s3::model
