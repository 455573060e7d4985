// Goal: a router admits a table's requests at the share its GAC granted
// and refuses beyond it, charges nothing before a grant or for an unset
// table, reports (and resets) what it admitted and refused, and when no
// grant comes keeps its last share for hold_ms, then falls back to
// capacity / routers.
#include "gac/router_shares.h"

#include <gtest/gtest.h>

namespace tessera::gac {
namespace {

using admission::CapacityKind;
using admission::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

const Clock::time_point kT0 = Clock::time_point(seconds(1000));

pb::GacTableGrant Grant(double wcu_share, uint64_t table_wcu,
                        pb::TableCapacity::Mode mode = pb::TableCapacity::CAPACITY_PROVISIONED) {
  pb::GacTableGrant g;
  g.set_table("t");
  g.mutable_capacity()->set_mode(mode);
  g.mutable_capacity()->set_rcu(100);
  g.mutable_capacity()->set_wcu(table_wcu);
  g.set_rcu_per_s(50);
  g.set_wcu_per_s(wcu_share);
  return g;
}

int Drain(RouterShares& s, Clock::time_point now) {
  int n = 0;
  while (s.Admit("t", CapacityKind::kWrite, 1, now).admitted && n < 100'000) ++n;
  return n;
}

TEST(RouterShares, UnchargedUntilAGrant) {
  RouterShares s(GacOptions{}, 2);
  for (int i = 0; i < 1000; ++i) {
    const RouterTicket t = s.Admit("t", CapacityKind::kWrite, 1, kT0);
    EXPECT_TRUE(t.admitted);
    EXPECT_FALSE(t.charged);
  }
  const pb::GacReportRequest r = s.TakeReport([](const std::string&) { return true; });
  ASSERT_EQ(r.tables_size(), 1);
  EXPECT_DOUBLE_EQ(r.tables(0).write_units(), 1000);
  EXPECT_DOUBLE_EQ(s.TakeReport([](const std::string&) { return true; }).tables(0).write_units(), 0);
}

TEST(RouterShares, AdmitsTheGrantedRateAndCountsRefusals) {
  RouterShares s(GacOptions{}, 2);
  (void)s.Admit("t", CapacityKind::kWrite, 1, kT0);
  s.ApplyGrant(Grant(300, 1000), kT0);
  EXPECT_EQ(Drain(s, kT0), 300);                     // one second's worth
  EXPECT_EQ(Drain(s, kT0 + milliseconds(500)), 150);  // refilled at the share
  const pb::GacReportRequest r = s.TakeReport([](const std::string&) { return true; });
  EXPECT_DOUBLE_EQ(r.tables(0).write_units(), 451);
  EXPECT_DOUBLE_EQ(r.tables(0).write_refused_units(), 2);
}

TEST(RouterShares, UnsetTablesAreNotCharged) {
  RouterShares s(GacOptions{}, 2);
  (void)s.Admit("t", CapacityKind::kWrite, 1, kT0);
  s.ApplyGrant(Grant(0, 0, pb::TableCapacity::CAPACITY_UNSET), kT0);
  EXPECT_FALSE(s.Admit("t", CapacityKind::kWrite, 1, kT0).charged);
}

TEST(RouterShares, HoldsTheLastShareThenFallsBackToCapacityOverRouters) {
  GacOptions o;
  o.hold_ms = 3'000;
  RouterShares s(o, 2);
  (void)s.Admit("t", CapacityKind::kWrite, 1, kT0);
  s.ApplyGrant(Grant(800, 1000), kT0);
  s.ApplyHold(kT0 + seconds(3));
  EXPECT_DOUBLE_EQ(s.State("t")->write_rate, 800);  // within the hold
  EXPECT_FALSE(s.State("t")->fallback);
  s.ApplyHold(kT0 + milliseconds(3'001));
  EXPECT_TRUE(s.State("t")->fallback);
  EXPECT_DOUBLE_EQ(s.State("t")->write_rate, 500);
  s.ApplyGrant(Grant(700, 1000), kT0 + seconds(5));  // the GAC is back
  EXPECT_FALSE(s.State("t")->fallback);
  EXPECT_DOUBLE_EQ(s.State("t")->write_rate, 700);
}

TEST(RouterShares, ReportsTheOnDemandPeakOfItsLastGrant) {
  RouterShares shares(GacOptions{}, 2);
  (void)shares.Admit("t", CapacityKind::kWrite, 1, kT0);
  shares.ApplyGrant(Grant(300, 600, pb::TableCapacity::CAPACITY_ON_DEMAND), kT0);
  pb::GacReportRequest r = shares.TakeReport([](const std::string&) { return true; });
  ASSERT_EQ(r.tables_size(), 1);
  EXPECT_DOUBLE_EQ(r.tables(0).write_peak_units_per_s(), 300);
  EXPECT_DOUBLE_EQ(r.tables(0).read_peak_units_per_s(), 50);
  RouterShares provisioned(GacOptions{}, 2);
  (void)provisioned.Admit("t", CapacityKind::kWrite, 1, kT0);
  provisioned.ApplyGrant(Grant(300, 600), kT0);
  r = provisioned.TakeReport([](const std::string&) { return true; });
  EXPECT_DOUBLE_EQ(r.tables(0).write_peak_units_per_s(), 0);
}

TEST(RouterShares, ForgetsWhatTheInstanceDoesNotKnowUnlessCharged) {
  RouterShares shares(GacOptions{}, 2);
  (void)shares.Admit("t", CapacityKind::kWrite, 1, kT0);
  (void)shares.Admit("s3:uncapped", CapacityKind::kWrite, 1, kT0);
  shares.ApplyGrant(Grant(300, 600), kT0);
  const pb::GacReportRequest sent = shares.TakeReport([](const std::string&) { return true; });
  pb::GacReportResponse silent;  // an answer without grants (e.g. "t" dropped by meta)
  shares.ForgetUnknown(sent, silent);
  EXPECT_EQ(shares.tracked(), 1u);  // "t" is charged: kept (its hold applies)
  EXPECT_TRUE(shares.State("t").has_value());
  EXPECT_FALSE(shares.State("s3:uncapped").has_value());
}

}  // namespace
}  // namespace tessera::gac
