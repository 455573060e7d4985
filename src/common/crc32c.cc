#include "common/crc32c.h"

#include <isa-l/crc.h>

#include <algorithm>

#include "common/crc_combine.h"

namespace tessera {

uint32_t Crc32c(std::string_view data, uint32_t crc) {
  // isa-l takes an int length and a non-const pointer (it only reads), and
  // neither inverts the running value on entry nor on exit.
  constexpr size_t kSliceBytesMax = size_t{1} << 30;
  auto* p = reinterpret_cast<unsigned char*>(const_cast<char*>(data.data()));
  size_t n = data.size();
  uint32_t c = ~crc;
  while (n > 0) {
    const size_t slice = std::min(n, kSliceBytesMax);
    c = crc32_iscsi(p, static_cast<int>(slice), c);
    p += slice;
    n -= slice;
  }
  return ~c;
}

uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b) {
  return CrcCombine(kCrc32cPolynomial, crc_a, crc_b, length_b);
}

}  // namespace tessera
