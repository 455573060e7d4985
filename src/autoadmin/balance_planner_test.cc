// Goal: replicas spread within an AZ and leaders over the cluster by
// count, bytes and load; one move per node at a time; no move within the
// threshold, and repeated balancing ends (no ping-pong).
#include "autoadmin/balance_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>

#include "autoadmin/planner.h"

namespace tessera::autoadmin {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// Nodes by id and AZ, all healthy.
ClusterView Nodes(std::initializer_list<std::pair<uint32_t, const char*>> nodes) {
  ClusterView v;
  for (const auto& [id, az] : nodes) {
    v.nodes[id].id = id;
    v.nodes[id].az = az;
  }
  return v;
}

// Group `id` with `voters` (meta and every voter agree), led by `leader`.
GroupView& AddGroup(ClusterView& v, uint64_t id, std::vector<uint32_t> voters, uint32_t leader,
                    uint64_t bytes = 0, uint64_t requests_per_s = 0) {
  GroupView& g = v.groups[id];
  g.descriptor.set_table("kv");
  g.descriptor.set_group_id(id);
  g.descriptor.set_epoch(3);
  pb::Membership m;
  for (uint32_t n : voters) {
    pb::ReplicaPlacement* r = g.descriptor.add_replicas();
    r->set_node_id(n);
    r->set_az(v.nodes[n].az);
    r->set_role(pb::REPLICA_VOTER);
    m.add_voters(n);
  }
  for (uint32_t n : voters) {
    ReplicaReport& r = v.nodes[n].groups[id];
    r.role = n == leader ? "leader" : "follower";
    r.membership = m;
    r.chosen = r.applied = 100;
  }
  g.leader = leader;
  g.state_bytes = bytes;
  g.load.requests_per_s = requests_per_s;
  return g;
}

std::vector<uint32_t> Voters(const GroupView& g) {
  std::vector<uint32_t> out;
  for (const pb::ReplicaPlacement& r : g.descriptor.replicas()) out.push_back(r.node_id());
  return out;
}

TEST(Balance, AnEmptyNodeReceivesReplicasOneMoveAtATime) {
  ClusterView v = Nodes({{1, "az1"}, {2, "az1"}, {3, "az2"}, {4, "az3"}});
  for (uint64_t g = 1; g <= 6; ++g) AddGroup(v, g, {1, 3, 4}, 3);
  Balance b(v, BalanceOptions{});
  EXPECT_GT(b.ReplicaScore(1), b.ReplicaScore(2));
  const auto move = b.PickReplicaMove(v.groups[1], Voters(v.groups[1]), 3);
  ASSERT_TRUE(move.has_value());
  EXPECT_EQ(move->from, 1u);
  EXPECT_EQ(move->to, 2u);
  EXPECT_NE(move->reason.find("node 1 holds 6"), std::string::npos) << move->reason;
  // Nodes 1 and 2 now take part in a move: nothing more for them.
  EXPECT_FALSE(b.PickReplicaMove(v.groups[2], Voters(v.groups[2]), 3).has_value());
  // The leader's replica never moves; nor does one in an AZ without a spare.
  EXPECT_FALSE(Balance(v, BalanceOptions{}).PickReplicaMove(v.groups[1], {1, 3, 4}, 1));
}

TEST(Balance, ANodeInAMoveIsBusy) {
  ClusterView v = Nodes({{1, "az1"}, {2, "az1"}, {3, "az2"}, {4, "az3"}});
  for (uint64_t g = 1; g <= 6; ++g) AddGroup(v, g, {1, 3, 4}, 3);
  // Group 6 is mid-move: meta names node 2 a learner.
  pb::ReplicaPlacement* r = v.groups[6].descriptor.add_replicas();
  r->set_node_id(2);
  r->set_role(pb::REPLICA_LEARNER);
  Balance b(v, BalanceOptions{});
  EXPECT_FALSE(b.PickReplicaMove(v.groups[1], Voters(v.groups[1]), 3).has_value());
}

TEST(Balance, BytesOutweighCountsAboveTheFloor) {
  // Equal counts (four each in az1), but node 1 holds 4 GiB and node 2
  // nearly nothing: a 1 GiB replica moves.
  ClusterView v = Nodes({{1, "az1"}, {2, "az1"}, {3, "az2"}, {4, "az3"}});
  for (uint64_t g = 1; g <= 4; ++g) AddGroup(v, g, {1, 3, 4}, 3, kGiB);
  for (uint64_t g = 5; g <= 8; ++g) AddGroup(v, g, {2, 3, 4}, 3, 1 << 20);
  Balance b(v, BalanceOptions{});
  const auto move = b.PickReplicaMove(v.groups[1], Voters(v.groups[1]), 3);
  ASSERT_TRUE(move.has_value());
  EXPECT_EQ(move->to, 2u);
  // A small replica never moves the other way.
  EXPECT_FALSE(Balance(v, BalanceOptions{}).PickReplicaMove(v.groups[5], Voters(v.groups[5]), 3));
  // After that move (3 GiB against 1 GiB and five replicas against
  // three), another would overshoot: nothing.
  ClusterView w = Nodes({{1, "az1"}, {2, "az1"}, {3, "az2"}, {4, "az3"}});
  AddGroup(w, 1, {2, 3, 4}, 3, kGiB);
  for (uint64_t g = 2; g <= 4; ++g) AddGroup(w, g, {1, 3, 4}, 3, kGiB);
  for (uint64_t g = 5; g <= 8; ++g) AddGroup(w, g, {2, 3, 4}, 3, 1 << 20);
  for (uint64_t g = 1; g <= 8; ++g) {
    EXPECT_FALSE(Balance(w, BalanceOptions{}).PickReplicaMove(w.groups[g], Voters(w.groups[g]), 3))
        << g;
  }
  // Below the bytes floor the counts alone decide: equal, nothing moves.
  BalanceOptions high_floor;
  high_floor.bytes_floor = 64 * kGiB;
  EXPECT_FALSE(Balance(v, high_floor).PickReplicaMove(v.groups[1], Voters(v.groups[1]), 3));
}

TEST(Balance, NothingMovesWithinTheThreshold) {
  // Five replicas against four: one move would only swap them.
  ClusterView v = Nodes({{1, "az1"}, {2, "az1"}, {3, "az2"}, {4, "az3"}});
  for (uint64_t g = 1; g <= 5; ++g) AddGroup(v, g, {1, 3, 4}, 3);
  for (uint64_t g = 6; g <= 9; ++g) AddGroup(v, g, {2, 3, 4}, 3);
  for (uint64_t g = 1; g <= 9; ++g) {
    EXPECT_FALSE(Balance(v, BalanceOptions{}).PickReplicaMove(v.groups[g], Voters(v.groups[g]), 3));
  }
  // Equal counts, loads 5 % apart above the floor: within the threshold.
  ClusterView w = Nodes({{1, "az1"}, {2, "az1"}, {3, "az2"}, {4, "az3"}});
  AddGroup(w, 1, {1, 3, 4}, 3).load.write_units_per_s = 2100;
  AddGroup(w, 2, {2, 3, 4}, 3).load.write_units_per_s = 2000;
  EXPECT_FALSE(Balance(w, BalanceOptions{}).PickReplicaMove(w.groups[1], Voters(w.groups[1]), 3));
}

// Applies every move Balance picks, round after round, until none: the
// number of rounds is bounded and no replica returns to a node it left.
TEST(Balance, RepeatedBalancingEnds) {
  ClusterView v = Nodes({{1, "az1"}, {2, "az1"}, {3, "az1"}, {4, "az2"}, {5, "az3"}});
  // 12 groups of mixed sizes and write loads, all on node 1 in az1.
  for (uint64_t g = 1; g <= 12; ++g) {
    AddGroup(v, g, {1, 4, 5}, 4, (g % 4) * 300 * (uint64_t{1} << 20)).load.write_units_per_s =
        static_cast<double>((g % 3) * 800);
  }
  std::set<std::pair<uint64_t, uint32_t>> left;  // (group, node it left)
  int rounds = 0;
  for (; rounds < 100; ++rounds) {
    Balance b(v, BalanceOptions{});
    std::vector<std::pair<uint64_t, ReplicaMove>> moves;
    for (auto& [id, g] : v.groups) {
      if (auto m = b.PickReplicaMove(g, Voters(g), g.leader)) moves.emplace_back(id, *m);
    }
    if (moves.empty()) break;
    for (const auto& [id, m] : moves) {
      EXPECT_EQ(left.count({id, m.to}), 0u) << "group " << id << " back to node " << m.to;
      left.insert({id, m.from});
      GroupView& g = v.groups[id];
      std::vector<uint32_t> voters = Voters(g);
      std::replace(voters.begin(), voters.end(), m.from, m.to);
      const GroupView copy = g;
      for (auto& [nid, node] : v.nodes) node.groups.erase(id);
      v.groups.erase(id);
      AddGroup(v, id, voters, copy.leader, copy.state_bytes).load = copy.load;
    }
  }
  EXPECT_LT(rounds, 30);
  Balance b(v, BalanceOptions{});
  for (uint32_t n : {1u, 2u, 3u}) {
    EXPECT_GT(b.nodes().at(n).replicas, 2u) << "node " << n;
  }
}

TEST(Balance, LeadersFollowLoad) {
  ClusterView v = Nodes({{1, "az1"}, {2, "az2"}, {3, "az3"}});
  AddGroup(v, 1, {1, 2, 3}, 1, 0, 5000);
  AddGroup(v, 2, {1, 2, 3}, 1, 0, 5000);
  AddGroup(v, 3, {1, 2, 3}, 2);
  AddGroup(v, 4, {1, 2, 3}, 2);
  AddGroup(v, 5, {1, 2, 3}, 3);
  AddGroup(v, 6, {1, 2, 3}, 3);
  Balance b(v, BalanceOptions{});
  // Equal counts, but node 1 serves every request: a hot leadership moves.
  EXPECT_EQ(b.PickLeader(v.groups[1], 1, {2, 3}), std::optional<uint32_t>(2));
  // The second would overshoot.
  EXPECT_EQ(b.PickLeader(v.groups[2], 1, {2, 3}), std::nullopt);
  // Node 2 now leads the hot group and two cold ones: a cold one goes to 3.
  EXPECT_EQ(b.PickLeader(v.groups[3], 2, {1, 3}), std::optional<uint32_t>(3));
  // Without load, two leaders each: nothing moves.
  ClusterView w = Nodes({{1, "az1"}, {2, "az2"}, {3, "az3"}});
  for (uint64_t g = 1; g <= 6; ++g) AddGroup(w, g, {1, 2, 3}, 1 + static_cast<uint32_t>(g % 3));
  Balance c(w, BalanceOptions{});
  for (uint64_t g = 1; g <= 6; ++g) {
    EXPECT_EQ(c.PickLeader(w.groups[g], w.groups[g].leader, {1, 2, 3}), std::nullopt);
  }
  // Below the load floor the counts decide: three apart, one moves.
  ClusterView x = Nodes({{1, "az1"}, {2, "az2"}, {3, "az3"}});
  for (uint64_t g = 1; g <= 3; ++g) AddGroup(x, g, {1, 2, 3}, 1, 0, 200);
  EXPECT_EQ(Balance(x, BalanceOptions{}).PickLeader(x.groups[1], 1, {2, 3}),
            std::optional<uint32_t>(2));
}

// Through Plan: the voter that leaves after a bytes move is the source's,
// though it holds fewer replicas than the target.
TEST(Balance, TheSourcesVoterLeaves) {
  ClusterView v = Nodes({{1, "az1"}, {2, "az1"}, {3, "az2"}, {4, "az3"}});
  AddGroup(v, 1, {1, 3, 4, 2}, 3, kGiB);  // promoted on node 2, still on node 1
  for (uint64_t g = 2; g <= 4; ++g) AddGroup(v, g, {1, 3, 4}, 3, kGiB);
  for (uint64_t g = 5; g <= 9; ++g) AddGroup(v, g, {2, 3, 4}, 3, 1 << 20);
  PlannerOptions o;
  o.log_replicas = false;
  const std::vector<Action> actions = Plan(v, o);
  ASSERT_FALSE(actions.empty());
  EXPECT_EQ(actions[0].kind, ActionKind::kRemove);
  EXPECT_EQ(actions[0].replica, 1u);
}

}  // namespace
}  // namespace tessera::autoadmin
