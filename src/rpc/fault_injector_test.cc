// Goal: FaultInjector decisions follow its rules, are reproducible from the
// seed, and invalid rules are refused.
#include "rpc/fault_injector.h"

#include <gtest/gtest.h>

#include "common/limits.h"

namespace tessera::rpc {
namespace {

TEST(FaultInjector, NoRuleMeansNoFault) {
  FaultInjector faults(7);
  const FaultDecision d = faults.Decide(3);
  EXPECT_FALSE(d.drop);
  EXPECT_EQ(d.delay_ms, 0u);
}

TEST(FaultInjector, ProbabilityOneDropsAllZeroNone) {
  FaultInjector faults(7);
  ASSERT_TRUE(faults.SetRule(1, FaultRule{1.0, 0}).ok());
  ASSERT_TRUE(faults.SetRule(2, FaultRule{0.0, 25}).ok());
  for (int i = 0; i < 1000; ++i) {
    EXPECT_TRUE(faults.Decide(1).drop);
    const FaultDecision d = faults.Decide(2);
    EXPECT_FALSE(d.drop);
    EXPECT_EQ(d.delay_ms, 25u);
    EXPECT_FALSE(faults.Decide(3).drop);  // other destinations untouched
  }
}

TEST(FaultInjector, SameSeedSameDecisions) {
  FaultInjector a(42);
  FaultInjector b(42);
  ASSERT_TRUE(a.SetRule(5, FaultRule{0.3, 0}).ok());
  ASSERT_TRUE(b.SetRule(5, FaultRule{0.3, 0}).ok());
  int drops = 0;
  for (int i = 0; i < 10000; ++i) {
    const bool drop = a.Decide(5).drop;
    EXPECT_EQ(drop, b.Decide(5).drop);
    drops += drop ? 1 : 0;
  }
  EXPECT_GT(drops, 2700);
  EXPECT_LT(drops, 3300);
}

TEST(FaultInjector, RulesAreValidatedAndClearable) {
  FaultInjector faults(1);
  EXPECT_EQ(faults.SetRule(1, FaultRule{1.5, 0}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(faults.SetRule(1, FaultRule{-0.1, 0}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(faults.SetRule(1, FaultRule{0, limits::kRpcFaultDelayMsMax + 1}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(faults.GetRule(1).has_value());
  ASSERT_TRUE(faults.SetRule(1, FaultRule{1.0, 0}).ok());
  ASSERT_TRUE(faults.SetRule(2, FaultRule{1.0, 0}).ok());
  faults.ClearRule(1);
  EXPECT_FALSE(faults.Decide(1).drop);
  EXPECT_TRUE(faults.Decide(2).drop);
  faults.ClearAll();
  EXPECT_FALSE(faults.Decide(2).drop);
}

}  // namespace
}  // namespace tessera::rpc
