// Combining reflected CRCs without the data: the CRC of A || B from the
// CRCs of A and B and the length of B. S3's full-object multipart checksums
// are the parts' CRCs combined so; the striped CRC-32C joins its stripes so.
//
// Arithmetic is on polynomials over GF(2) modulo the CRC's polynomial, in
// the CRC's reflected bit order (the top bit is x^0). Defined for the
// 32-bit CRCs (CRC-32 of zlib and S3, CRC-32C) and the 64-bit CRC64NVME.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>

namespace tessera {

inline constexpr uint32_t kCrc32Polynomial = 0xEDB88320u;                 // reflected, CRC-32
inline constexpr uint32_t kCrc32cPolynomial = 0x82F63B78u;                // reflected, CRC-32C
inline constexpr uint64_t kCrc64NvmePolynomial = 0x9A6C9329AC4BC9B5ull;   // reflected, CRC64NVME

// a * b mod P.
uint32_t CrcMultiplyModP(uint32_t polynomial, uint32_t a, uint32_t b);
uint64_t CrcMultiplyModP(uint64_t polynomial, uint64_t a, uint64_t b);
// x^(8 * bytes) mod P: multiplying a CRC by it appends `bytes` zero bytes
// (without the initial and final inversions). O(log bytes).
uint32_t CrcShiftForBytes(uint32_t polynomial, uint64_t bytes);
uint64_t CrcShiftForBytes(uint64_t polynomial, uint64_t bytes);
// The CRC (with the usual initial and final inversion) of A || B, given
// crc_a = CRC(A), crc_b = CRC(B) and length_b = |B|.
uint32_t CrcCombine(uint32_t polynomial, uint32_t crc_a, uint32_t crc_b, uint64_t length_b);
uint64_t CrcCombine(uint64_t polynomial, uint64_t crc_a, uint64_t crc_b, uint64_t length_b);

}  // namespace tessera
