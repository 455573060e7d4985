// Goal: the fault clock applies a wall offset exactly, runs the monotonic
// clock at the skewed rate, and never lets monotonic time step back when
// the skew changes.
#include "common/fault_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace tessera::fault_clock {
namespace {

int64_t RealUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t RealWallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TEST(FaultClockTest, WallOffsetShiftsWallTimeAndClears) {
  SetWallOffsetMs(3'600'000);
  const int64_t before = RealWallMs();
  const int64_t shifted = WallNowMs();
  const int64_t after = RealWallMs();
  EXPECT_GE(shifted, before + 3'600'000);
  EXPECT_LE(shifted, after + 3'600'000);
  EXPECT_EQ(WallOffsetMs(), 3'600'000);
  SetWallOffsetMs(-90'000);
  EXPECT_LE(WallNowMs(), RealWallMs() - 90'000);
  SetWallOffsetMs(0);
  const int64_t lo = RealWallMs();
  const int64_t now = WallNowMs();
  EXPECT_GE(now, lo);
  EXPECT_LE(now, RealWallMs());
}

// The skewed elapsed time lies between the skewed rate times the real
// interval inside the two reads and times the one around them.
TEST(FaultClockTest, SkewRunsMonotonicTimeAtTheSkewedRate) {
  for (int32_t ppm : {500'000, -500'000}) {
    SetMonotonicSkewPpm(ppm);
    const double rate = 1.0 + ppm / 1e6;
    const int64_t r0 = RealUs();
    const uint64_t m0 = MonotonicNowUs();
    const int64_t r1 = RealUs();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    const int64_t r2 = RealUs();
    const uint64_t m1 = MonotonicNowUs();
    const int64_t r3 = RealUs();
    const double skewed = static_cast<double>(m1 - m0);
    EXPECT_GE(skewed, rate * static_cast<double>(r2 - r1) - 2) << ppm;
    EXPECT_LE(skewed, rate * static_cast<double>(r3 - r0) + 2) << ppm;
  }
  SetMonotonicSkewPpm(0);
  EXPECT_EQ(MonotonicSkewPpm(), 0);
}

TEST(FaultClockTest, MonotonicTimeNeverStepsBackAcrossSkewChanges) {
  uint64_t last = MonotonicNowUs();
  for (int i = 0; i < 200; ++i) {
    SetMonotonicSkewPpm(i % 2 == 0 ? -500'000 : 500'000);
    for (int j = 0; j < 20; ++j) {
      const uint64_t now = MonotonicNowUs();
      ASSERT_GE(now, last) << "step " << i;
      last = now;
    }
  }
  SetMonotonicSkewPpm(0);
  EXPECT_GE(MonotonicNowUs(), last);
}

}  // namespace
}  // namespace tessera::fault_clock
