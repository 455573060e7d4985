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

TEST(AvailabilityTest, CheckerFailsBelowTheRequiredShare) {
  std::vector<OpRecord> ops = {Op(OpKind::kRead, 0, 1, OpOutcome::kOk),
                               Op(OpKind::kRead, 1, 1, OpOutcome::kFail)};
  const auto windows = SummarizeAvailability(ops, {}, 10'000);
  EXPECT_TRUE(CheckAvailability(windows, 0.5).passed());
  const pb::CheckerResult r = CheckAvailability(windows, 0.9);
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("below the required"), std::string::npos) << r.summary();
}

}  // namespace
}  // namespace tessera::experiment
