// Prng: the simulator's only source of randomness. xoshiro256** seeded through
// SplitMix64, with our own range reductions, so that a seed yields the same
// stream on every platform and standard library (std::uniform_*_distribution
// is implementation-defined and is therefore not used).
//
// Thread safety: none; each simulation owns its generators.
#pragma once

#include <cstdint>

#include "common/splitmix64.h"

namespace tessera::sim {

// Mixes a seed with a stream label into an independent sub-seed.
inline uint64_t DeriveSeed(uint64_t seed, uint64_t stream) {
  uint64_t state = seed ^ (stream * 0xd1b54a32d192ed03ULL);
  SplitMix64Next(state);
  return SplitMix64Next(state);
}

// -Wpedantic rejects a bare __int128; __extension__ marks it as intended.
__extension__ typedef unsigned __int128 Uint128;

class Prng {
 public:
  explicit Prng(uint64_t seed) {
    uint64_t sm = seed;
    for (uint64_t& word : s_) word = SplitMix64Next(sm);
  }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n); n > 0. Lemire's multiply-shift (bias < n / 2^64).
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<Uint128>(Next()) * n) >> 64);
  }
  // Uniform in [lo, hi]; lo <= hi.
  uint64_t Range(uint64_t lo, uint64_t hi) { return lo + Below(hi - lo + 1); }
  // True with probability ppm / 1'000'000.
  bool ChancePpm(uint64_t ppm) { return Below(1'000'000) < ppm; }
  // True with probability percent / 100.
  bool Chance(uint64_t percent) { return Below(100) < percent; }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace tessera::sim
