// Goal: the GAC splits a table's capacity max-min fairly over the routers
// that report (whatever the split of clients, the shares sum to the
// capacity), forgets silent routers, grants nothing for unset or unknown
// tables, and gives an on-demand table twice its peak, growing with use.
#include "gac/gac_allocator.h"

#include <gtest/gtest.h>

#include <numeric>

namespace tessera::gac {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const Clock::time_point kT0 = Clock::time_point(seconds(1000));

pb::TablesResponse Tables(pb::TableCapacity::Mode mode, uint64_t rcu, uint64_t wcu) {
  pb::TablesResponse t;
  pb::TableDescriptor* d = t.add_tables();
  d->set_name("t");
  d->mutable_capacity()->set_mode(mode);
  d->mutable_capacity()->set_rcu(rcu);
  d->mutable_capacity()->set_wcu(wcu);
  return t;
}

pb::GacReportRequest Report(uint32_t router, double write_units, double write_refused,
                            uint32_t elapsed_ms = 1000, const std::string& table = "t") {
  pb::GacReportRequest r;
  r.set_router_id(router);
  r.set_elapsed_ms(elapsed_ms);
  pb::GacTableReport* t = r.add_tables();
  t->set_table(table);
  t->set_write_units(write_units);
  t->set_write_refused_units(write_refused);
  return r;
}

double Sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(FairShares, MeetsSmallDemandsAndSplitsTheRestEvenly) {
  const std::vector<double> demands = {100, 900, 5000};
  const std::vector<double> s = FairShares(1000, demands);
  EXPECT_DOUBLE_EQ(s[0], 100);
  EXPECT_DOUBLE_EQ(s[1], 450);
  EXPECT_DOUBLE_EQ(s[2], 450);
  EXPECT_DOUBLE_EQ(Sum(s), 1000);
  const std::vector<double> low = {100, 200};
  const std::vector<double> slack = FairShares(1000, low);  // 700 left over, split evenly
  EXPECT_DOUBLE_EQ(slack[0], 450);
  EXPECT_DOUBLE_EQ(slack[1], 550);
  EXPECT_TRUE(FairShares(1000, {}).empty());
}

TEST(GacAllocator, SharesSumToTheCapacityWhateverTheSplit) {
  for (double split : {0.5, 0.8, 0.95}) {
    GacAllocator a(GacOptions{});
    a.SetTables(Tables(pb::TableCapacity::CAPACITY_PROVISIONED, 10, 1000));
    // Both routers ask for 2,000/s in total, split `split` : 1 - split.
    (void)a.Report(Report(201, 1000 * split, 1000 * split), kT0);
    auto r1 = a.Report(Report(202, 1000 * (1 - split), 1000 * (1 - split)), kT0);
    auto r0 = a.Report(Report(201, 1000 * split, 1000 * split), kT0 + milliseconds(10));
    ASSERT_EQ(r0.grants_size(), 1);
    ASSERT_EQ(r1.grants_size(), 1);
    EXPECT_NEAR(r0.grants(0).wcu_per_s() + r1.grants(0).wcu_per_s(), 1000, 1e-6) << split;
    EXPECT_NEAR(r0.grants(0).table_write_units_per_s(), 1000, 1e-6);
  }
}

TEST(GacAllocator, ASilentRouterIsForgottenAfterThreeIntervals) {
  GacAllocator a(GacOptions{});
  a.SetTables(Tables(pb::TableCapacity::CAPACITY_PROVISIONED, 10, 1000));
  (void)a.Report(Report(201, 2000, 0), kT0);
  EXPECT_NEAR(a.Report(Report(202, 2000, 0), kT0).grants(0).wcu_per_s(), 500, 1e-6);
  auto alone = a.Report(Report(202, 2000, 0), kT0 + seconds(4));
  EXPECT_NEAR(alone.grants(0).wcu_per_s(), 1000, 1e-6);
}

TEST(GacAllocator, UnsetAndUnknownTablesGetNoShare) {
  GacAllocator a(GacOptions{});
  a.SetTables(Tables(pb::TableCapacity::CAPACITY_UNSET, 0, 0));
  auto r = a.Report(Report(201, 10, 0), kT0);
  ASSERT_EQ(r.grants_size(), 1);
  EXPECT_EQ(r.grants(0).capacity().mode(), pb::TableCapacity::CAPACITY_UNSET);
  EXPECT_EQ(a.Report(Report(201, 10, 0, 1000, "other"), kT0).grants_size(), 0);
}

TEST(GacAllocator, OnDemandAdmitsTwiceThePeakAndGrowsWithUse) {
  GacOptions o;
  o.on_demand_initial_wcu = 100;
  GacAllocator a(o);
  a.SetTables(Tables(pb::TableCapacity::CAPACITY_ON_DEMAND, 0, 0));
  auto first = a.Report(Report(201, 50, 0), kT0);
  EXPECT_NEAR(first.grants(0).wcu_per_s(), 200, 1e-6);  // twice the initial peak
  EXPECT_EQ(first.grants(0).capacity().wcu(), 200u);
  // A step to 200/s (twice the peak) is admitted; the peak follows it.
  auto step = a.Report(Report(201, 200, 0), kT0 + seconds(1));
  EXPECT_NEAR(step.grants(0).wcu_per_s(), 400, 1e-6);
  // Keeps the peak when the load drops.
  auto quiet = a.Report(Report(201, 10, 0), kT0 + seconds(2));
  EXPECT_NEAR(quiet.grants(0).wcu_per_s(), 400, 1e-6);
}

TEST(GacAllocator, OnDemandPeakSurvivesARestartThroughTheRoutersReports) {
  GacOptions o;
  o.on_demand_initial_wcu = 100;
  GacAllocator restarted(o);  // a fresh instance: the peak starts over
  restarted.SetTables(Tables(pb::TableCapacity::CAPACITY_ON_DEMAND, 0, 0));
  pb::GacReportRequest r = Report(201, 10, 0);
  r.mutable_tables(0)->set_write_peak_units_per_s(800);  // from the router's last grant
  auto grant = restarted.Report(r, kT0);
  EXPECT_EQ(grant.grants(0).capacity().wcu(), 1600u);
  EXPECT_NEAR(grant.grants(0).wcu_per_s(), 1600, 1e-6);
  // A lower (or absent) reported peak never lowers it.
  auto later = restarted.Report(Report(201, 10, 0), kT0 + seconds(1));
  EXPECT_EQ(later.grants(0).capacity().wcu(), 1600u);
}

TEST(GacAllocator, ATableDroppedByMetaIsForgotten) {
  GacAllocator a(GacOptions{});
  a.SetTables(Tables(pb::TableCapacity::CAPACITY_PROVISIONED, 10, 1000));
  EXPECT_EQ(a.Report(Report(201, 10, 0), kT0).grants_size(), 1);
  a.SetTables(pb::TablesResponse());
  EXPECT_EQ(a.Report(Report(201, 10, 0), kT0).grants_size(), 0);
}

TEST(GacAllocator, AnObserverRecordsNothingAndReadsTheConsumption) {
  GacAllocator a(GacOptions{});
  a.SetTables(Tables(pb::TableCapacity::CAPACITY_PROVISIONED, 10, 1000));
  (void)a.Report(Report(201, 700, 0), kT0);
  pb::GacReportRequest observe = Report(7, 5000, 5000);
  observe.set_observer(true);
  auto seen = a.Report(observe, kT0);
  ASSERT_EQ(seen.grants_size(), 1);
  EXPECT_NEAR(seen.grants(0).table_write_units_per_s(), 700, 1e-6);
  EXPECT_EQ(seen.grants(0).wcu_per_s(), 0);
  // The observer is no router: router 201 still gets the whole capacity's
  // even split with nobody else.
  EXPECT_NEAR(a.Report(Report(201, 700, 0), kT0).grants(0).wcu_per_s(), 1000, 1e-6);
}

}  // namespace
}  // namespace tessera::gac
