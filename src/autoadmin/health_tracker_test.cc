// Goal: a node is dead only after dead_after without an answer, and an answer heals it.
#include "autoadmin/health_tracker.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace tessera::autoadmin {
namespace {

TEST(HealthTracker, DeadAfterTheBoundWithoutAnAnswer) {
  HealthTracker t({{1, "az1"}, {2, "az2"}}, 10'000, GrayOptions{}, 1'000);
  pb::NodeStatus status;
  pb::GroupStatusProto* g = status.add_groups();
  g->set_group_id(1000);
  g->set_role("leader");
  g->set_applied(42);
  g->set_state_bytes(9'000);
  g->add_voters(1);
  g->add_voters(2);
  t.OnPoll(1, &status, 2'000);
  t.OnPoll(2, nullptr, 2'000);
  EXPECT_EQ(t.nodes().at(1).health, NodeHealth::kHealthy);
  EXPECT_EQ(t.nodes().at(1).groups.at(1000).applied, 42u);
  EXPECT_EQ(t.nodes().at(1).groups.at(1000).state_bytes, 9'000u);
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

TEST(HealthTracker, ANodeItsPeersCannotReachInTimeTurnsGray) {
  GrayOptions gray;
  gray.degraded_for_ms = 2'000;
  HealthTracker t({{1, "az1"}, {2, "az2"}, {3, "az3"}}, 10'000, gray, 0);
  auto report = [](std::vector<std::pair<uint32_t, uint64_t>> timeouts_to) {
    pb::NodeStatus s;
    for (auto [to, timeouts] : timeouts_to) {
      pb::PeerLinkProto* l = s.add_peer_links();
      l->set_node_id(to);
      l->set_calls(10);
      l->set_timeouts(timeouts);
    }
    return s;
  };
  // Nodes 2 and 3 time out on node 1; node 1 times out on both (its
  // answers are what is lost): only node 1 is accused.
  const pb::NodeStatus from1 = report({{2, 10}, {3, 10}});
  const pb::NodeStatus from2 = report({{1, 10}, {3, 0}});
  const pb::NodeStatus from3 = report({{1, 9}, {2, 0}});
  for (uint64_t ms = 0; ms <= 3'000; ms += 1'000) {
    t.OnPoll(2, &from2, ms);
    t.OnPoll(3, &from3, ms);
    t.OnPoll(1, &from1, ms);
  }
  EXPECT_EQ(t.nodes().at(1).health, NodeHealth::kGray);
  EXPECT_NE(t.nodes().at(1).degraded_reason.find("peers"), std::string::npos);
  EXPECT_EQ(t.nodes().at(2).health, NodeHealth::kHealthy);
  EXPECT_EQ(t.nodes().at(3).health, NodeHealth::kHealthy);
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
  v.nodes[2].groups[1000].state_bytes = 7'000;
  v.nodes[1].groups[1000].state_bytes = 1;
  v.nodes[3].groups[1000].role = "leader";
  v.nodes[3].groups[1000].ballot_round = 9;
  v.nodes[3].health = NodeHealth::kUnreachable;  // its report is old
  FindLeaders(v);
  EXPECT_EQ(v.groups[1000].leader, 2u);
  EXPECT_EQ(v.groups[1000].state_bytes, 7'000u);  // the split planner's figure: the leader's
}

}  // namespace
}  // namespace tessera::autoadmin
