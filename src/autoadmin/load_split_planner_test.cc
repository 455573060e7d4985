// Goal: a partition splits by load only after its leader reported more than
// split_load for split_after, at the key the leader names; one hot key,
// sequential keys and unbalanced load are refused with their reason, once
// counted per group and reason.
#include "autoadmin/load_split_planner.h"

#include <gtest/gtest.h>

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

TEST(LoadSplitPlanner, SplittingAndS3GroupsAreLeftAlone) {
  ClusterView v = ThreeNodes();
  AddGroup(v, 10, 900, pb::LOAD_SPLIT_KEY_FOUND, "a").splitting = true;
  AddGroup(v, 11, 900, pb::LOAD_SPLIT_KEY_FOUND, "a").descriptor.set_table("_s3");
  LoadSplitPlanner planner;
  const LoadSplitPlan plan = planner.Plan(v, LoadAt(500, 0), {}, 4, 0);
  EXPECT_TRUE(plan.work.empty());
  EXPECT_TRUE(plan.refusals.empty());
}

}  // namespace
}  // namespace tessera::autoadmin
