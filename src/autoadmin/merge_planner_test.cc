// Goal: two adjacent partitions of one table merge only when together they
// are small (below merge_bytes, capped at split_bytes / 2) and cold (below
// merge_load_percent of every split trigger) for merge_after, never across a
// created split point, never `_s3`, never a splitting, busy or unhealthy
// group, each group in one merge at most, within room; the side further
// ahead in its log survives.
#include "autoadmin/merge_planner.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

namespace tessera::autoadmin {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

ClusterView ThreeNodes() {
  ClusterView v;
  for (uint32_t id = 1; id <= 3; ++id) v.nodes[id].id = id;
  return v;
}

// A partition [start, end) of `table` led by node 1, reporting `chosen`.
GroupView& AddPartition(ClusterView& v, uint64_t id, const std::string& start, const std::string& end,
                        uint64_t bytes, uint64_t chosen = 100, const std::string& table = "kv") {
  GroupView& g = v.groups[id];
  g.descriptor.set_table(table);
  g.descriptor.set_group_id(id);
  g.descriptor.set_start_key(start);
  g.descriptor.set_end_key(end);
  for (uint32_t n = 1; n <= 3; ++n) {
    pb::ReplicaPlacement* r = g.descriptor.add_replicas();
    r->set_node_id(n);
    r->set_role(pb::REPLICA_VOTER);
    ReplicaReport& report = v.nodes[n].groups[id];
    report.role = n == 1 ? "leader" : "follower";
    report.chosen = chosen;
  }
  g.leader = 1;
  g.state_bytes = bytes;
  return g;
}

PlannerOptions Merging(uint64_t after_ms = 10'000) {
  PlannerOptions o;
  o.split_bytes = 512 * kMiB;
  o.merge_bytes = 128 * kMiB;
  o.merge_after_ms = after_ms;
  o.merge_load_percent = 25;
  o.max_concurrent = 4;
  return o;
}

TEST(MergePlanner, MergesASmallColdPairAfterMergeAfter) {
  ClusterView v = ThreeNodes();
  AddPartition(v, 10, "", "m", 10 * kMiB);
  AddPartition(v, 11, "m", "", 20 * kMiB);
  MergePlanner planner;
  MergePlan plan = planner.Plan(v, Merging(), {}, 4, 1'000);
  EXPECT_TRUE(plan.decisions.empty());
  EXPECT_EQ(plan.waiting, 1u);
  EXPECT_TRUE(planner.Plan(v, Merging(), {}, 4, 10'999).decisions.empty());
  plan = planner.Plan(v, Merging(), {}, 4, 11'000);
  ASSERT_EQ(plan.decisions.size(), 1u);
  const MergeDecision& d = plan.decisions[0];
  EXPECT_EQ(d.table, "kv");
  EXPECT_EQ(d.left.group_id(), 10u);
  EXPECT_EQ(d.right.group_id(), 11u);
  EXPECT_EQ(d.state_bytes, 30 * kMiB);
  EXPECT_EQ(d.survivor_group_id, 10u);  // tie in chosen slots: the left
  EXPECT_EQ(d.donor_group_id, 11u);
  EXPECT_EQ(d.survivor_leader, 1u);
  EXPECT_NE(d.reason.find("cold for 10 s"), std::string::npos) << d.reason;
}

TEST(MergePlanner, TheSideFurtherAheadInItsLogSurvives) {
  ClusterView v = ThreeNodes();
  AddPartition(v, 10, "", "m", kMiB, /*chosen=*/500);
  AddPartition(v, 11, "m", "", kMiB, /*chosen=*/900);
  MergePlanner planner;
  const MergePlan plan = planner.Plan(v, Merging(0), {}, 4, 0);
  ASSERT_EQ(plan.decisions.size(), 1u);
  EXPECT_EQ(plan.decisions[0].survivor_group_id, 11u);
  EXPECT_EQ(plan.decisions[0].donor_group_id, 10u);
}

TEST(MergePlanner, ABreakInTheColdRoundsStartsTheWaitAgain) {
  ClusterView v = ThreeNodes();
  AddPartition(v, 10, "", "m", kMiB);
  GroupView& right = AddPartition(v, 11, "m", "", kMiB);
  MergePlanner planner;
  EXPECT_TRUE(planner.Plan(v, Merging(), {}, 4, 0).decisions.empty());
  right.load.write_units_per_s = 500;  // 50% of the write cap: hot for a merge
  right.load.wcu_max = 1000;
  EXPECT_TRUE(planner.Plan(v, Merging(), {}, 4, 5'000).decisions.empty());
  right.load.write_units_per_s = 0;
  EXPECT_TRUE(planner.Plan(v, Merging(), {}, 4, 6'000).decisions.empty());
  EXPECT_TRUE(planner.Plan(v, Merging(), {}, 4, 15'999).decisions.empty());
  EXPECT_EQ(planner.Plan(v, Merging(), {}, 4, 16'000).decisions.size(), 1u);
}

TEST(MergePlanner, TooBigTogetherOrOffIsNoMerge) {
  ClusterView v = ThreeNodes();
  AddPartition(v, 10, "", "m", 70 * kMiB);
  AddPartition(v, 11, "m", "", 60 * kMiB);  // 130 MiB >= 128 MiB
  MergePlanner planner;
  EXPECT_TRUE(planner.Plan(v, Merging(0), {}, 4, 0).decisions.empty());
  v.groups[11].state_bytes = 50 * kMiB;
  EXPECT_EQ(planner.Plan(v, Merging(0), {}, 4, 0).decisions.size(), 1u);
  PlannerOptions off = Merging(0);
  off.merge_bytes = 0;
  EXPECT_TRUE(planner.Plan(v, off, {}, 4, 0).decisions.empty());
  // merge_bytes above split_bytes / 2 counts as split_bytes / 2.
  PlannerOptions capped = Merging(0);
  capped.merge_bytes = 1024 * kMiB;
  capped.split_bytes = 200 * kMiB;
  EXPECT_EQ(EffectiveMergeBytes(capped), 100 * kMiB);
  EXPECT_TRUE(planner.Plan(v, capped, {}, 4, 0).decisions.empty());  // 120 MiB
}

TEST(MergePlanner, EverySplitTriggerAboveItsShareKeepsThePairApart) {
  ClusterView v = ThreeNodes();
  GroupView& left = AddPartition(v, 10, "", "m", kMiB);
  GroupView& right = AddPartition(v, 11, "m", "", kMiB);
  MergePlanner planner;
  const PlannerOptions o = Merging(0);  // consumption 80%, boost 50%: 20% and 12.5% for merges
  left.load.rcu_max = right.load.rcu_max = 3000;
  left.load.read_units_per_s = 250;
  right.load.read_units_per_s = 230;  // 480 < 3000 * 0.8 * 0.25 = 600
  EXPECT_EQ(planner.Plan(v, o, {}, 4, 0).decisions.size(), 1u);
  right.load.read_units_per_s = 350;  // 600: the merged partition would be near a split
  EXPECT_TRUE(planner.Plan(v, o, {}, 4, 0).decisions.empty());
  right.load.read_units_per_s = 0;
  left.load.boost_permille = 125;  // 12.5% boost: 50% * 25%
  EXPECT_TRUE(planner.Plan(v, o, {}, 4, 0).decisions.empty());
  left.load.boost_permille = 124;
  EXPECT_EQ(planner.Plan(v, o, {}, 4, 0).decisions.size(), 1u);
  PlannerOptions by_load = o;
  by_load.split_load = 1000;
  left.load.requests_per_s = 200;
  right.load.requests_per_s = 50;  // 250 >= 1000 * 25%
  EXPECT_TRUE(planner.Plan(v, by_load, {}, 4, 0).decisions.empty());
  right.load.requests_per_s = 49;
  EXPECT_EQ(planner.Plan(v, by_load, {}, 4, 0).decisions.size(), 1u);
  // split_load off: requests alone never keep a pair apart.
  right.load.requests_per_s = 1'000'000;
  EXPECT_EQ(planner.Plan(v, o, {}, 4, 0).decisions.size(), 1u);
}

TEST(MergePlanner, CreatedSplitPointsAndS3AndNonAdjacentRangesStay) {
  ClusterView v = ThreeNodes();
  AddPartition(v, 10, "", "g", kMiB);
  AddPartition(v, 11, "g", "p", kMiB);
  AddPartition(v, 20, "", "k", kMiB, 100, "_s3");
  AddPartition(v, 21, "k", "", kMiB, 100, "_s3");
  AddPartition(v, 30, "", "c", kMiB, 100, "gap");
  AddPartition(v, 31, "d", "", kMiB, 100, "gap");  // not adjacent (a map in transition)
  MergePlanner planner;
  v.created_split_points["kv"] = {"g"};
  EXPECT_TRUE(planner.Plan(v, Merging(0), {}, 4, 0).decisions.empty());
  v.created_split_points["kv"] = {"x"};
  const MergePlan plan = planner.Plan(v, Merging(0), {}, 4, 0);
  ASSERT_EQ(plan.decisions.size(), 1u);
  EXPECT_EQ(plan.decisions[0].table, "kv");
}

TEST(MergePlanner, UnhealthySplittingOrBusyGroupsWait) {
  ClusterView v = ThreeNodes();
  AddPartition(v, 10, "", "m", kMiB);
  GroupView& right = AddPartition(v, 11, "m", "", kMiB);
  MergePlanner planner;
  const PlannerOptions o = Merging(0);
  v.nodes[3].health = NodeHealth::kUnreachable;
  EXPECT_TRUE(planner.Plan(v, o, {}, 4, 0).decisions.empty());
  v.nodes[3].health = NodeHealth::kHealthy;
  v.nodes[1].groups[11].membership_pending = true;
  EXPECT_TRUE(planner.Plan(v, o, {}, 4, 0).decisions.empty());
  v.nodes[1].groups[11].membership_pending = false;
  right.leader = 0;
  EXPECT_TRUE(planner.Plan(v, o, {}, 4, 0).decisions.empty());
  right.leader = 1;
  right.splitting = true;
  EXPECT_TRUE(planner.Plan(v, o, {}, 4, 0).decisions.empty());
  right.splitting = false;
  EXPECT_TRUE(planner.Plan(v, o, {11}, 4, 0).decisions.empty());
  right.descriptor.mutable_replicas(2)->set_role(pb::REPLICA_LEARNER);
  EXPECT_TRUE(planner.Plan(v, o, {}, 4, 0).decisions.empty());
  right.descriptor.mutable_replicas(2)->set_role(pb::REPLICA_VOTER);
  EXPECT_EQ(planner.Plan(v, o, {}, 4, 0).decisions.size(), 1u);
}

TEST(MergePlanner, EachGroupInOneMergeSmallestFirstWithinRoom) {
  ClusterView v = ThreeNodes();
  AddPartition(v, 10, "", "d", 5 * kMiB);
  AddPartition(v, 11, "d", "h", 1 * kMiB);
  AddPartition(v, 12, "h", "p", 1 * kMiB);
  AddPartition(v, 13, "p", "t", 9 * kMiB);
  AddPartition(v, 14, "t", "", 2 * kMiB);
  MergePlanner planner;
  // Pairs: 10+11 6 MiB, 11+12 2 MiB, 12+13 10 MiB, 13+14 11 MiB.
  MergePlan plan = planner.Plan(v, Merging(0), {}, 4, 0);
  ASSERT_EQ(plan.decisions.size(), 2u);
  EXPECT_EQ(plan.decisions[0].left.group_id(), 11u);  // smallest
  EXPECT_EQ(plan.decisions[0].right.group_id(), 12u);
  EXPECT_EQ(plan.decisions[1].left.group_id(), 13u);  // 10+11 and 12+13 share a group with it
  EXPECT_EQ(plan.decisions[1].right.group_id(), 14u);
  plan = planner.Plan(v, Merging(0), {}, 1, 0);
  ASSERT_EQ(plan.decisions.size(), 1u);
  EXPECT_EQ(plan.decisions[0].left.group_id(), 11u);
  EXPECT_TRUE(planner.Plan(v, Merging(0), {}, 0, 0).decisions.empty());
}

TEST(MergePlanner, RoomCountsSplitsAndMergesInProgress) {
  ClusterView v = ThreeNodes();
  AddPartition(v, 10, "", "m", kMiB).splitting = true;
  AddPartition(v, 11, "m", "", kMiB);
  PlannerOptions o = Merging(0);
  o.max_concurrent = 3;
  EXPECT_EQ(MergeRoom(v, o, 0), 2u);
  EXPECT_EQ(MergeRoom(v, o, 1), 1u);
  EXPECT_EQ(MergeRoom(v, o, 5), 0u);
}

}  // namespace
}  // namespace tessera::autoadmin
