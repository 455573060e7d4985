#include "experiment/delay_queue.h"

#include <gtest/gtest.h>

namespace tessera::experiment {
namespace {

TEST(DelayDrawTest, DelaysStayWithinTheJitterAroundTheDelay) {
  DelayDraw draw(NetnsShaping{1.0, 0.2, 0}, 7);
  int64_t low = INT64_MAX, high = 0;
  double sum = 0;
  constexpr int kPackets = 20000;
  for (int i = 0; i < kPackets; ++i) {
    const PacketFate f = draw.Next();
    ASSERT_FALSE(f.lost);
    low = std::min(low, f.delay_ns);
    high = std::max(high, f.delay_ns);
    sum += static_cast<double>(f.delay_ns);
  }
  EXPECT_GE(low, 800'000);
  EXPECT_LE(high, 1'200'000);
  // Uniform: both ends are reached closely, and the mean is the delay.
  EXPECT_LT(low, 810'000);
  EXPECT_GT(high, 1'190'000);
  EXPECT_NEAR(sum / kPackets, 1'000'000, 5'000);
}

TEST(DelayDrawTest, NoJitterIsTheDelayExactly) {
  DelayDraw draw(NetnsShaping{2.5, 0, 0}, 1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(draw.Next().delay_ns, 2'500'000);
}

TEST(DelayDrawTest, LossIsTheShareAskedAndTheSeedRepeatsIt) {
  DelayDraw a(NetnsShaping{1.0, 0.2, 10}, 42), b(NetnsShaping{1.0, 0.2, 10}, 42);
  int lost = 0;
  constexpr int kPackets = 20000;
  for (int i = 0; i < kPackets; ++i) {
    const PacketFate fa = a.Next(), fb = b.Next();
    ASSERT_EQ(fa.lost, fb.lost);
    ASSERT_EQ(fa.delay_ns, fb.delay_ns);
    lost += fa.lost ? 1 : 0;
  }
  EXPECT_NEAR(lost, kPackets / 10, kPackets / 100);
  DelayDraw none(NetnsShaping{1.0, 0, 0}, 42), all(NetnsShaping{0, 0, 100}, 42);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(none.Next().lost);
    EXPECT_TRUE(all.Next().lost);
  }
}

TEST(DelayDrawTest, JitterAboveTheDelayNeverGoesNegative) {
  DelayDraw draw(NetnsShaping{0.1, 0.1, 0}, 3);
  for (int i = 0; i < 1000; ++i) EXPECT_GE(draw.Next().delay_ns, 0);
}

TEST(DelayQueueTest, ReleasesEarliestFirstAndTiesInPushOrder) {
  DelayQueue q(8);
  ASSERT_TRUE(q.Push(300, {0, 1}));
  ASSERT_TRUE(q.Push(100, {1, 2}));
  ASSERT_TRUE(q.Push(100, {0, 3}));
  ASSERT_TRUE(q.Push(200, {1, 4}));
  EXPECT_EQ(q.NextRelease(), 100);
  EXPECT_TRUE(q.PopDue(99).empty());
  std::vector<HeldPacket> due = q.PopDue(200);
  ASSERT_EQ(due.size(), 3u);
  EXPECT_EQ(due[0].id, 2u);
  EXPECT_EQ(due[1].id, 3u);
  EXPECT_EQ(due[2].id, 4u);
  EXPECT_EQ(due[2].queue, 1u);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.NextRelease(), 300);
}

TEST(DelayQueueTest, RefusesBeyondItsCapacityAndPopAllEmptiesIt) {
  DelayQueue q(2);
  EXPECT_TRUE(q.Push(5, {0, 1}));
  EXPECT_TRUE(q.Push(1, {0, 2}));
  EXPECT_FALSE(q.Push(3, {0, 3}));
  EXPECT_EQ(q.size(), 2u);
  std::vector<HeldPacket> all = q.PopAll();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, 2u);
  EXPECT_EQ(q.size(), 0u);
  EXPECT_FALSE(q.NextRelease().has_value());
  EXPECT_TRUE(q.Push(3, {0, 3}));
}

}  // namespace
}  // namespace tessera::experiment
