// Goal: availability windows count the operations invoked in them, the
// longest gap between writes that took effect, and latency percentiles;
// the checker fails when the share outside faults is too low.
#include "experiment/availability.h"

#include <gtest/gtest.h>

namespace tessera::experiment {
namespace {

OpRecord Op(OpKind kind, uint64_t t0_ms, uint64_t latency_ms, OpOutcome outcome) {
  OpRecord op;
  op.kind = kind;
  op.key = "k";
  op.invoke_us = t0_ms * 1000;
  op.complete_us = (t0_ms + latency_ms) * 1000;
  op.outcome = outcome;
  return op;
}

TEST(AvailabilityTest, WindowsCountSharesGapsAndLatencies) {
  std::vector<OpRecord> ops;
  // Outside faults, [0, 10 s): a write every second, 2 ms each.
  for (uint64_t s = 0; s < 10; ++s) ops.push_back(Op(OpKind::kWrite, s * 1000, 2, OpOutcome::kOk));
  // The fault [10 s, 20 s): four writes time out, one succeeds at 18 s.
  for (uint64_t s = 10; s < 14; ++s) ops.push_back(Op(OpKind::kWrite, s * 1000, 2000, OpOutcome::kInfo));
  ops.push_back(Op(OpKind::kWrite, 18'000, 10, OpOutcome::kOk));
  // After it, [20 s, 30 s): reads only.
  for (uint64_t s = 20; s < 30; ++s) ops.push_back(Op(OpKind::kRead, s * 1000, 1, OpOutcome::kOk));

  const auto windows = SummarizeAvailability(ops, {{"partition-az az3", 10'000'000, 20'000'000}},
                                             30'000'000);
  ASSERT_EQ(windows.size(), 2u);
  const pb::AvailabilityWindow& fault = windows[0];
  EXPECT_EQ(fault.ops(), 5u);
  EXPECT_EQ(fault.ok(), 1u);
  EXPECT_DOUBLE_EQ(fault.ok_share(), 0.2);
  EXPECT_EQ(fault.longest_write_gap_ms(), 8010u);  // 10 s to the write completed at 18.01 s
  EXPECT_DOUBLE_EQ(fault.latency_ms_p50(), 10.0);

  const pb::AvailabilityWindow& calm = windows[1];
  EXPECT_EQ(calm.label(), "outside faults");
  EXPECT_EQ(calm.ops(), 20u);
  EXPECT_DOUBLE_EQ(calm.ok_share(), 1.0);
  // From the last write (18.01 s) to the end, only its time outside the fault: 10 s.
  EXPECT_EQ(calm.longest_write_gap_ms(), 10000u);
  EXPECT_DOUBLE_EQ(calm.latency_ms_p50(), 1.0);
  EXPECT_DOUBLE_EQ(calm.latency_ms_p99(), 2.0);
}

pb::AvailabilityChecker OutsideFaults(double min_share) {
  pb::AvailabilityChecker bounds;
  bounds.set_min_ok_share_outside_faults(min_share);
  return bounds;
}

TEST(AvailabilityTest, CheckerFailsBelowTheRequiredShare) {
  std::vector<OpRecord> ops = {Op(OpKind::kRead, 0, 1, OpOutcome::kOk),
                               Op(OpKind::kRead, 1, 1, OpOutcome::kFail)};
  const auto windows = SummarizeAvailability(ops, {}, 10'000);
  EXPECT_TRUE(CheckAvailability(windows, OutsideFaults(0.5)).passed());
  const pb::CheckerResult r = CheckAvailability(windows, OutsideFaults(0.9));
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("below the required"), std::string::npos) << r.summary();
}

// A steady run of 200 reads of 2 ms before a fault [10 s, 20 s) whose first
// second fails everything, then `tail_ms` reads after it.
std::vector<OpRecord> FailoverRun(uint64_t tail_ms, int failures_after_first_s) {
  std::vector<OpRecord> ops;
  for (uint64_t i = 0; i < 200; ++i) ops.push_back(Op(OpKind::kRead, i * 50, 2, OpOutcome::kOk));
  for (uint64_t i = 0; i < 10; ++i) ops.push_back(Op(OpKind::kWrite, 10'000 + i * 100, 1000, OpOutcome::kInfo));
  for (int i = 0; i < 100; ++i) {
    const OpOutcome outcome = i < failures_after_first_s ? OpOutcome::kFail : OpOutcome::kOk;
    ops.push_back(Op(OpKind::kWrite, 11'000 + static_cast<uint64_t>(i) * 90, 3, outcome));
  }
  for (uint64_t i = 0; i < 200; ++i) ops.push_back(Op(OpKind::kRead, 20'000 + i * 50, tail_ms, OpOutcome::kOk));
  return ops;
}

// Goal: a fault window's share after its first second leaves the
// failover's first second out, and the checker holds it to its bound.
TEST(AvailabilityTest, ShareAfterTheFirstSecondOfAFault) {
  const std::vector<FaultWindow> fault = {{"partition-az az2", 10'000'000, 20'000'000}};
  auto windows = SummarizeAvailability(FailoverRun(2, 0), fault, 30'000'000);
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].ops(), 110u);
  EXPECT_NEAR(windows[0].ok_share(), 100.0 / 110, 1e-9);
  EXPECT_EQ(windows[0].ops_after_first_s(), 100u);
  EXPECT_DOUBLE_EQ(windows[0].ok_share_after_first_s(), 1.0);
  pb::AvailabilityChecker bounds;
  bounds.set_min_ok_share_after_first_s(0.99);
  EXPECT_TRUE(CheckAvailability(windows, bounds).passed());

  windows = SummarizeAvailability(FailoverRun(2, 2), fault, 30'000'000);
  EXPECT_DOUBLE_EQ(windows[0].ok_share_after_first_s(), 0.98);
  const pb::CheckerResult r = CheckAvailability(windows, bounds);
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("after the first second of partition-az az2"), std::string::npos)
      << r.summary();
  // Reported, not checked, without a bound.
  EXPECT_TRUE(CheckAvailability(windows, pb::AvailabilityChecker()).passed());
}

// Goal: the p99 outside faults is compared with the p99 before the first
// fault, and the checker holds the ratio to its bound.
TEST(AvailabilityTest, P99OutsideFaultsOverTheSteadyP99) {
  const std::vector<FaultWindow> fault = {{"kill az2-n1", 10'000'000, 20'000'000}};
  auto windows = SummarizeAvailability(FailoverRun(3, 0), fault, 30'000'000);
  const pb::AvailabilityWindow& calm = windows.back();
  EXPECT_DOUBLE_EQ(calm.steady_latency_ms_p99(), 2.0);
  EXPECT_DOUBLE_EQ(calm.latency_ms_p99(), 3.0);
  EXPECT_DOUBLE_EQ(calm.p99_over_steady(), 1.5);
  pb::AvailabilityChecker bounds;
  bounds.set_max_p99_over_steady(2.0);
  EXPECT_TRUE(CheckAvailability(windows, bounds).passed());

  windows = SummarizeAvailability(FailoverRun(9, 0), fault, 30'000'000);
  EXPECT_DOUBLE_EQ(windows.back().p99_over_steady(), 4.5);
  const pb::CheckerResult r = CheckAvailability(windows, bounds);
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("4.50x the steady p99"), std::string::npos) << r.summary();

  // Too few operations before the first fault: no steady figure, nothing checked.
  std::vector<OpRecord> ops = FailoverRun(9, 0);
  ops.erase(ops.begin() + 50, ops.begin() + 200);
  windows = SummarizeAvailability(ops, fault, 30'000'000);
  EXPECT_EQ(windows.back().p99_over_steady(), 0.0);
  EXPECT_TRUE(CheckAvailability(windows, bounds).passed());
}

}  // namespace
}  // namespace tessera::experiment
