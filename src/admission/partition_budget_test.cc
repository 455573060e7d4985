// Goal: a partition's budget admits its rate, saves unused capacity as
// burst credit up to its window (and no more), spends credit only when
// allowed (the node has spare capacity), and the node-wide bucket refuses
// what the node cannot take whatever the partitions hold; all on a fake
// clock (time points chosen by the test).
#include "admission/node_admission.h"
#include "admission/partition_budget.h"

#include <gtest/gtest.h>

namespace tessera::admission {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const Clock::time_point kT0 = Clock::time_point(seconds(1000));

// Takes one unit at a time at `now` until refused; returns how many.
int Drain(PartitionBudget& b, Clock::time_point now, bool burst_allowed) {
  int n = 0;
  while (b.TryTake(now, 1, burst_allowed) != BudgetSource::kRefused) ++n;
  return n;
}

TEST(PartitionBudget, SteadyBudgetHoldsOneSecondAndNoCreditAtFirst) {
  PartitionBudget b(100, 300, kT0);
  EXPECT_DOUBLE_EQ(b.burst_credit(kT0), 0);
  EXPECT_EQ(Drain(b, kT0, true), 100);
  EXPECT_EQ(Drain(b, kT0 + milliseconds(500), true), 50);  // refilled at its rate
}

TEST(PartitionBudget, IdleTimeBecomesCreditUpToTheWindow) {
  PartitionBudget b(100, 10, kT0);  // full at once: every idle second is unused
  EXPECT_NEAR(b.burst_credit(kT0 + seconds(3)), 300, 1e-6);
  EXPECT_NEAR(b.burst_credit(kT0 + seconds(60)), 1000, 1e-6);  // capped: 10 s worth
}

TEST(PartitionBudget, CreditOnlyFromCapacityNotUsed) {
  PartitionBudget b(100, 10, kT0);
  ASSERT_EQ(Drain(b, kT0, false), 100);
  // The steady budget refills for one second: nothing overflows.
  EXPECT_NEAR(b.burst_credit(kT0 + seconds(1)), 0, 1e-6);
  EXPECT_NEAR(b.burst_credit(kT0 + seconds(2)), 100, 1e-6);
}

TEST(PartitionBudget, BurstSpentOnlyWhenAllowed) {
  PartitionBudget b(100, 300, kT0);
  const auto t = kT0 + seconds(300);  // idle for the whole window
  EXPECT_NEAR(b.burst_credit(t), 30'000, 1e-3);
  EXPECT_EQ(Drain(b, t, /*burst_allowed=*/false), 100);  // the steady budget only
  EXPECT_EQ(b.TryTake(t, 1, true), BudgetSource::kBurst);
  EXPECT_EQ(Drain(b, t, true), 29'999);
  EXPECT_EQ(b.TryTake(t, 1, true), BudgetSource::kRefused);
}

TEST(PartitionBudget, RefusalTakesNothingAndReturnGivesBack) {
  PartitionBudget b(10, 1, kT0);
  EXPECT_EQ(b.TryTake(kT0, 11, true), BudgetSource::kRefused);
  EXPECT_DOUBLE_EQ(b.steady_available(kT0), 10);
  ASSERT_EQ(b.TryTake(kT0, 4, true), BudgetSource::kSteady);
  b.Return(kT0, 4, BudgetSource::kSteady);
  EXPECT_DOUBLE_EQ(b.steady_available(kT0), 10);
}

TEST(PartitionBudget, RateChangeKeepsCreditCapped) {
  PartitionBudget b(100, 10, kT0);
  ASSERT_NEAR(b.burst_credit(kT0 + seconds(20)), 1000, 1e-6);
  b.SetRate(10, 10, kT0 + seconds(20));
  EXPECT_NEAR(b.burst_credit(kT0 + seconds(20)), 100, 1e-6);
  EXPECT_EQ(Drain(b, kT0 + seconds(20), false), 10);
}

PartitionCapacity Provisioned(double rcu, double wcu, uint32_t partitions) {
  return PartitionCapacity{"t", CapacityMode::kProvisioned, rcu, wcu, partitions};
}

TEST(NodeAdmission, PartitionShareIsTableCapacityDividedAndCapped) {
  NodeAdmissionOptions o;
  o.partition_wcu_max = 50;
  NodeAdmission a(o, kT0);
  a.SetPartition(1, Provisioned(400, 200, 4), kT0);
  EXPECT_DOUBLE_EQ(*a.PartitionRate(1, CapacityKind::kRead), 100);
  EXPECT_DOUBLE_EQ(*a.PartitionRate(1, CapacityKind::kWrite), 50);  // 200/4, at the cap
  a.SetPartition(1, Provisioned(400, 1000, 4), kT0);
  EXPECT_DOUBLE_EQ(*a.PartitionRate(1, CapacityKind::kWrite), 50);  // capped
}

TEST(NodeAdmission, UnsetAndUnknownPartitionsAreNotCharged) {
  NodeAdmissionOptions o;
  o.node_wcu_per_s = 1;
  NodeAdmission a(o, kT0);
  a.SetPartition(1, PartitionCapacity{"kv", CapacityMode::kUnset, 0, 0, 1}, kT0);
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(a.Admit(1, CapacityKind::kWrite, 5, kT0).admitted);
    EXPECT_FALSE(a.Admit(2, CapacityKind::kWrite, 5, kT0).charged);
  }
}

TEST(NodeAdmission, OnDemandIsLimitedOnlyByTheNode) {
  NodeAdmissionOptions o;
  o.node_wcu_per_s = 10;
  NodeAdmission a(o, kT0);
  a.SetPartition(1, PartitionCapacity{"t", CapacityMode::kOnDemand, 0, 0, 1}, kT0);
  int admitted = 0;
  while (a.Admit(1, CapacityKind::kWrite, 1, kT0).admitted) ++admitted;
  EXPECT_EQ(admitted, 10);
}

// The burst case: after an idle window a partition absorbs a burst above
// its rate while the node is idle, and not while another partition keeps
// the node busy.
TEST(NodeAdmission, BurstOnlyWhileTheNodeHasSpare) {
  NodeAdmissionOptions o;
  o.burst_window_s = 5;
  o.node_wcu_per_s = 1000;
  o.node_spare_fraction = 0.5;
  for (bool busy : {false, true}) {
    NodeAdmission a(o, kT0);
    a.SetPartition(1, Provisioned(100, 100, 1), kT0);
    a.SetPartition(2, Provisioned(10'000, 10'000, 1), kT0);
    const auto t = kT0 + seconds(5);  // partition 1 idle for its window
    if (busy) {
      int taken = 0;  // partition 2 takes most of the node's second
      while (taken < 700 && a.Admit(2, CapacityKind::kWrite, 1, t).admitted) ++taken;
      ASSERT_EQ(taken, 700);
    }
    int admitted = 0;
    int burst = 0;
    for (int i = 0; i < 1000; ++i) {
      const Admission r = a.Admit(1, CapacityKind::kWrite, 1, t);
      admitted += r.admitted;
      burst += r.admitted && r.source == BudgetSource::kBurst;
    }
    if (busy) {
      EXPECT_EQ(admitted, 100);  // its steady second only
      EXPECT_EQ(burst, 0);
    } else {
      // 100 steady, then credit until the node keeps only half its second.
      EXPECT_EQ(admitted, 500);
      EXPECT_EQ(burst, 400);
    }
  }
}

TEST(NodeAdmission, NodeBucketRefusesWhateverThePartitionHolds) {
  NodeAdmissionOptions o;
  o.node_rcu_per_s = 20;
  NodeAdmission a(o, kT0);
  a.SetPartition(1, Provisioned(1000, 1000, 1), kT0);
  int admitted = 0;
  for (int i = 0; i < 100; ++i) admitted += a.Admit(1, CapacityKind::kRead, 1, kT0).admitted;
  EXPECT_EQ(admitted, 20);
}

TEST(NodeAdmission, ReturnGivesBackAndRetainOnlyForgets) {
  NodeAdmission a(NodeAdmissionOptions{}, kT0);
  a.SetPartition(1, Provisioned(5, 5, 1), kT0);
  const Admission r = a.Admit(1, CapacityKind::kWrite, 5, kT0);
  ASSERT_TRUE(r.admitted);
  EXPECT_FALSE(a.Admit(1, CapacityKind::kWrite, 1, kT0).admitted);
  a.Return(1, CapacityKind::kWrite, r, kT0);
  EXPECT_TRUE(a.Admit(1, CapacityKind::kWrite, 5, kT0).admitted);
  a.RetainOnly({});
  EXPECT_FALSE(a.TableOf(1).has_value());
  EXPECT_FALSE(a.Admit(1, CapacityKind::kWrite, 5, kT0).charged);
}

TEST(NodeAdmission, OptionsOutOfRangeAreNamed) {
  NodeAdmissionOptions o;
  EXPECT_EQ(NodeAdmissionOptionsError(o), "");
  o.burst_window_s = -1;
  EXPECT_NE(NodeAdmissionOptionsError(o), "");
  o = {};
  o.node_spare_fraction = 2;
  EXPECT_NE(NodeAdmissionOptionsError(o), "");
}

// Adaptive capacity: a table of 1,000 WCU over two partitions (500 each);
// the hot one is asked for 800/s while the table uses 900/s.
TEST(NodeAdmissionAdaptive, AHotPartitionTakesWhatTheTableLeavesThenGivesItBack) {
  NodeAdmissionOptions o;
  o.burst_window_s = 0;
  NodeAdmission a(o, kT0);
  a.SetPartition(1, PartitionCapacity{"t", CapacityMode::kProvisioned, 1000, 1000, 2}, kT0);
  a.SetPartition(2, PartitionCapacity{"t", CapacityMode::kProvisioned, 1000, 1000, 2}, kT0);
  Clock::time_point now = kT0;
  for (int second = 1; second <= 8; ++second) {
    for (int i = 0; i < 800; ++i) (void)a.Admit(1, CapacityKind::kWrite, 1, now);
    now += seconds(1);
    a.Adapt({{"t", {0, 900}}}, now);
  }
  const double hot = *a.PartitionRate(1, CapacityKind::kWrite);
  EXPECT_GT(hot, 800);   // what it is asked for, with room
  EXPECT_LE(hot, 900);   // never more than the others leave (1,000 - 100)
  EXPECT_DOUBLE_EQ(*a.PartitionRate(2, CapacityKind::kWrite), 500);  // never below the base
  // Static again once the table's consumption is unknown.
  a.Adapt({}, now + seconds(1));
  EXPECT_DOUBLE_EQ(*a.PartitionRate(1, CapacityKind::kWrite), 500);
}

TEST(NodeAdmissionAdaptive, ATableAtItsCapacityKeepsStaticShares) {
  NodeAdmissionOptions o;
  NodeAdmission a(o, kT0);
  a.SetPartition(1, PartitionCapacity{"t", CapacityMode::kProvisioned, 1000, 1000, 2}, kT0);
  Clock::time_point now = kT0;
  for (int second = 1; second <= 5; ++second) {
    for (int i = 0; i < 800; ++i) (void)a.Admit(1, CapacityKind::kWrite, 1, now);
    now += seconds(1);
    a.Adapt({{"t", {0, 1300}}}, now);  // the others use 500 + the hot partition's 800
  }
  EXPECT_DOUBLE_EQ(*a.PartitionRate(1, CapacityKind::kWrite), 500);
}

TEST(NodeAdmissionAdaptive, OffKeepsStaticShares) {
  NodeAdmissionOptions o;
  o.adaptive = false;
  NodeAdmission a(o, kT0);
  a.SetPartition(1, PartitionCapacity{"t", CapacityMode::kProvisioned, 1000, 1000, 2}, kT0);
  for (int i = 0; i < 800; ++i) (void)a.Admit(1, CapacityKind::kWrite, 1, kT0);
  a.Adapt({{"t", {0, 100}}}, kT0 + seconds(1));
  EXPECT_DOUBLE_EQ(*a.PartitionRate(1, CapacityKind::kWrite), 500);
}

TEST(NodeAdmissionLoad, ConsumptionPerWindowBoostAndCaps) {
  NodeAdmissionOptions o;
  o.burst_window_s = 0;
  o.partition_wcu_max = 700;
  NodeAdmission a(o, kT0);
  EXPECT_FALSE(a.Load(1, kT0).has_value());
  a.SetPartition(1, PartitionCapacity{"t", CapacityMode::kProvisioned, 1000, 1000, 2}, kT0);
  a.SetPartition(2, PartitionCapacity{"d", CapacityMode::kOnDemand, 0, 0, 1}, kT0);
  a.SetPartition(3, PartitionCapacity{"u", CapacityMode::kUnset, 0, 0, 1}, kT0);
  const milliseconds window(NodeAdmission::kConsumptionWindowMs);
  Clock::time_point now = kT0;
  for (int second = 1; second <= 5; ++second) {
    for (int i = 0; i < 480; ++i) {
      (void)a.Admit(1, CapacityKind::kWrite, 1, now);
      (void)a.Admit(2, CapacityKind::kWrite, 1, now);
      (void)a.Admit(3, CapacityKind::kWrite, 1, now);
    }
    const Admission read = a.Admit(2, CapacityKind::kRead, 1, now);
    a.ChargeMore(2, CapacityKind::kRead, 9, now);  // 10 units read per second
    const Admission back = a.Admit(2, CapacityKind::kWrite, 50, now);
    a.Return(2, CapacityKind::kWrite, back, now);  // not served: not consumed
    (void)read;
    now += seconds(1);
    a.Adapt({{"t", {0, 480}}}, now);
  }
  // The first window is not over yet: nothing to report.
  EXPECT_DOUBLE_EQ(a.Load(2, kT0 + window - milliseconds(1))->write_units_per_s, 0);
  const PartitionLoad provisioned = *a.Load(1, kT0 + window);
  EXPECT_NEAR(provisioned.write_units_per_s, 480, 1e-6);
  EXPECT_DOUBLE_EQ(provisioned.wcu_max, 700);
  EXPECT_DOUBLE_EQ(provisioned.rcu_max, o.partition_rcu_max);
  EXPECT_GT(provisioned.boost_permille, 0u);  // 480 asked (+ a quarter) of a 500 share
  const PartitionLoad on_demand = *a.Load(2, kT0 + window);
  EXPECT_NEAR(on_demand.write_units_per_s, 480, 1e-6);
  EXPECT_NEAR(on_demand.read_units_per_s, 10, 1e-6);
  EXPECT_EQ(on_demand.boost_permille, 0u);
  EXPECT_DOUBLE_EQ(a.Load(3, kT0 + window)->write_units_per_s, 0);  // not charged
  // Idle for two windows: the last complete window served nothing.
  EXPECT_DOUBLE_EQ(a.Load(2, kT0 + 3 * window)->write_units_per_s, 0);
}

TEST(NodeAdmissionLoad, BoostIsTheRateAboveTheStaticShareInPermille) {
  NodeAdmissionOptions o;
  o.burst_window_s = 0;
  o.adaptive_gain = 1;
  NodeAdmission a(o, kT0);
  a.SetPartition(1, PartitionCapacity{"t", CapacityMode::kProvisioned, 1000, 1000, 2}, kT0);
  for (int i = 0; i < 600; ++i) (void)a.Admit(1, CapacityKind::kWrite, 1, kT0);
  a.Adapt({{"t", {0, 600}}}, kT0 + seconds(1));
  // Target: 1.25 x 600 asked = 750 against a share of 500: 50% above it.
  EXPECT_EQ(a.Load(1, kT0 + seconds(1))->boost_permille, 500u);
  a.Adapt({}, kT0 + seconds(2));
  EXPECT_EQ(a.Load(1, kT0 + seconds(2))->boost_permille, 0u);
}

}  // namespace
}  // namespace tessera::admission
