// Goal: the shared SplitMix64 gives the reference generator's outputs, which
// blob placement and simulator replays depend on.
#include "common/splitmix64.h"

#include <gtest/gtest.h>

#include <atomic>

namespace tessera {
namespace {

// The reference implementation's outputs (Vigna, splitmix64.c).
TEST(SplitMix64, MatchesTheReferenceStream) {
  uint64_t state = 1234567;
  EXPECT_EQ(SplitMix64Next(state), 6457827717110365317ull);
  EXPECT_EQ(SplitMix64Next(state), 3203168211198807973ull);
  EXPECT_EQ(SplitMix64Next(state), 9817491932198370423ull);
  EXPECT_EQ(SplitMix64Next(state), 4593380528125082431ull);
  EXPECT_EQ(SplitMix64Next(state), 16408922859458223821ull);
  uint64_t zero = 0;
  EXPECT_EQ(SplitMix64Next(zero), 0xE220A8397B1DCDAFull);
}

TEST(SplitMix64, HashIsTheFirstOutputAndAtomicMatchesPlain) {
  for (uint64_t seed : {0ull, 1ull, 42ull, 0xFFFFFFFFFFFFFFFFull}) {
    uint64_t state = seed;
    EXPECT_EQ(SplitMix64Hash(seed), SplitMix64Next(state));
    std::atomic<uint64_t> shared{seed};
    state = seed;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(SplitMix64Next(shared), SplitMix64Next(state));
  }
}

TEST(SplitMix64, UnitIntervalStaysBelowOne) {
  EXPECT_EQ(UnitInterval(0), 0.0);
  EXPECT_LT(UnitInterval(~0ull), 1.0);
  EXPECT_EQ(UnitInterval(1ull << 63), 0.5);
}

}  // namespace
}  // namespace tessera
