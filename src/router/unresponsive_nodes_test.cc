#include "router/unresponsive_nodes.h"

#include <gtest/gtest.h>

#include "common/limits.h"

namespace tessera::router {
namespace {

using namespace std::chrono_literals;
using Clock = UnresponsiveNodes::Clock;

TEST(UnresponsiveNodes, AvoidedUntilTheWindowEndsOrAnAnswer) {
  UnresponsiveNodes nodes(3'000);
  const Clock::time_point t0 = Clock::now();
  EXPECT_FALSE(nodes.Avoided(7, t0));
  nodes.Mark(7, t0);
  EXPECT_TRUE(nodes.Avoided(7, t0));
  EXPECT_TRUE(nodes.Avoided(7, t0 + 2'999ms));
  EXPECT_FALSE(nodes.Avoided(7, t0 + 3'000ms));
  EXPECT_FALSE(nodes.Avoided(8, t0)) << "only the node marked";
  nodes.Mark(7, t0 + 1s);
  EXPECT_TRUE(nodes.Avoided(7, t0 + 3'500ms)) << "a new mark extends the window";
  nodes.Answered(7);
  EXPECT_FALSE(nodes.Avoided(7, t0 + 1s)) << "an answer clears it at once";
}

TEST(UnresponsiveNodes, ZeroWindowAvoidsNothing) {
  UnresponsiveNodes nodes(0);
  const Clock::time_point t0 = Clock::now();
  nodes.Mark(1, t0);
  EXPECT_FALSE(nodes.Avoided(1, t0));
  EXPECT_EQ(nodes.size(), 0u);
}

TEST(UnresponsiveNodes, BoundedForgettingExpiredThenSoonestToExpire) {
  UnresponsiveNodes nodes(1'000);
  const Clock::time_point t0 = Clock::now();
  const uint32_t max = static_cast<uint32_t>(limits::kRouterUnresponsiveNodesMax);
  for (uint32_t node = 0; node < max; ++node) nodes.Mark(node, t0 + std::chrono::microseconds(node));
  EXPECT_EQ(nodes.size(), max);
  nodes.Mark(max, t0 + 10ms);  // full, nothing expired: node 0 expires first
  EXPECT_EQ(nodes.size(), max);
  EXPECT_FALSE(nodes.Avoided(0, t0 + 10ms));
  EXPECT_TRUE(nodes.Avoided(1, t0 + 10ms));
  EXPECT_TRUE(nodes.Avoided(max, t0 + 10ms));
  nodes.Mark(max + 1, t0 + 2s);  // every earlier mark has expired by then
  EXPECT_EQ(nodes.size(), 1u);
  EXPECT_TRUE(nodes.Avoided(max + 1, t0 + 2s));
}

}  // namespace
}  // namespace tessera::router
