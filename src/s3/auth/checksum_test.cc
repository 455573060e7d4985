// Goal: every checksum algorithm gives its published check value, runs
// incrementally, and travels in base64 exactly as S3 expects; declared
// checksums are verified with S3's error codes and messages.
#include "s3/auth/checksum.h"

#include <gtest/gtest.h>

#include "common/crc32c.h"

namespace tessera::s3::auth {
namespace {

std::string HexOf(ChecksumAlgorithm a, std::string_view data) {
  return HexEncode(ComputeChecksum(a, data));
}

TEST(Checksum, CatalogCheckValues) {
  // The CRC catalogue's check input "123456789", and the usual digests.
  EXPECT_EQ(HexOf(ChecksumAlgorithm::kCrc32, "123456789"), "cbf43926");
  EXPECT_EQ(HexOf(ChecksumAlgorithm::kCrc32c, "123456789"), "e3069283");
  EXPECT_EQ(HexOf(ChecksumAlgorithm::kCrc64Nvme, "123456789"), "ae8b14860a799888");
  EXPECT_EQ(HexOf(ChecksumAlgorithm::kSha1, "123456789"),
            "f7c3bc1d808e04732adf679965ccc34ca7ae3441");
  EXPECT_EQ(HexOf(ChecksumAlgorithm::kSha256, "123456789"),
            "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225");
  EXPECT_EQ(HexOf(ChecksumAlgorithm::kMd5, "123456789"), "25f9e794323b453885f5181f1b624d0b");
  EXPECT_EQ(HexOf(ChecksumAlgorithm::kCrc32, ""), "00000000");
  EXPECT_EQ(HexOf(ChecksumAlgorithm::kCrc64Nvme, ""), "0000000000000000");
}

TEST(Checksum, Crc32cIsTheCommonCastagnoliCrc) {
  // common/crc32c.h is the same function S3's x-amz-checksum-crc32c uses.
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(ComputeChecksum(ChecksumAlgorithm::kCrc32c, "123456789"), std::string("\xe3\x06\x92\x83"));
}

TEST(Checksum, S3HeaderValuesAreBase64OfBigEndianDigests) {
  // Values S3 and the AWS SDKs put on the wire for the body "Hello world".
  auto b64 = [](ChecksumAlgorithm a) { return Base64Encode(ComputeChecksum(a, "Hello world")); };
  EXPECT_EQ(b64(ChecksumAlgorithm::kCrc32), "i9aeUg==");
  EXPECT_EQ(b64(ChecksumAlgorithm::kCrc32c), "crUfeA==");
  EXPECT_EQ(b64(ChecksumAlgorithm::kSha1), "e1AsOh9IyGCa4hLN+2Od7jlnP14=");
  EXPECT_EQ(b64(ChecksumAlgorithm::kSha256), "ZOyIygCyaOW6GjVnihtTFtIS9PNmskdyMlNKiuyjfzw=");
  EXPECT_EQ(b64(ChecksumAlgorithm::kMd5), "PiWWCnnbxptnTNTsZ6csYg==");
}

// Goal: CRC32 (computed by isa-l, whichever kernel it picks for this CPU)
// agrees with the bit-at-a-time definition at every length 0..300, every
// start alignment, and for long inputs extended piece by piece.
TEST(Checksum, Crc32MatchesDefinitionAtEveryLengthAndAlignment) {
  auto reference = [](std::string_view data) {
    uint32_t crc = ~0u;
    for (unsigned char byte : data) {
      crc ^= byte;
      for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
    }
    return HexEncode(std::string{static_cast<char>(~crc >> 24), static_cast<char>(~crc >> 16),
                                 static_cast<char>(~crc >> 8), static_cast<char>(~crc)});
  };
  std::string data;
  uint32_t seed = 99;
  for (int i = 0; i < 70'000; ++i) {
    seed = seed * 1103515245u + 12345u;
    data.push_back(static_cast<char>(seed >> 16));
  }
  const std::string_view all(data);
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t length = 0; length <= 300; ++length) {
      const std::string_view piece = all.substr(offset, length);
      ASSERT_EQ(HexOf(ChecksumAlgorithm::kCrc32, piece), reference(piece)) << offset << " " << length;
    }
  }
  Checksummer pieces(ChecksumAlgorithm::kCrc32);
  for (size_t at = 0; at < all.size(); at += 4099) pieces.Update(all.substr(at, 4099));
  EXPECT_EQ(HexEncode(pieces.Finish()), reference(all));
}

TEST(Checksum, IncrementalEqualsWholeForEveryAlgorithm) {
  std::string data;
  for (int i = 0; i < 5000; ++i) data.push_back(static_cast<char>(i * 7 + 3));
  for (auto a : {ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c, ChecksumAlgorithm::kSha1,
                 ChecksumAlgorithm::kSha256, ChecksumAlgorithm::kMd5,
                 ChecksumAlgorithm::kCrc64Nvme}) {
    for (size_t cut : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{4999}, size_t{5000}}) {
      Checksummer c(a);
      c.Update(std::string_view(data).substr(0, cut));
      c.Update(std::string_view(data).substr(cut));
      EXPECT_EQ(c.Finish(), ComputeChecksum(a, data)) << ChecksumName(a) << " cut " << cut;
    }
    EXPECT_EQ(ComputeChecksum(a, data).size(), ChecksumDigestBytes(a));
  }
}

TEST(Checksum, NamesAndHeaderNames) {
  EXPECT_EQ(ChecksumFromHeaderName("x-amz-checksum-crc32"), ChecksumAlgorithm::kCrc32);
  EXPECT_EQ(ChecksumFromHeaderName("X-Amz-Checksum-CRC32C"), ChecksumAlgorithm::kCrc32c);
  EXPECT_EQ(ChecksumFromHeaderName("x-amz-checksum-sha1"), ChecksumAlgorithm::kSha1);
  EXPECT_EQ(ChecksumFromHeaderName("x-amz-checksum-sha256"), ChecksumAlgorithm::kSha256);
  EXPECT_EQ(ChecksumFromHeaderName("x-amz-checksum-crc64nvme"), ChecksumAlgorithm::kCrc64Nvme);
  EXPECT_EQ(ChecksumFromHeaderName("content-md5"), std::nullopt);
  EXPECT_EQ(ChecksumFromHeaderName("x-amz-checksum-md5"), std::nullopt);
  EXPECT_EQ(ChecksumFromAlgorithmValue("CRC32"), ChecksumAlgorithm::kCrc32);
  EXPECT_EQ(ChecksumFromAlgorithmValue("crc32c"), ChecksumAlgorithm::kCrc32c);
  EXPECT_EQ(ChecksumFromAlgorithmValue("SHA1"), ChecksumAlgorithm::kSha1);
  EXPECT_EQ(ChecksumFromAlgorithmValue("SHA256"), ChecksumAlgorithm::kSha256);
  EXPECT_EQ(ChecksumFromAlgorithmValue("MD5"), std::nullopt);
  EXPECT_EQ(ChecksumFromAlgorithmValue("CRC33"), std::nullopt);
  EXPECT_EQ(ChecksumHeaderName(ChecksumAlgorithm::kCrc32c), "x-amz-checksum-crc32c");
}

TEST(Base64, RoundTripsAndRejectsBadInput) {
  for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
    Result<std::string> back = Base64Decode(Base64Encode(s));
    ASSERT_TRUE(back.ok()) << s;
    EXPECT_EQ(*back, s);
  }
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_FALSE(Base64Decode("Zm8").ok());       // not a multiple of 4
  EXPECT_FALSE(Base64Decode("Zm9=Zm9v").ok());  // padding inside
  EXPECT_FALSE(Base64Decode("Zm-v").ok());      // URL alphabet
  EXPECT_FALSE(Base64Decode("Zm9").ok());
  EXPECT_FALSE(Base64Decode("Zm9=").ok());  // non-zero unused bits
  EXPECT_FALSE(Base64Decode("Zm9v====").ok());
  EXPECT_FALSE(Base64Decode("Zh==").ok());  // non-zero unused bits
}

TEST(Hex, LowercaseAndSha256Hex) {
  EXPECT_EQ(HexEncode(std::string("\x00\xab\xff", 3)), "00abff");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(VerifyChecksum, MatchMismatchAndInvalid) {
  const std::string crc = ComputeChecksum(ChecksumAlgorithm::kCrc32, "Hello world");
  EXPECT_TRUE(VerifyChecksum(ChecksumAlgorithm::kCrc32, "i9aeUg==", crc).ok());
  S3Status bad = VerifyChecksum(ChecksumAlgorithm::kCrc32, "AAAAAA==", crc);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, S3ErrorCode::kBadDigest);
  EXPECT_EQ(bad.error().Message(),
            "The CRC32 you specified did not match the calculated checksum.");
  S3Status sha = VerifyChecksum(ChecksumAlgorithm::kSha256, Base64Encode(std::string(32, 'x')),
                                ComputeChecksum(ChecksumAlgorithm::kSha256, "y"));
  EXPECT_EQ(sha.error().Message(),
            "The SHA256 you specified did not match the calculated checksum.");
  // Wrong length or not base64: InvalidRequest naming the header.
  S3Status invalid = VerifyChecksum(ChecksumAlgorithm::kCrc32c, "AAAA", crc);
  EXPECT_EQ(invalid.error().code, S3ErrorCode::kInvalidRequest);
  EXPECT_EQ(invalid.error().Message(), "Value for x-amz-checksum-crc32c header is invalid.");
  EXPECT_EQ(VerifyChecksum(ChecksumAlgorithm::kCrc32, "!!!!", crc).error().code,
            S3ErrorCode::kInvalidRequest);
  // Content-MD5 has its own codes.
  const std::string md5 = ComputeChecksum(ChecksumAlgorithm::kMd5, "Hello world");
  EXPECT_TRUE(VerifyChecksum(ChecksumAlgorithm::kMd5, "PiWWCnnbxptnTNTsZ6csYg==", md5).ok());
  EXPECT_EQ(VerifyChecksum(ChecksumAlgorithm::kMd5, "nope", md5).error().code,
            S3ErrorCode::kInvalidDigest);
  EXPECT_EQ(VerifyChecksum(ChecksumAlgorithm::kMd5, Base64Encode(std::string(16, '\0')), md5)
                .error()
                .code,
            S3ErrorCode::kBadDigest);
}

TEST(FindDeclaredChecksum, OneHeaderOnly) {
  auto none = FindDeclaredChecksum({{"Host", "h"}, {"x-amz-checksum-algorithm", "CRC32"},
                                    {"x-amz-checksum-type", "FULL_OBJECT"}});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto one = FindDeclaredChecksum({{"X-Amz-Checksum-Sha256", " abc= "}});
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ((*one)->algorithm, ChecksumAlgorithm::kSha256);
  EXPECT_EQ((*one)->value_base64, "abc=");
  auto two = FindDeclaredChecksum({{"x-amz-checksum-crc32", "a"}, {"x-amz-checksum-sha1", "b"}});
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.error().code, S3ErrorCode::kInvalidRequest);
  EXPECT_EQ(FindDeclaredChecksum({{"x-amz-checksum-md7", "a"}}).error().code,
            S3ErrorCode::kInvalidRequest);
}

}  // namespace
}  // namespace tessera::s3::auth
