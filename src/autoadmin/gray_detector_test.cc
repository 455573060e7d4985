// Goal: a node turns gray only after its disk stayed degraded for
// degraded_for, and healthy only after it stayed fine as long; idle disks
// and single outliers do not flip it.
#include "autoadmin/gray_detector.h"

#include <gtest/gtest.h>

namespace tessera::autoadmin {
namespace {

GrayOptions Options() {
  GrayOptions o;
  o.sync_p99_us = 50'000;
  o.min_sync_samples = 20;
  o.degraded_for_ms = 3'000;
  o.min_free_bytes = 1 << 20;
  return o;
}

pb::DiskHealthProto Disk(uint64_t p99_ms, uint64_t samples = 100, uint64_t errors = 0,
                         uint64_t free_bytes = uint64_t{1} << 30) {
  pb::DiskHealthProto d;
  d.set_window_ms(3'000);
  d.set_sync_samples(samples);
  d.set_sync_p99_us(p99_ms * 1000);
  d.set_write_errors(errors);
  d.set_free_bytes(free_bytes);
  d.set_total_bytes(uint64_t{10} << 30);
  return d;
}

TEST(GrayDetector, TurnsGrayOnlyAfterDegradedForTheWholeSpan) {
  GrayDetector g(Options());
  g.OnReport(Disk(120), "", 1'000);
  g.OnReport(Disk(120), "", 3'999);
  EXPECT_FALSE(g.gray());
  EXPECT_NE(g.reason().find("p99 120 ms"), std::string::npos) << g.reason();
  g.OnReport(Disk(120), "", 4'000);
  EXPECT_TRUE(g.gray());
  EXPECT_EQ(g.GrayForMs(6'500), 2'500u);
}

TEST(GrayDetector, AGoodReportInBetweenRestartsTheSpan) {
  GrayDetector g(Options());
  g.OnReport(Disk(120), "", 1'000);
  g.OnReport(Disk(5), "", 2'000);
  g.OnReport(Disk(120), "", 3'000);
  g.OnReport(Disk(120), "", 5'999);
  EXPECT_FALSE(g.gray());
  g.OnReport(Disk(120), "", 6'000);
  EXPECT_TRUE(g.gray());
}

TEST(GrayDetector, HealthyAgainOnlyAfterAsLongWithoutDegradation) {
  GrayDetector g(Options());
  g.OnReport(Disk(120), "", 0);
  g.OnReport(Disk(120), "", 3'000);
  ASSERT_TRUE(g.gray());
  g.OnReport(Disk(5), "", 4'000);
  g.OnReport(Disk(120), "", 5'000);  // still slow now and then: stays gray
  g.OnReport(Disk(5), "", 6'000);
  g.OnReport(Disk(5), "", 8'999);
  EXPECT_TRUE(g.gray());
  g.OnReport(Disk(5), "", 9'000);
  EXPECT_FALSE(g.gray());
  EXPECT_EQ(g.GrayForMs(9'500), 0u);
  EXPECT_TRUE(g.reason().empty());
}

TEST(GrayDetector, TooFewWritesSayNothing) {
  GrayDetector g(Options());
  for (uint64_t t = 0; t <= 10'000; t += 1'000) g.OnReport(Disk(500, 19), "", t);
  EXPECT_FALSE(g.gray());
}

TEST(GrayDetector, FailingWritesAndAFullDiskAreDegraded) {
  GrayDetector errors(Options());
  uint64_t count = 3;  // failures before the first report are history
  for (uint64_t t = 0; t <= 3'000; t += 1'000) errors.OnReport(Disk(1, 100, count++), "", t);
  EXPECT_FALSE(errors.gray());  // degraded since 1'000: the first report set the baseline
  errors.OnReport(Disk(1, 100, count++), "", 4'000);
  EXPECT_TRUE(errors.gray());
  EXPECT_NE(errors.reason().find("failed"), std::string::npos);

  GrayDetector full(Options());
  full.OnReport(Disk(1, 100, 0, 1000), "", 0);
  full.OnReport(Disk(1, 100, 0, 1000), "", 3'000);
  EXPECT_TRUE(full.gray());
  EXPECT_NE(full.reason().find("free"), std::string::npos);
}

TEST(GrayDetector, PeersTimeoutsAreDegradedLikeASlowDisk) {
  GrayDetector g(Options());
  const std::string accused = "2 of 2 peers saw >= 50 % of their calls to it time out";
  g.OnReport(Disk(1), accused, 0);
  g.OnReport(Disk(1), accused, 2'999);
  EXPECT_FALSE(g.gray());
  g.OnReport(Disk(1), accused, 3'000);
  EXPECT_TRUE(g.gray());
  EXPECT_EQ(g.reason(), accused);
  g.OnReport(Disk(1), "", 4'000);
  EXPECT_TRUE(g.gray()) << "hysteresis: healthy only after as long without";
  g.OnReport(Disk(1), "", 7'000);
  EXPECT_FALSE(g.gray());
}

}  // namespace
}  // namespace tessera::autoadmin
