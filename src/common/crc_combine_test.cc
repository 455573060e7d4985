// Goal: CrcCombine gives the CRC of a concatenation for both polynomials in
// use (CRC-32, CRC-32C, CRC64NVME), for any split, including empty sides.
#include "common/crc_combine.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "common/crc32c.h"

namespace tessera {
namespace {

// The CRC's definition, bit by bit (initial and final inversion).
template <typename Word>
Word BitwiseCrc(Word polynomial, std::string_view data) {
  Word crc = ~Word{0};
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ polynomial : crc >> 1;
  }
  return ~crc;
}

// Goal: the reference CRC matches the published check values.
TEST(CrcCombine, ReferenceMatchesCheckValues) {
  EXPECT_EQ(BitwiseCrc(kCrc32Polynomial, "123456789"), 0xCBF43926u);
  EXPECT_EQ(BitwiseCrc(kCrc32cPolynomial, "123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(BitwiseCrc(kCrc64NvmePolynomial, "123456789"), 0xAE8B14860A799888ull);
}

template <typename Word>
void ExpectEverySplitCombines(Word polynomial) {
  std::string data;
  for (int i = 0; i < 300; ++i) data.push_back(static_cast<char>((i * 131 + 7) & 0xFF));
  const Word whole = BitwiseCrc(polynomial, data);
  for (size_t split = 0; split <= data.size(); split += 13) {
    const std::string_view a = std::string_view(data).substr(0, split);
    const std::string_view b = std::string_view(data).substr(split);
    EXPECT_EQ(CrcCombine(polynomial, BitwiseCrc(polynomial, a), BitwiseCrc(polynomial, b), b.size()),
              whole)
        << "polynomial " << polynomial << " split " << split;
  }
}

// Goal: every split of a text combines back to the CRC of the whole.
TEST(CrcCombine, EverySplitCombinesToTheWhole) {
  ExpectEverySplitCombines(kCrc32Polynomial);
  ExpectEverySplitCombines(kCrc32cPolynomial);
  ExpectEverySplitCombines(kCrc64NvmePolynomial);
}

// Goal: long right-hand sides (the size of real parts) combine correctly:
// a run of zero bytes has a CRC computable by the reference too.
TEST(CrcCombine, LongPartsCombine) {
  const std::string a = "part one";
  const std::string b(5 << 20, '\0');
  for (uint32_t polynomial : {kCrc32Polynomial, kCrc32cPolynomial}) {
    EXPECT_EQ(CrcCombine(polynomial, BitwiseCrc(polynomial, a), BitwiseCrc(polynomial, b), b.size()),
              BitwiseCrc(polynomial, a + b));
  }
  EXPECT_EQ(CrcCombine(kCrc64NvmePolynomial, BitwiseCrc(kCrc64NvmePolynomial, a),
                       BitwiseCrc(kCrc64NvmePolynomial, b), b.size()),
            BitwiseCrc(kCrc64NvmePolynomial, a + b));
}

}  // namespace
}  // namespace tessera
