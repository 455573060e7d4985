// Goal: a node is dead only after dead_after without an answer, and an answer heals it.
#include "autoadmin/health_tracker.h"

#include <gtest/gtest.h>

namespace tessera::autoadmin {
namespace {

TEST(HealthTracker, DeadAfterTheBoundWithoutAnAnswer) {
  HealthTracker t({{1, "az1"}, {2, "az2"}}, 10'000, GrayOptions{}, 1'000);
  pb::NodeStatus status;
  pb::GroupStatusProto* g = status.add_groups();
  g->set_group_id(1000);
  g->set_role("leader");
  g->set_applied(42);
  g->add_voters(1);
  g->add_voters(2);
  t.OnPoll(1, &status, 2'000);
  t.OnPoll(2, nullptr, 2'000);
  EXPECT_EQ(t.nodes().at(1).health, NodeHealth::kHealthy);
  EXPECT_EQ(t.nodes().at(1).groups.at(1000).applied, 42u);
  EXPECT_EQ(t.nodes().at(1).groups.at(1000).membership.voters_size(), 2);
  // Never answered: counted from the tracker's start.
  EXPECT_EQ(t.nodes().at(2).health, NodeHealth::kUnreachable);
  t.OnPoll(2, nullptr, 10'999);
  EXPECT_EQ(t.nodes().at(2).health, NodeHealth::kUnreachable);
  t.OnPoll(2, nullptr, 11'000);
  EXPECT_EQ(t.nodes().at(2).health, NodeHealth::kDead);
  EXPECT_EQ(t.nodes().at(2).unreachable_for_ms, 10'000u);

  // Node 1 stops answering: its last report is kept, it is not dead yet.
  t.OnPoll(1, nullptr, 5'000);
  EXPECT_EQ(t.nodes().at(1).health, NodeHealth::kUnreachable);
  EXPECT_EQ(t.nodes().at(1).groups.count(1000), 1u);
  t.OnPoll(1, nullptr, 12'000);
  EXPECT_EQ(t.nodes().at(1).health, NodeHealth::kDead);
  // An answer heals it at once.
  t.OnPoll(1, &status, 12'500);
  EXPECT_EQ(t.nodes().at(1).health, NodeHealth::kHealthy);
  EXPECT_EQ(t.nodes().at(1).unreachable_for_ms, 0u);
}

TEST(HealthTracker, UnknownNodesAreIgnored) {
  HealthTracker t({{1, "az1"}}, 10'000, GrayOptions{}, 0);
  t.OnPoll(9, nullptr, 50'000);
  EXPECT_EQ(t.nodes().size(), 1u);
}

TEST(FindLeaders, HighestBallotAmongHealthyReportsWins) {
  ClusterView v;
  for (uint32_t id : {1u, 2u, 3u}) v.nodes[id].id = id;
  v.groups[1000].descriptor.set_group_id(1000);
  v.nodes[1].groups[1000].role = "leader";
  v.nodes[1].groups[1000].ballot_round = 3;
  v.nodes[2].groups[1000].role = "leader";
  v.nodes[2].groups[1000].ballot_round = 4;
  v.nodes[3].groups[1000].role = "leader";
  v.nodes[3].groups[1000].ballot_round = 9;
  v.nodes[3].health = NodeHealth::kUnreachable;  // its report is old
  FindLeaders(v);
  EXPECT_EQ(v.groups[1000].leader, 2u);
}

}  // namespace
}  // namespace tessera::autoadmin
