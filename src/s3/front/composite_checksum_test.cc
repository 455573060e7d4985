// Goal: composite multipart checksums match values computed independently
// (Python's zlib.crc32 / hashlib.sha256 over the concatenated raw part
// digests), and bad part values are refused.
#include "s3/front/composite_checksum.h"

#include <gtest/gtest.h>

namespace tessera::s3::front {
namespace {

using auth::ChecksumAlgorithm;

// Parts "hello" and "world". CRC32: 0x3610a686 and 0x3a771143; the composite
// is CRC32 of the 8 bytes 36 10 a6 86 3a 77 11 43, base64, then "-2".
TEST(CompositeChecksumTest, Crc32KnownVector) {
  auto value = CompositeChecksum(ChecksumAlgorithm::kCrc32, {"NhCmhg==", "OncRQw=="});
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, "wpn7tg==-2");
}

TEST(CompositeChecksumTest, Sha256KnownVector) {
  auto value = CompositeChecksum(ChecksumAlgorithm::kSha256,
                                 {"LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=",
                                  "SG6kYiTRu0+2gPNPfJrZao8k7Ii+c+qOWmxlJg6cuKc="});
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, "cwXbmyq8zXBsJW2z2X5f9I1nfP5NOlkEr7faDjlQ4eI=-2");
}

TEST(CompositeChecksumTest, PartChecksumsComputedHereAgree) {
  const std::string a = auth::Base64Encode(auth::ComputeChecksum(ChecksumAlgorithm::kCrc32, "hello"));
  const std::string b = auth::Base64Encode(auth::ComputeChecksum(ChecksumAlgorithm::kCrc32, "world"));
  EXPECT_EQ(a, "NhCmhg==");
  EXPECT_EQ(b, "OncRQw==");
  auto one = CompositeChecksum(ChecksumAlgorithm::kCrc32, {a});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, auth::Base64Encode(auth::ComputeChecksum(
                      ChecksumAlgorithm::kCrc32, std::string("\x36\x10\xa6\x86", 4))) + "-1");
}

TEST(CompositeChecksumTest, RefusesValuesOfTheWrongLength) {
  EXPECT_FALSE(CompositeChecksum(ChecksumAlgorithm::kCrc32, {"NhCmhg==", "AAAAAAAA"}).ok());
  EXPECT_FALSE(CompositeChecksum(ChecksumAlgorithm::kCrc32, {"not base64"}).ok());
}

TEST(CompositeChecksumTest, AlgorithmsAndShape) {
  EXPECT_TRUE(CompositeAlgorithm("CRC32"));
  EXPECT_TRUE(CompositeAlgorithm("crc32c"));
  EXPECT_TRUE(CompositeAlgorithm("SHA256"));
  EXPECT_FALSE(CompositeAlgorithm("CRC64NVME"));
  EXPECT_FALSE(CompositeAlgorithm("MD5"));
}

TEST(CompositeChecksumTest, AddsElementsBeforeTheClosingTag) {
  google::protobuf::RepeatedPtrField<pb::ObjectChecksum> checksums;
  pb::ObjectChecksum* c = checksums.Add();
  c->set_algorithm("CRC32");
  c->set_value("wpn7tg==-2");
  EXPECT_EQ(AddChecksumElements("<R><ETag>x</ETag></R>", "R", checksums),
            "<R><ETag>x</ETag><ChecksumCRC32>wpn7tg==-2</ChecksumCRC32>"
            "<ChecksumType>COMPOSITE</ChecksumType></R>");
  checksums.Clear();
  EXPECT_EQ(AddChecksumElements("<R></R>", "R", checksums), "<R></R>");
}

}  // namespace
}  // namespace tessera::s3::front
