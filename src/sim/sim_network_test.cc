// Goal: simulated links lose, duplicate and block messages as configured,
// and overlapping partitions heal only when every one of them ended.
#include "sim/sim_network.h"

#include <gtest/gtest.h>

namespace tessera::sim {
namespace {

TEST(SimNetworkTest, OverlappingBlocksComposeAndAreDirected) {
  SimNetwork network(3);
  Prng prng(1);
  std::vector<TimeUs> delays;
  network.Block(1, 2);
  network.Block(1, 2);
  network.Unblock(1, 2);
  network.Route(1, 2, prng, &delays);
  EXPECT_TRUE(delays.empty()) << "one of two partitions still covers the link";
  network.Route(2, 1, prng, &delays);
  EXPECT_EQ(delays.size(), 1u) << "the reverse direction is open";
  network.Unblock(1, 2);
  delays.clear();
  network.Route(1, 2, prng, &delays);
  EXPECT_EQ(delays.size(), 1u);
}

TEST(SimNetworkTest, LossDuplicationAndDelayFollowTheParameters) {
  SimNetwork network(3);
  NetworkParams params;
  params.loss_ppm = 100'000;
  params.duplicate_ppm = 200'000;
  params.delay_min_us = 1'000;
  params.delay_jitter_us = 500;
  network.set_params(params);
  Prng prng(7);
  std::vector<TimeUs> delays;
  int lost = 0;
  int duplicated = 0;
  for (int i = 0; i < 10'000; ++i) {
    delays.clear();
    network.Route(2, 3, prng, &delays);
    lost += delays.empty();
    duplicated += delays.size() == 2;
    for (TimeUs delay : delays) {
      ASSERT_GE(delay, 1'000u);
      ASSERT_LE(delay, 1'500u);
    }
  }
  EXPECT_NEAR(lost, 1'000, 200);
  EXPECT_NEAR(duplicated, 1'800, 300);
}

TEST(SimNetworkTest, GrayLinkLosesOnlyItsDirection) {
  SimNetwork network(3);
  network.AddGray(1, 3, 1'000'000);
  Prng prng(3);
  std::vector<TimeUs> delays;
  network.Route(1, 3, prng, &delays);
  EXPECT_TRUE(delays.empty());
  network.Route(3, 1, prng, &delays);
  network.Route(1, 2, prng, &delays);
  EXPECT_EQ(delays.size(), 2u);
  network.HealLinks();
  delays.clear();
  network.Route(1, 3, prng, &delays);
  EXPECT_EQ(delays.size(), 1u);
}

TEST(PrngTest, SameSeedSameStreamAndRangesHold) {
  Prng a(42);
  Prng b(42);
  for (int i = 0; i < 1'000; ++i) {
    ASSERT_EQ(a.Next(), b.Next());
    const uint64_t r = a.Range(5, 9);
    b.Range(5, 9);
    ASSERT_GE(r, 5u);
    ASSERT_LE(r, 9u);
  }
  EXPECT_NE(DeriveSeed(1, 1), DeriveSeed(1, 2));
  EXPECT_NE(DeriveSeed(1, 1), DeriveSeed(2, 1));
}

}  // namespace
}  // namespace tessera::sim
