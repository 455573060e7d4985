// The SIMD MD5 kernels: lane l of every vector carries stream l's state,
// and the message words of each lane's block are gathered into one vector
// per word. Compiled for the instruction set in each function's target
// attribute; md5.cc calls them only where the CPU has it.
// GCC 12's AVX-512 intrinsics start from _mm512_undefined vectors, which
// -Wmaybe-uninitialized reports inside its own headers (a false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <cstdint>
#include <utility>

#include "s3/auth/md5_kernels.h"

namespace tessera::s3::auth::md5_internal {
namespace {

constexpr size_t kBlock = 64;

// The base address of a gather whose indices are absolute addresses: the
// offset of message word j inside a block.
inline const void* WordOffset(int j) { return reinterpret_cast<const void*>(uintptr_t{4} * j); }

// ---- AVX-512F: 16 lanes; vpternlogd computes each round's function in
// one instruction and vprold rotates.

#define TESSERA_AVX512 __attribute__((target("avx512f"), always_inline)) inline

template <int I>
constexpr int TernaryImm() {
  // F = b ? c : d, G = d ? b : c, H = b ^ c ^ d, I = c ^ (b | ~d).
  return I < 16 ? 0xCA : I < 32 ? 0xE4 : I < 48 ? 0x96 : 0x39;
}

// The immediates are template arguments: unoptimized builds expand these
// intrinsics as macros that need literal constants.
template <int I, int kImm = TernaryImm<I>(), int kRotate = kShift[I]>
TESSERA_AVX512 void Step512(__m512i& a, __m512i b, __m512i c, __m512i d, const __m512i* m) {
  const __m512i f = _mm512_ternarylogic_epi32(b, c, d, kImm);
  const __m512i km = _mm512_add_epi32(m[MessageWord(I)], _mm512_set1_epi32(static_cast<int>(kSine[I])));
  a = _mm512_add_epi32(_mm512_rol_epi32(_mm512_add_epi32(_mm512_add_epi32(a, f), km), kRotate), b);
}

template <int I>
TESSERA_AVX512 void Four512(__m512i& a, __m512i& b, __m512i& c, __m512i& d, const __m512i* m) {
  Step512<I>(a, b, c, d, m);
  Step512<I + 1>(d, a, b, c, m);
  Step512<I + 2>(c, d, a, b, m);
  Step512<I + 3>(b, c, d, a, m);
}

template <int... G>
TESSERA_AVX512 void Rounds512(std::integer_sequence<int, G...>, __m512i& a, __m512i& b, __m512i& c,
                              __m512i& d, const __m512i* m) {
  (Four512<4 * G>(a, b, c, d, m), ...);
}

// ---- AVX2: 8 lanes; the round functions take three instructions and a
// rotation two shifts and an or.

#define TESSERA_AVX2 __attribute__((target("avx2"), always_inline)) inline

template <int I>
TESSERA_AVX2 __m256i Round256(__m256i b, __m256i c, __m256i d) {
  if constexpr (I < 16) {
    return _mm256_xor_si256(d, _mm256_and_si256(b, _mm256_xor_si256(c, d)));
  } else if constexpr (I < 32) {
    return _mm256_xor_si256(c, _mm256_and_si256(d, _mm256_xor_si256(b, c)));
  } else if constexpr (I < 48) {
    return _mm256_xor_si256(_mm256_xor_si256(b, c), d);
  } else {
    return _mm256_xor_si256(c, _mm256_or_si256(b, _mm256_xor_si256(d, _mm256_set1_epi32(-1))));
  }
}

template <int I, int kRotate = kShift[I]>
TESSERA_AVX2 void Step256(__m256i& a, __m256i b, __m256i c, __m256i d, const __m256i* m) {
  const __m256i km = _mm256_add_epi32(m[MessageWord(I)], _mm256_set1_epi32(static_cast<int>(kSine[I])));
  const __m256i x = _mm256_add_epi32(_mm256_add_epi32(a, Round256<I>(b, c, d)), km);
  const __m256i rotated =
      _mm256_or_si256(_mm256_slli_epi32(x, kRotate), _mm256_srli_epi32(x, 32 - kRotate));
  a = _mm256_add_epi32(rotated, b);
}

template <int I>
TESSERA_AVX2 void Four256(__m256i& a, __m256i& b, __m256i& c, __m256i& d, const __m256i* m) {
  Step256<I>(a, b, c, d, m);
  Step256<I + 1>(d, a, b, c, m);
  Step256<I + 2>(c, d, a, b, m);
  Step256<I + 3>(b, c, d, a, m);
}

template <int... G>
TESSERA_AVX2 void Rounds256(std::integer_sequence<int, G...>, __m256i& a, __m256i& b, __m256i& c,
                            __m256i& d, const __m256i* m) {
  (Four256<4 * G>(a, b, c, d, m), ...);
}

// Lanes beyond `lanes` repeat lane 0's data into a scratch state: the
// vector work is the same whatever the number of lanes in use.
template <size_t kLanes>
struct LaneSetup {
  alignas(64) uint32_t words[4][kLanes];
  alignas(64) uint64_t address[kLanes];

  LaneSetup(uint32_t* const* state, const unsigned char* const* data, size_t lanes) {
    for (size_t l = 0; l < kLanes; ++l) {
      const size_t from = l < lanes ? l : 0;
      for (size_t k = 0; k < 4; ++k) words[k][l] = state[from][k];
      address[l] = reinterpret_cast<uintptr_t>(data[from]);
    }
  }

  void Store(uint32_t* const* state, size_t lanes) const {
    for (size_t l = 0; l < lanes; ++l) {
      for (size_t k = 0; k < 4; ++k) state[l][k] = words[k][l];
    }
  }
};

}  // namespace

__attribute__((target("avx512f"))) void HashBlocksAvx512(uint32_t* const* state,
                                                         const unsigned char* const* data,
                                                         size_t lanes, size_t blocks) {
  LaneSetup<16> setup(state, data, lanes);
  __m512i a = _mm512_load_si512(setup.words[0]);
  __m512i b = _mm512_load_si512(setup.words[1]);
  __m512i c = _mm512_load_si512(setup.words[2]);
  __m512i d = _mm512_load_si512(setup.words[3]);
  __m512i low = _mm512_load_si512(setup.address);
  __m512i high = _mm512_load_si512(setup.address + 8);
  const __m512i block = _mm512_set1_epi64(kBlock);
  for (size_t n = 0; n < blocks; ++n) {
    __m512i m[16];
    for (int j = 0; j < 16; ++j) {
      const __m256i lo = _mm512_i64gather_epi32(low, WordOffset(j), 1);
      const __m256i hi = _mm512_i64gather_epi32(high, WordOffset(j), 1);
      m[j] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    }
    const __m512i a0 = a, b0 = b, c0 = c, d0 = d;
    Rounds512(std::make_integer_sequence<int, 16>{}, a, b, c, d, m);
    a = _mm512_add_epi32(a, a0);
    b = _mm512_add_epi32(b, b0);
    c = _mm512_add_epi32(c, c0);
    d = _mm512_add_epi32(d, d0);
    low = _mm512_add_epi64(low, block);
    high = _mm512_add_epi64(high, block);
  }
  _mm512_store_si512(setup.words[0], a);
  _mm512_store_si512(setup.words[1], b);
  _mm512_store_si512(setup.words[2], c);
  _mm512_store_si512(setup.words[3], d);
  setup.Store(state, lanes);
}

__attribute__((target("avx2"))) void HashBlocksAvx2(uint32_t* const* state,
                                                    const unsigned char* const* data, size_t lanes,
                                                    size_t blocks) {
  LaneSetup<8> setup(state, data, lanes);
  __m256i a = _mm256_load_si256(reinterpret_cast<const __m256i*>(setup.words[0]));
  __m256i b = _mm256_load_si256(reinterpret_cast<const __m256i*>(setup.words[1]));
  __m256i c = _mm256_load_si256(reinterpret_cast<const __m256i*>(setup.words[2]));
  __m256i d = _mm256_load_si256(reinterpret_cast<const __m256i*>(setup.words[3]));
  __m256i low = _mm256_load_si256(reinterpret_cast<const __m256i*>(setup.address));
  __m256i high = _mm256_load_si256(reinterpret_cast<const __m256i*>(setup.address + 4));
  const __m256i block = _mm256_set1_epi64x(kBlock);
  for (size_t n = 0; n < blocks; ++n) {
    __m256i m[16];
    for (int j = 0; j < 16; ++j) {
      const auto* base = static_cast<const int*>(WordOffset(j));
      const __m128i lo = _mm256_i64gather_epi32(base, low, 1);
      const __m128i hi = _mm256_i64gather_epi32(base, high, 1);
      m[j] = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
    }
    const __m256i a0 = a, b0 = b, c0 = c, d0 = d;
    Rounds256(std::make_integer_sequence<int, 16>{}, a, b, c, d, m);
    a = _mm256_add_epi32(a, a0);
    b = _mm256_add_epi32(b, b0);
    c = _mm256_add_epi32(c, c0);
    d = _mm256_add_epi32(d, d0);
    low = _mm256_add_epi64(low, block);
    high = _mm256_add_epi64(high, block);
  }
  _mm256_store_si256(reinterpret_cast<__m256i*>(setup.words[0]), a);
  _mm256_store_si256(reinterpret_cast<__m256i*>(setup.words[1]), b);
  _mm256_store_si256(reinterpret_cast<__m256i*>(setup.words[2]), c);
  _mm256_store_si256(reinterpret_cast<__m256i*>(setup.words[3]), d);
  setup.Store(state, lanes);
}

}  // namespace tessera::s3::auth::md5_internal
