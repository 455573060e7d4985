// Goal: the metrics registry counts correctly under concurrency and renders
// the exact Prometheus text exposition format (counters, gauges, histograms,
// labels, escaping).
#include "common/metrics.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace tessera::metrics {
namespace {

TEST(Metrics, RendersCountersGaugesAndHistograms) {
  Registry registry;
  registry.GetCounter("tessera_test_frames_total", "Frames seen.", {{"side", "server"}})
      .Increment(3);
  registry.GetCounter("tessera_test_frames_total", "Frames seen.", {{"side", "client"}})
      .Increment();
  registry.GetGauge("tessera_test_connections", "Open connections.").Set(2.5);
  // Binary fractions keep the sum exact.
  Histogram& h = registry.GetHistogram("tessera_test_latency_seconds", "Latency.",
                                       {0.25, 0.5, 1}, {{"method", "echo"}});
  h.Observe(0.125);
  h.Observe(0.25);  // on a bound: counts in that bucket (le is inclusive)
  h.Observe(0.75);
  h.Observe(4);
  EXPECT_EQ(registry.RenderText(),
            "# HELP tessera_test_connections Open connections.\n"
            "# TYPE tessera_test_connections gauge\n"
            "tessera_test_connections 2.5\n"
            "# HELP tessera_test_frames_total Frames seen.\n"
            "# TYPE tessera_test_frames_total counter\n"
            "tessera_test_frames_total{side=\"client\"} 1\n"
            "tessera_test_frames_total{side=\"server\"} 3\n"
            "# HELP tessera_test_latency_seconds Latency.\n"
            "# TYPE tessera_test_latency_seconds histogram\n"
            "tessera_test_latency_seconds_bucket{method=\"echo\",le=\"0.25\"} 2\n"
            "tessera_test_latency_seconds_bucket{method=\"echo\",le=\"0.5\"} 2\n"
            "tessera_test_latency_seconds_bucket{method=\"echo\",le=\"1\"} 3\n"
            "tessera_test_latency_seconds_bucket{method=\"echo\",le=\"+Inf\"} 4\n"
            "tessera_test_latency_seconds_sum{method=\"echo\"} 5.125\n"
            "tessera_test_latency_seconds_count{method=\"echo\"} 4\n");
}

TEST(Metrics, SameNameAndLabelsInAnyOrderIsOneSeries) {
  Registry registry;
  Counter& a = registry.GetCounter("tessera_test_total", "T.", {{"a", "1"}, {"b", "2"}});
  Counter& b = registry.GetCounter("tessera_test_total", "T.", {{"b", "2"}, {"a", "1"}});
  EXPECT_EQ(&a, &b);
  a.Increment();
  EXPECT_EQ(registry.RenderText(),
            "# HELP tessera_test_total T.\n"
            "# TYPE tessera_test_total counter\n"
            "tessera_test_total{a=\"1\",b=\"2\"} 1\n");
}

TEST(Metrics, EscapesLabelValuesAndHelp) {
  Registry registry;
  registry.GetCounter("tessera_test_total", "Line one\nback\\slash.",
                      {{"path", "a\"b\\c\nd"}});
  EXPECT_EQ(registry.RenderText(),
            "# HELP tessera_test_total Line one\\nback\\\\slash.\n"
            "# TYPE tessera_test_total counter\n"
            "tessera_test_total{path=\"a\\\"b\\\\c\\nd\"} 0\n");
}

TEST(Metrics, ConcurrentUpdatesAreNotLost) {
  Registry registry;
  Counter& c = registry.GetCounter("tessera_test_total", "T.");
  Histogram& h = registry.GetHistogram("tessera_test_seconds", "T.", {1.0});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.Increment();
        h.Observe(0.5);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.value(), 40000u);
  const Histogram::Snapshot s = h.snapshot();
  EXPECT_EQ(s.count, 40000u);
  EXPECT_EQ(s.bucket_counts[0], 40000u);
  EXPECT_DOUBLE_EQ(s.sum, 20000.0);
}

TEST(Metrics, ExponentialBuckets) {
  EXPECT_EQ(ExponentialBuckets(1, 2, 4), (std::vector<double>{1, 2, 4, 8}));
  EXPECT_EQ(LatencyBucketsSeconds().front(), 50e-6);
}

TEST(MetricsDeathTest, ConflictingTypeIsABug) {
  Registry registry;
  registry.GetCounter("tessera_test_total", "T.");
  EXPECT_DEATH(registry.GetGauge("tessera_test_total", "T."), "invariant violated");
  EXPECT_DEATH(registry.GetCounter("bad name", "T."), "invariant violated");
}

}  // namespace
}  // namespace tessera::metrics
