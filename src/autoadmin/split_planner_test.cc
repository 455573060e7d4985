// Goal: the autoadmin splits exactly the partitions above split_bytes whose
// group can take a split now, the largest first, within max_concurrent.
#include "autoadmin/split_planner.h"

#include <gtest/gtest.h>

namespace tessera::autoadmin {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// Three healthy nodes 1, 2, 3.
ClusterView ThreeNodes() {
  ClusterView v;
  for (uint32_t id = 1; id <= 3; ++id) v.nodes[id].id = id;
  return v;
}

// Group `id` on nodes 1-3, led by `leader`, storing `bytes`.
GroupView& AddGroup(ClusterView& v, uint64_t id, uint64_t bytes, uint32_t leader = 1) {
  GroupView& g = v.groups[id];
  g.descriptor.set_table("kv");
  g.descriptor.set_group_id(id);
  for (uint32_t n = 1; n <= 3; ++n) {
    pb::ReplicaPlacement* r = g.descriptor.add_replicas();
    r->set_node_id(n);
    r->set_role(pb::REPLICA_VOTER);
    ReplicaReport& report = v.nodes[n].groups[id];
    report.role = n == leader ? "leader" : "follower";
  }
  g.leader = leader;
  g.state_bytes = bytes;
  return g;
}

PlannerOptions SplitAt(uint64_t bytes, size_t max_concurrent = 4) {
  PlannerOptions o;
  o.split_bytes = bytes;
  o.max_concurrent = max_concurrent;
  return o;
}

std::vector<uint64_t> Groups(const std::vector<SplitDecision>& decisions) {
  std::vector<uint64_t> out;
  for (const SplitDecision& d : decisions) out.push_back(d.group_id);
  return out;
}

TEST(PlanSizeSplits, SplitsOnlyPartitionsAboveSplitBytes) {
  ClusterView v = ThreeNodes();
  AddGroup(v, 10, 64 * kMiB);
  AddGroup(v, 11, 64 * kMiB + 1, 2);
  AddGroup(v, 12, 0);  // size unknown
  const auto decisions = PlanSizeSplits(v, SplitAt(64 * kMiB));
  ASSERT_EQ(Groups(decisions), std::vector<uint64_t>{11});
  EXPECT_EQ(decisions[0].leader, 2u);
  EXPECT_EQ(decisions[0].state_bytes, 64 * kMiB + 1);
}

TEST(PlanSizeSplits, LargestFirstWithinMaxConcurrentCountingSplitsInProgress) {
  ClusterView v = ThreeNodes();
  AddGroup(v, 10, 100 * kMiB);
  AddGroup(v, 11, 300 * kMiB);
  AddGroup(v, 12, 200 * kMiB);
  AddGroup(v, 13, 900 * kMiB).splitting = true;
  EXPECT_EQ(Groups(PlanSizeSplits(v, SplitAt(kMiB, 3))), (std::vector<uint64_t>{11, 12}));
  EXPECT_TRUE(PlanSizeSplits(v, SplitAt(kMiB, 1)).empty());
}

TEST(PlanSizeSplits, NoSplitWithoutLeaderOrWithAMembershipChangeOrAnUnhealthyVoter) {
  ClusterView no_leader = ThreeNodes();
  AddGroup(no_leader, 10, 100 * kMiB).leader = 0;
  EXPECT_TRUE(PlanSizeSplits(no_leader, SplitAt(kMiB)).empty());

  ClusterView pending = ThreeNodes();
  AddGroup(pending, 10, 100 * kMiB);
  pending.nodes[1].groups[10].membership_pending = true;
  EXPECT_TRUE(PlanSizeSplits(pending, SplitAt(kMiB)).empty());

  ClusterView learner = ThreeNodes();
  AddGroup(learner, 10, 100 * kMiB).descriptor.mutable_replicas(2)->set_role(pb::REPLICA_LEARNER);
  EXPECT_TRUE(PlanSizeSplits(learner, SplitAt(kMiB)).empty());

  for (NodeHealth health : {NodeHealth::kGray, NodeHealth::kUnreachable, NodeHealth::kDead}) {
    ClusterView v = ThreeNodes();
    AddGroup(v, 10, 100 * kMiB);
    v.nodes[3].health = health;
    EXPECT_TRUE(PlanSizeSplits(v, SplitAt(kMiB)).empty()) << NodeHealthName(health);
  }
}

}  // namespace
}  // namespace tessera::autoadmin
