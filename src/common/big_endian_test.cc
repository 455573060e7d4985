// Goal: the big-endian codec writes the most significant byte first (so
// byte order is numeric order) and reads back what it wrote.
#include "common/big_endian.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(BigEndian, MostSignificantByteFirst) {
  std::string out;
  AppendBigEndian32(&out, 0x01020304u);
  AppendBigEndian64(&out, 0x05060708090A0B0Cull);
  EXPECT_EQ(out, std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0A\x0B\x0C", 12));
  EXPECT_EQ(ReadBigEndian32(out), 0x01020304u);
  EXPECT_EQ(ReadBigEndian64(std::string_view(out).substr(4)), 0x05060708090A0B0Cull);
  char header[4];
  StoreBigEndian32(header, 0xFFEEDDCCu);
  EXPECT_EQ(ReadBigEndian32(std::string_view(header, 4)), 0xFFEEDDCCu);
}

TEST(BigEndian, ByteOrderIsNumericOrder) {
  for (uint64_t a : {0ull, 255ull, 256ull, 1ull << 40, ~0ull}) {
    for (uint64_t b : {0ull, 1ull, 65535ull, 1ull << 56, ~0ull}) {
      std::string ka, kb;
      AppendBigEndian64(&ka, a);
      AppendBigEndian64(&kb, b);
      EXPECT_EQ(a < b, ka < kb) << a << " vs " << b;
      EXPECT_EQ(ReadBigEndian64(ka), a);
    }
  }
}

}  // namespace
}  // namespace tessera
