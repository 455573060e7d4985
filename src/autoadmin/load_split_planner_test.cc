// Goal: a partition splits by load only after its leader reported it hot
// (consumption above split_consumption_percent of the partition cap, a
// boost above split_boost_percent, or more than split_load) for
// split_after, at the key the leader names, naming its trigger; one hot
// key, sequential keys and unbalanced load are refused with their reason
// and trigger, once counted per group, reason and trigger.
#include "autoadmin/load_split_planner.h"

#include <gtest/gtest.h>

#include <set>

namespace tessera::autoadmin {
namespace {

ClusterView ThreeNodes() {
  ClusterView v;
  for (uint32_t id = 1; id <= 3; ++id) v.nodes[id].id = id;
  return v;
}

GroupView& AddGroup(ClusterView& v, uint64_t id, uint64_t rps, pb::LoadSplitReason reason,
                    const std::string& key = "") {
  GroupView& g = v.groups[id];
  g.descriptor.set_table("kv");
  g.descriptor.set_group_id(id);
  for (uint32_t n = 1; n <= 3; ++n) {
    pb::ReplicaPlacement* r = g.descriptor.add_replicas();
    r->set_node_id(n);
    r->set_role(pb::REPLICA_VOTER);
    v.nodes[n].groups[id].role = n == 1 ? "leader" : "follower";
  }
  g.leader = 1;
  g.load.requests_per_s = rps;
  g.load.reason = reason;
  g.load.split_key = key;
  g.load.share_permille = 500;
  return g;
}

PlannerOptions LoadAt(uint64_t rps, uint64_t after_ms = 10'000) {
  PlannerOptions o;
  o.split_load = rps;
  o.split_after_ms = after_ms;
  return o;
}

TEST(LoadSplitPlanner, SplitsAfterSplitAfterAtTheReportedKey) {
  ClusterView v = ThreeNodes();
  AddGroup(v, 10, 900, pb::LOAD_SPLIT_KEY_FOUND, "k5000");
  AddGroup(v, 11, 100, pb::LOAD_SPLIT_KEY_FOUND, "k1");  // below split_load
  LoadSplitPlanner planner;
  EXPECT_TRUE(planner.Plan(v, LoadAt(500), {}, 4, 1'000).work.empty());
  EXPECT_TRUE(planner.Plan(v, LoadAt(500), {}, 4, 10'999).work.empty());
  const LoadSplitPlan plan = planner.Plan(v, LoadAt(500), {}, 4, 11'000);
  ASSERT_EQ(plan.work.size(), 1u);
  EXPECT_EQ(plan.work[0].parent.group_id(), 10u);
  EXPECT_EQ(plan.work[0].split_key, "k5000");
  EXPECT_EQ(plan.work[0].leader, 1u);
  EXPECT_FALSE(plan.work[0].requested);
  EXPECT_TRUE(plan.refusals.empty());
}

TEST(LoadSplitPlanner, ALoadThatDropsStartsTheWaitAgain) {
  ClusterView v = ThreeNodes();
  GroupView& g = AddGroup(v, 10, 900, pb::LOAD_SPLIT_KEY_FOUND, "k5000");
  LoadSplitPlanner planner;
  planner.Plan(v, LoadAt(500), {}, 4, 0);
  g.load.requests_per_s = 400;
  planner.Plan(v, LoadAt(500), {}, 4, 5'000);
  g.load.requests_per_s = 900;
  EXPECT_TRUE(planner.Plan(v, LoadAt(500), {}, 4, 12'000).work.empty());
  EXPECT_EQ(planner.Plan(v, LoadAt(500), {}, 4, 22'000).work.size(), 1u);
}

TEST(LoadSplitPlanner, OffAtZeroAndWithinTheBudget) {
  ClusterView v = ThreeNodes();
  AddGroup(v, 10, 900, pb::LOAD_SPLIT_KEY_FOUND, "a");
  AddGroup(v, 11, 1900, pb::LOAD_SPLIT_KEY_FOUND, "b");
  AddGroup(v, 12, 1000, pb::LOAD_SPLIT_KEY_FOUND, "c");
  LoadSplitPlanner off;
  off.Plan(v, LoadAt(0, 0), {}, 4, 0);
  EXPECT_TRUE(off.Plan(v, LoadAt(0, 0), {}, 4, 100'000).work.empty());
  LoadSplitPlanner planner;
  const LoadSplitPlan plan = planner.Plan(v, LoadAt(500, 0), /*busy=*/{12}, /*room=*/1, 0);
  ASSERT_EQ(plan.work.size(), 1u);
  EXPECT_EQ(plan.work[0].parent.group_id(), 11u);  // the busiest of those not busy
}

TEST(LoadSplitPlanner, NoSplitWhileAVoterIsDownOrAMembershipChangeIsPending) {
  ClusterView v = ThreeNodes();
  AddGroup(v, 10, 900, pb::LOAD_SPLIT_KEY_FOUND, "a");
  v.nodes[3].health = NodeHealth::kUnreachable;
  LoadSplitPlanner planner;
  EXPECT_TRUE(planner.Plan(v, LoadAt(500, 0), {}, 4, 0).work.empty());
  v.nodes[3].health = NodeHealth::kHealthy;
  v.nodes[1].groups[10].membership_pending = true;
  EXPECT_TRUE(planner.Plan(v, LoadAt(500, 0), {}, 4, 1).work.empty());
  v.nodes[1].groups[10].membership_pending = false;
  EXPECT_EQ(planner.Plan(v, LoadAt(500, 0), {}, 4, 2).work.size(), 1u);
}

TEST(LoadSplitPlanner, HotKeySequentialAndUnbalancedAreRefusedWithTheirReason) {
  ClusterView v = ThreeNodes();
  AddGroup(v, 10, 900, pb::LOAD_SPLIT_ONE_HOT_KEY);
  AddGroup(v, 11, 900, pb::LOAD_SPLIT_SEQUENTIAL);
  AddGroup(v, 12, 900, pb::LOAD_SPLIT_UNBALANCED);
  AddGroup(v, 13, 900, pb::LOAD_SPLIT_TOO_FEW_SAMPLES);  // waits, no refusal
  LoadSplitPlanner planner;
  LoadSplitPlan plan = planner.Plan(v, LoadAt(500, 0), {}, 4, 0);
  EXPECT_TRUE(plan.work.empty());
  ASSERT_EQ(plan.refusals.size(), 3u);
  EXPECT_EQ(plan.refusals[0].reason, pb::LOAD_SPLIT_ONE_HOT_KEY);
  EXPECT_NE(plan.refusals[0].text.find("one_hot_key"), std::string::npos) << plan.refusals[0].text;
  EXPECT_EQ(plan.refusals[1].reason, pb::LOAD_SPLIT_SEQUENTIAL);
  EXPECT_EQ(plan.refusals[2].reason, pb::LOAD_SPLIT_UNBALANCED);
  EXPECT_EQ(plan.new_refusals.size(), 3u);
  // The same reasons next round: shown again, counted once.
  plan = planner.Plan(v, LoadAt(500, 0), {}, 4, 1'000);
  EXPECT_EQ(plan.refusals.size(), 3u);
  EXPECT_TRUE(plan.new_refusals.empty());
  // A hot key that cools into a balanced load splits.
  v.groups[10].load.reason = pb::LOAD_SPLIT_KEY_FOUND;
  v.groups[10].load.split_key = "m";
  plan = planner.Plan(v, LoadAt(500, 0), {}, 4, 2'000);
  ASSERT_EQ(plan.work.size(), 1u);
  EXPECT_EQ(plan.work[0].split_key, "m");
}

TEST(LoadSplitPlanner, SplittingGroupsAreLeftAlone) {
  ClusterView v = ThreeNodes();
  AddGroup(v, 10, 900, pb::LOAD_SPLIT_KEY_FOUND, "a").splitting = true;
  LoadSplitPlanner planner;
  const LoadSplitPlan plan = planner.Plan(v, LoadAt(500, 0), {}, 4, 0);
  EXPECT_TRUE(plan.work.empty());
  EXPECT_TRUE(plan.refusals.empty());
}

// `_s3` partitions split by load like any table, at the leader's `B K`, and
// one hot object is refused as one hot key.
TEST(LoadSplitPlanner, S3GroupsSplitByLoadAndRefuseOneHotObject) {
  ClusterView v = ThreeNodes();
  const std::string object = std::string("\0\0\0\0\0\0\0\x07", 8) + "photos/k0500";
  AddGroup(v, 11, 900, pb::LOAD_SPLIT_KEY_FOUND, object).descriptor.set_table("_s3");
  AddGroup(v, 12, 900, pb::LOAD_SPLIT_ONE_HOT_KEY).descriptor.set_table("_s3");
  LoadSplitPlanner planner;
  EXPECT_TRUE(planner.Plan(v, LoadAt(500, 1'000), {}, 4, 0).work.empty());  // not yet split_after
  const LoadSplitPlan plan = planner.Plan(v, LoadAt(500, 1'000), {}, 4, 1'000);
  ASSERT_EQ(plan.work.size(), 1u);
  EXPECT_EQ(plan.work[0].parent.group_id(), 11u);
  EXPECT_EQ(plan.work[0].split_key, object);
  ASSERT_EQ(plan.refusals.size(), 1u);
  EXPECT_EQ(plan.refusals[0].group_id, 12u);
  EXPECT_EQ(plan.refusals[0].table, "_s3");
  EXPECT_EQ(plan.refusals[0].reason, pb::LOAD_SPLIT_ONE_HOT_KEY);
}

// Consumption: units per second near the partition cap, no split_load.
GroupView& AddConsuming(ClusterView& v, uint64_t id, double rcu, double wcu, pb::LoadSplitReason reason,
                        const std::string& key = "") {
  GroupView& g = AddGroup(v, id, 300, reason, key);
  g.load.read_units_per_s = rcu;
  g.load.write_units_per_s = wcu;
  g.load.rcu_max = 3000;
  g.load.wcu_max = 1000;
  return g;
}

PlannerOptions Defaults(uint64_t after_ms = 10'000) {
  PlannerOptions o;
  o.split_after_ms = after_ms;
  return o;
}

TEST(LoadSplitPlanner, TriggersAreOnByDefaultAndSplitLoadIsNot) {
  const PlannerOptions o;
  EXPECT_EQ(o.split_load, 0u);
  EXPECT_EQ(o.split_consumption_percent, 80u);
  EXPECT_EQ(o.split_boost_percent, 50u);
}

TEST(LoadSplitPlanner, ConsumptionAboveThePercentOfTheCapSplitsAfterSplitAfter) {
  ClusterView v = ThreeNodes();
  AddConsuming(v, 10, 0, 850, pb::LOAD_SPLIT_KEY_FOUND, "w");   // 85% of the write cap
  AddConsuming(v, 11, 2500, 0, pb::LOAD_SPLIT_KEY_FOUND, "r");  // 83% of the read cap
  AddConsuming(v, 12, 2000, 700, pb::LOAD_SPLIT_KEY_FOUND, "q");  // below both
  LoadSplitPlanner planner;
  EXPECT_TRUE(planner.Plan(v, Defaults(), {}, 4, 0).work.empty());
  EXPECT_TRUE(planner.Plan(v, Defaults(), {}, 4, 9'999).work.empty());
  const LoadSplitPlan plan = planner.Plan(v, Defaults(), {}, 4, 10'000);
  ASSERT_EQ(plan.work.size(), 2u);
  ASSERT_EQ(plan.triggers.size(), 2u);
  std::set<std::string> keys;
  for (size_t i = 0; i < plan.work.size(); ++i) {
    keys.insert(plan.work[i].split_key);
    EXPECT_EQ(plan.triggers[i], LoadSplitTrigger::kConsumption);
    EXPECT_EQ(plan.work[i].reason.rfind("consumption ", 0), 0u) << plan.work[i].reason;
  }
  EXPECT_EQ(keys, (std::set<std::string>{"w", "r"}));
  // Off at 0; and without a cap (an older node) nothing is hot.
  PlannerOptions off = Defaults(0);
  off.split_consumption_percent = 0;
  EXPECT_TRUE(LoadSplitPlanner().Plan(v, off, {}, 4, 0).work.empty());
  v.groups[10].load.wcu_max = 0;
  v.groups[11].load.rcu_max = 0;
  EXPECT_TRUE(LoadSplitPlanner().Plan(v, Defaults(0), {}, 4, 0).work.empty());
}

TEST(LoadSplitPlanner, ABoostAboveSplitBoostPercentSplits) {
  ClusterView v = ThreeNodes();
  AddConsuming(v, 10, 0, 300, pb::LOAD_SPLIT_KEY_FOUND, "b").load.boost_permille = 800;
  // A quarter above its share is what adaptive capacity gives any busy
  // partition (its headroom): not hot.
  AddConsuming(v, 11, 0, 300, pb::LOAD_SPLIT_KEY_FOUND, "c").load.boost_permille = 250;
  LoadSplitPlanner planner;
  EXPECT_TRUE(planner.Plan(v, Defaults(), {}, 4, 0).work.empty());
  const LoadSplitPlan plan = planner.Plan(v, Defaults(), {}, 4, 10'000);
  ASSERT_EQ(plan.work.size(), 1u);
  EXPECT_EQ(plan.work[0].parent.group_id(), 10u);
  EXPECT_EQ(plan.triggers[0], LoadSplitTrigger::kBoost);
  EXPECT_NE(plan.work[0].reason.find("boost 80%"), std::string::npos) << plan.work[0].reason;
  // A boost that falls back starts the wait again.
  v.groups[10].load.boost_permille = 100;
  LoadSplitPlanner again;
  again.Plan(v, Defaults(), {}, 4, 0);
  v.groups[10].load.boost_permille = 800;
  EXPECT_TRUE(again.Plan(v, Defaults(), {}, 4, 10'000).work.empty());
  PlannerOptions off = Defaults(0);
  off.split_boost_percent = 0;
  EXPECT_TRUE(LoadSplitPlanner().Plan(v, off, {}, 4, 0).work.empty());
}

TEST(LoadSplitPlanner, ConsumptionRefusalsNameTheTriggerAndAreCountedPerTrigger) {
  ClusterView v = ThreeNodes();
  AddConsuming(v, 10, 0, 900, pb::LOAD_SPLIT_ONE_HOT_KEY);
  AddConsuming(v, 11, 0, 900, pb::LOAD_SPLIT_SEQUENTIAL);
  AddConsuming(v, 12, 0, 300, pb::LOAD_SPLIT_UNBALANCED).load.boost_permille = 900;
  AddConsuming(v, 13, 0, 900, pb::LOAD_SPLIT_TOO_FEW_SAMPLES);  // waits, no refusal
  LoadSplitPlanner planner;
  LoadSplitPlan plan = planner.Plan(v, Defaults(0), {}, 4, 0);
  EXPECT_TRUE(plan.work.empty());
  ASSERT_EQ(plan.refusals.size(), 3u);
  EXPECT_EQ(plan.refusals[0].reason, pb::LOAD_SPLIT_ONE_HOT_KEY);
  EXPECT_EQ(plan.refusals[0].trigger, LoadSplitTrigger::kConsumption);
  EXPECT_NE(plan.refusals[0].text.find("consumption 900 WCU/s > 80% of the partition cap 1000"),
            std::string::npos)
      << plan.refusals[0].text;
  EXPECT_EQ(plan.refusals[1].reason, pb::LOAD_SPLIT_SEQUENTIAL);
  EXPECT_EQ(plan.refusals[2].reason, pb::LOAD_SPLIT_UNBALANCED);
  EXPECT_EQ(plan.refusals[2].trigger, LoadSplitTrigger::kBoost);
  EXPECT_EQ(plan.new_refusals.size(), 3u);
  // The same reason under another trigger is counted again.
  v.groups[12].load.write_units_per_s = 900;
  plan = planner.Plan(v, Defaults(0), {}, 4, 1'000);
  ASSERT_EQ(plan.new_refusals.size(), 1u);
  EXPECT_EQ(plan.new_refusals[0].group_id, 12u);
  EXPECT_EQ(plan.new_refusals[0].trigger, LoadSplitTrigger::kConsumption);
}

TEST(LoadSplitPlanner, TheTriggerMayChangeWhileTheGroupStaysHot) {
  ClusterView v = ThreeNodes();
  GroupView& g = AddConsuming(v, 10, 0, 900, pb::LOAD_SPLIT_KEY_FOUND, "k");
  LoadSplitPlanner planner;
  planner.Plan(v, Defaults(), {}, 4, 0);
  g.load.write_units_per_s = 300;
  g.load.boost_permille = 700;
  const LoadSplitPlan plan = planner.Plan(v, Defaults(), {}, 4, 10'000);
  ASSERT_EQ(plan.work.size(), 1u);
  EXPECT_EQ(plan.triggers[0], LoadSplitTrigger::kBoost);
}

}  // namespace
}  // namespace tessera::autoadmin
