// Goal: CRC-32C matches the standard check values (RFC 3720 test vectors).
#include "common/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera {
namespace {

TEST(Crc32c, StandardCheckValue) { EXPECT_EQ(Crc32c("123456789"), 0xE3069283u); }

TEST(Crc32c, Rfc3720Vectors) {
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
}

TEST(Crc32c, IncrementalEqualsWhole) {
  std::string data = "the quick brown fox jumps over the lazy dog, twice over";
  for (size_t cut = 0; cut <= data.size(); ++cut) {
    uint32_t crc = Crc32c(std::string_view(data).substr(0, cut));
    crc = Crc32c(std::string_view(data).substr(cut), crc);
    EXPECT_EQ(crc, Crc32c(data)) << cut;
  }
}

// Bit-at-a-time CRC-32C: the definition, independent of the fast paths.
uint32_t ReferenceCrc32c(std::string_view data) {
  uint32_t crc = ~0u;
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
  }
  return ~crc;
}

// `size` bytes from a linear congruential generator seeded with `seed`:
// arbitrary data, the same on every run.
std::string PseudoRandomBytes(size_t size, uint32_t seed) {
  std::string data(size, '\0');
  for (char& c : data) {
    seed = seed * 1103515245u + 12345u;
    c = static_cast<char>(seed >> 16);
  }
  return data;
}

// Goal: both paths (SSE 4.2 below 256 bytes; isa-l from there on, whichever
// kernel it picks for this CPU) agree with the definition for every length
// 0..300 and every start alignment, and chain across the threshold.
TEST(Crc32c, MatchesDefinitionAtEveryLengthAndAlignment) {
  const std::string data = PseudoRandomBytes(320, 12345);
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t length = 0; length <= 300; ++length) {
      const std::string_view piece = std::string_view(data).substr(offset, length);
      ASSERT_EQ(Crc32c(piece), ReferenceCrc32c(piece)) << offset << " " << length;
    }
  }
  const std::string_view all = std::string_view(data).substr(0, 300);
  for (size_t cut = 0; cut <= all.size(); ++cut) {
    ASSERT_EQ(Crc32c(all.substr(cut), Crc32c(all.substr(0, cut))), ReferenceCrc32c(all)) << cut;
  }
}

// Goal: long inputs (isa-l folds them in wide strides) agree with the
// definition around stride-sized lengths, at odd alignments, and when
// extending a non-zero CRC.
TEST(Crc32c, LongInputsMatchDefinition) {
  const std::string data = PseudoRandomBytes(100'000, 777);
  const std::string_view all(data);
  constexpr size_t kStripes = 3 * (8 << 10);
  for (size_t length : {kStripes - 1, kStripes, kStripes + 1, kStripes + 8, 2 * kStripes - 3,
                        2 * kStripes, 3 * kStripes + 4095, all.size() - 3}) {
    for (size_t offset : {size_t{0}, size_t{3}}) {
      const std::string_view piece = all.substr(offset, length);
      ASSERT_EQ(Crc32c(piece), ReferenceCrc32c(piece)) << offset << " " << length;
    }
  }
  const std::string_view head = all.substr(0, 1000);
  const std::string_view tail = all.substr(1000);
  EXPECT_EQ(Crc32c(tail, Crc32c(head)), ReferenceCrc32c(all));
}

}  // namespace
// Goal: combining the CRCs of two pieces equals the CRC of their
// concatenation, for empty, short and long second pieces.
TEST(Crc32c, CombineEqualsCrcOfConcatenation) {
  const std::string data = PseudoRandomBytes(300'000, 12345);
  const std::string_view all(data);
  for (size_t split : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{100}, size_t{4096},
                       size_t{65'537}, data.size() - 1, data.size()}) {
    const std::string_view a = all.substr(0, split);
    const std::string_view b = all.substr(split);
    EXPECT_EQ(Crc32cCombine(Crc32c(a), Crc32c(b), b.size()), Crc32c(all)) << "split " << split;
  }
  EXPECT_EQ(Crc32cCombine(Crc32c("1234"), Crc32c("56789"), 5), Crc32c("123456789"));
}

// Goal: the CRC of a suffix follows from the whole's CRC and the bytes
// before it, for every kind of split, including the empty ends.
TEST(Crc32c, SuffixCrcFollowsFromTheWholeAndItsHead) {
  const std::string data = PseudoRandomBytes(300'000, 777);
  const std::string_view all(data);
  const uint32_t whole = Crc32c(all);
  for (size_t offset : {size_t{0}, size_t{1}, size_t{37}, size_t{4096}, size_t{65'537},
                        data.size() - 1, data.size()}) {
    EXPECT_EQ(Crc32cOfSuffix(whole, all, offset), Crc32c(all.substr(offset))) << offset;
  }
  EXPECT_NE(Crc32cOfSuffix(whole ^ 1, all, 10), Crc32c(all.substr(10)));
}

}  // namespace tessera
