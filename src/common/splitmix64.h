// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", 2014): the one small generator and 64-bit mixer of the
// project. Used where a stream must be reproducible from a seed (simulator,
// consensus core, fault injection), for backoff jitter, and as a fixed hash
// (blob slot placement, linearizability checker).
//
// The outputs are part of formats and replays: blob slot placement and
// every simulator seed depend on them, so they must never change
// (splitmix64_test.cc pins them).
//
// Thread safety: pure functions; the atomic overload may be called from any
// thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace tessera {

// The generator's increment: 2^64 / golden ratio, odd.
inline constexpr uint64_t kSplitMix64Gamma = 0x9E3779B97F4A7C15ull;

// The output function: a bijective mix of all 64 bits.
constexpr uint64_t SplitMix64Finalize(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The first output of a generator seeded with `x`: a fixed hash of x.
constexpr uint64_t SplitMix64Hash(uint64_t x) { return SplitMix64Finalize(x + kSplitMix64Gamma); }

// Advances `state` by one step and returns that step's output.
constexpr uint64_t SplitMix64Next(uint64_t& state) {
  state += kSplitMix64Gamma;
  return SplitMix64Finalize(state);
}

// The same on shared state: concurrent callers each get a distinct step.
inline uint64_t SplitMix64Next(std::atomic<uint64_t>& state) {
  return SplitMix64Finalize(state.fetch_add(kSplitMix64Gamma, std::memory_order_relaxed) +
                            kSplitMix64Gamma);
}

// Uniform in [0, 1) from the top 53 bits of `bits`.
constexpr double UnitInterval(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

}  // namespace tessera
