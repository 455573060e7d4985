// MD5 block functions (md5.h's internals, open to its tests): the
// compression function of RFC 1321 over whole 64-byte blocks, one stream
// per call (scalar) or one stream per SIMD lane.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "s3/auth/md5.h"

namespace tessera::s3::auth::md5_internal {

enum class Kernel { kScalar, kAvx2, kAvx512 };

// The MD5 constants (RFC 1321 section 3.4).
inline constexpr uint32_t kInit[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
inline constexpr uint32_t kSine[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
inline constexpr int kShift[64] = {
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
    5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};
// Which message word step i adds.
constexpr int MessageWord(int i) {
  return i < 16 ? i : i < 32 ? (5 * i + 1) % 16 : i < 48 ? (3 * i + 5) % 16 : (7 * i) % 16;
}

// Lanes a kernel hashes in one pass (1 for the scalar kernel).
size_t LanesOf(Kernel kernel);
// Whether this CPU runs `kernel` (the scalar one always).
bool Available(Kernel kernel);
// The widest available kernel: what Md5UpdateEach uses.
Kernel Best();

// For each lane l < lanes: hashes `blocks` whole blocks from data[l] into
// state[l] (four words each). lanes in 1..LanesOf(kernel); `kernel`
// Available. Pointers of different lanes may be equal only if the states
// are distinct and the data is read-only.
void HashBlocks(Kernel kernel, uint32_t* const* state, const unsigned char* const* data,
                size_t lanes, size_t blocks);

// The SIMD kernels (md5_simd.cc): lanes in 1..8 and 1..16.
void HashBlocksAvx2(uint32_t* const* state, const unsigned char* const* data, size_t lanes,
                    size_t blocks);
void HashBlocksAvx512(uint32_t* const* state, const unsigned char* const* data, size_t lanes,
                      size_t blocks);

// Md5UpdateEach with a given kernel (Available).
void UpdateEachWith(Kernel kernel, std::span<Md5* const> streams,
                    std::span<const std::string_view> data);

}  // namespace tessera::s3::auth::md5_internal
