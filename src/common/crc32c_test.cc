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

}  // namespace
}  // namespace tessera
