// Goal: the percentile is exact over the samples of the span, and the
// window stays bounded.
#include "common/latency_window.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(LatencyWindow, EmptyHasNoSamples) {
  LatencyWindow w(8);
  const auto s = w.Since(0);
  EXPECT_EQ(s.samples, 0u);
  EXPECT_EQ(s.p99_us, 0u);
}

TEST(LatencyWindow, P99IsTheNearestRankOverTheSpan) {
  LatencyWindow w(1000);
  for (uint64_t i = 1; i <= 200; ++i) w.Record(1000 + i, i);  // durations 1..200
  const auto all = w.Since(0);
  EXPECT_EQ(all.samples, 200u);
  EXPECT_EQ(all.p99_us, 198u);  // ceil(0.99 * 200) = 198th smallest
  EXPECT_EQ(all.max_us, 200u);
  // Only the events that ended at or after 1101: durations 101..200.
  const auto recent = w.Since(1101);
  EXPECT_EQ(recent.samples, 100u);
  EXPECT_EQ(recent.p99_us, 199u);
}

TEST(LatencyWindow, OneSlowEventAmongFewIsTheP99) {
  LatencyWindow w(16);
  for (int i = 0; i < 9; ++i) w.Record(10, 1);
  w.Record(10, 500);
  EXPECT_EQ(w.Since(0).p99_us, 500u);
}

TEST(LatencyWindow, KeepsOnlyTheNewestCapacitySamples) {
  LatencyWindow w(4);
  for (uint64_t i = 1; i <= 10; ++i) w.Record(i, i * 10);
  const auto s = w.Since(0);
  EXPECT_EQ(s.samples, 4u);
  EXPECT_EQ(s.max_us, 100u);
  EXPECT_EQ(s.p99_us, 100u);
  EXPECT_EQ(w.Since(9).samples, 2u);
}

}  // namespace
}  // namespace tessera
