// Goal: a TokenBucket admits exactly its burst at once, refills exactly at
// its rate up to its burst, never refills backwards, and a rate change
// (the GAC seam) takes effect from the moment it is set.
#include "admission/token_bucket.h"

#include <gtest/gtest.h>

namespace tessera::admission {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const Clock::time_point kT0 = Clock::time_point(seconds(1000));

TEST(TokenBucket, StartsFullAndAdmitsItsBurst) {
  TokenBucket b(/*rate_per_s=*/10, /*burst=*/5, kT0);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(b.TryTake(kT0)) << i;
  EXPECT_FALSE(b.TryTake(kT0));
  EXPECT_DOUBLE_EQ(b.Available(kT0), 0);
}

TEST(TokenBucket, RefillsAtItsRateUpToItsBurst) {
  TokenBucket b(10, 5, kT0);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(b.TryTake(kT0));
  EXPECT_FALSE(b.TryTake(kT0 + milliseconds(50)));  // half a token
  EXPECT_TRUE(b.TryTake(kT0 + milliseconds(100)));   // one token
  EXPECT_FALSE(b.TryTake(kT0 + milliseconds(100)));
  EXPECT_NEAR(b.Available(kT0 + milliseconds(300)), 2, 1e-9);
  EXPECT_DOUBLE_EQ(b.Available(kT0 + seconds(60)), 5);  // capped at burst
  EXPECT_TRUE(b.Full(kT0 + seconds(60)));
}

TEST(TokenBucket, RefusalTakesNothing) {
  TokenBucket b(1, 3, kT0);
  EXPECT_FALSE(b.TryTake(kT0, 4));
  EXPECT_DOUBLE_EQ(b.Available(kT0), 3);
  EXPECT_TRUE(b.Has(kT0, 3));
  EXPECT_FALSE(b.Has(kT0, 3.5));
}

TEST(TokenBucket, TimeGoingBackwardsNeverRefills) {
  TokenBucket b(10, 5, kT0);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(b.TryTake(kT0 + seconds(1)));
  EXPECT_FALSE(b.TryTake(kT0));  // earlier than the last point: no refill
  // Refill is measured from the latest point seen, not the earlier one.
  EXPECT_FALSE(b.TryTake(kT0 + seconds(1) + milliseconds(50)));
  EXPECT_TRUE(b.TryTake(kT0 + seconds(1) + milliseconds(100)));
}

TEST(TokenBucket, ZeroRateNeverRefills) {
  TokenBucket b(0, 2, kT0);
  EXPECT_TRUE(b.TryTake(kT0));
  EXPECT_TRUE(b.TryTake(kT0));
  EXPECT_FALSE(b.TryTake(kT0 + seconds(3600)));
}

TEST(TokenBucket, SetRateAppliesFromNowOn) {
  TokenBucket b(10, 100, kT0);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(b.TryTake(kT0));
  // One second at 10/s, then the GAC lowers the rate to 1/s.
  b.SetRate(1, kT0 + seconds(1));
  EXPECT_NEAR(b.Available(kT0 + seconds(1)), 10, 1e-9);
  EXPECT_NEAR(b.Available(kT0 + seconds(3)), 12, 1e-9);
  EXPECT_EQ(b.rate_per_s(), 1);
  b.SetRate(100, kT0 + seconds(3));
  EXPECT_NEAR(b.Available(kT0 + seconds(4)), 100, 1e-9);  // capped
}

TEST(TokenBucket, SetBurstDropsTheExcess) {
  TokenBucket b(10, 50, kT0);
  b.SetBurst(5, kT0);
  EXPECT_DOUBLE_EQ(b.Available(kT0), 5);
  b.SetBurst(20, kT0);
  EXPECT_DOUBLE_EQ(b.Available(kT0), 5);  // a larger cap adds nothing by itself
  EXPECT_DOUBLE_EQ(b.Available(kT0 + seconds(10)), 20);
}

}  // namespace
}  // namespace tessera::admission
