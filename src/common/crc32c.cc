#include "common/crc32c.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <cstring>

#include "common/check.h"
#include "common/crc_combine.h"

namespace tessera {
namespace {

// Below this many bytes the SSE 4.2 crc32 instruction, one word at a time,
// beats isa-l's folding kernels as the node really calls them (D48): a
// state record or a small frame checksummed between other work, where
// isa-l's 512-bit setup costs far more than the bytes.
constexpr size_t kSmallBytesMax = 256;

#if defined(__x86_64__)
bool HasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}

// Extends the raw (uninverted) running value `c` with `n` bytes at `p`.
__attribute__((target("sse4.2"))) uint32_t SmallCrc32c(const unsigned char* p, size_t n,
                                                        uint32_t c) {
  uint64_t wide = c;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    wide = __builtin_ia32_crc32di(wide, word);
  }
  auto narrow = static_cast<uint32_t>(wide);
  for (; n > 0; ++p, --n) narrow = __builtin_ia32_crc32qi(narrow, *p);
  return narrow;
}
#endif

}  // namespace

uint32_t Crc32c(std::string_view data, uint32_t crc) {
  // isa-l takes an int length and a non-const pointer (it only reads), and
  // neither inverts the running value on entry nor on exit.
  constexpr size_t kSliceBytesMax = size_t{1} << 30;
  auto* p = reinterpret_cast<unsigned char*>(const_cast<char*>(data.data()));
  size_t n = data.size();
  uint32_t c = ~crc;
#if defined(__x86_64__)
  if (n < kSmallBytesMax && HasSse42()) return ~SmallCrc32c(p, n, c);
#endif
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

uint32_t Crc32cOfSuffix(uint32_t whole_crc, std::string_view whole, size_t offset) {
  TESSERA_CHECK(offset <= whole.size());
  // crc(H || S) = crc(H) * x^(8|S|) + crc(S), and combining with an empty
  // CRC for S gives the first term alone.
  return whole_crc ^ Crc32cCombine(Crc32c(whole.substr(0, offset)), 0, whole.size() - offset);
}

}  // namespace tessera
