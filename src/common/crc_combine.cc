#include "common/crc_combine.h"

namespace tessera {
namespace {

template <typename Word>
constexpr Word kTopBit = Word{1} << (sizeof(Word) * 8 - 1);  // x^0

template <typename Word>
Word MultiplyModP(Word polynomial, Word a, Word b) {
  Word product = 0;
  for (Word m = kTopBit<Word>; m != 0; m >>= 1) {
    if (a & m) product ^= b;
    b = (b & 1) ? (b >> 1) ^ polynomial : b >> 1;
  }
  return product;
}

template <typename Word>
Word ShiftForBytes(Word polynomial, uint64_t bytes) {
  Word result = kTopBit<Word>;      // x^0
  Word power = kTopBit<Word> >> 8;  // x^8: one byte
  for (; bytes != 0; bytes >>= 1) {
    if (bytes & 1) result = MultiplyModP(polynomial, power, result);
    power = MultiplyModP(polynomial, power, power);
  }
  return result;
}

// With the initial and final inversion, crc(A || B) = crc(A) * x^(8|B|) +
// crc(B) (mod P): the inversions of A's end and B's start cancel.
template <typename Word>
Word Combine(Word polynomial, Word crc_a, Word crc_b, uint64_t length_b) {
  return MultiplyModP(polynomial, ShiftForBytes(polynomial, length_b), crc_a) ^ crc_b;
}

}  // namespace

uint32_t CrcMultiplyModP(uint32_t polynomial, uint32_t a, uint32_t b) {
  return MultiplyModP(polynomial, a, b);
}
uint64_t CrcMultiplyModP(uint64_t polynomial, uint64_t a, uint64_t b) {
  return MultiplyModP(polynomial, a, b);
}
uint32_t CrcShiftForBytes(uint32_t polynomial, uint64_t bytes) {
  return ShiftForBytes(polynomial, bytes);
}
uint64_t CrcShiftForBytes(uint64_t polynomial, uint64_t bytes) {
  return ShiftForBytes(polynomial, bytes);
}
uint32_t CrcCombine(uint32_t polynomial, uint32_t crc_a, uint32_t crc_b, uint64_t length_b) {
  return Combine(polynomial, crc_a, crc_b, length_b);
}
uint64_t CrcCombine(uint64_t polynomial, uint64_t crc_a, uint64_t crc_b, uint64_t length_b) {
  return Combine(polynomial, crc_a, crc_b, length_b);
}

}  // namespace tessera
