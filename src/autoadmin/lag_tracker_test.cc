// Goal: a voter is marked lagging only when it has not applied what its
// group had chosen lag_for ago; a follower trailing by a steady margin
// under load is not.
#include "autoadmin/lag_tracker.h"

#include <gtest/gtest.h>

namespace tessera::autoadmin {
namespace {

constexpr uint64_t kGroup = 7;

// Group kGroup on nodes 1 (leader), 2 and 3, with these indexes.
ClusterView View(uint64_t leader_chosen, uint64_t applied2, uint64_t applied3) {
  ClusterView v;
  for (uint32_t id : {1u, 2u, 3u}) {
    v.nodes[id].id = id;
    ReplicaReport& r = v.nodes[id].groups[kGroup];
    for (uint32_t voter : {1u, 2u, 3u}) r.membership.add_voters(voter);
    r.role = id == 1 ? "leader" : "follower";
    r.chosen = leader_chosen;
    r.applied = id == 1 ? leader_chosen : (id == 2 ? applied2 : applied3);
  }
  v.groups[kGroup].descriptor.set_group_id(kGroup);
  v.groups[kGroup].leader = 1;
  return v;
}

TEST(LagTracker, ASteadyMarginUnderLoadIsNotLag) {
  LagTracker t(10'000);
  // 1,000 slots a second; follower 2 trails by 200 slots at every sample.
  for (uint64_t s = 0; s <= 30; ++s) {
    ClusterView v = View(1'000 * s + 1'000, 1'000 * s + 800, 1'000 * s + 1'000);
    t.OnRound(v, s * 1'000);
    EXPECT_TRUE(v.groups[kGroup].lagging_voters.empty()) << "second " << s;
  }
}

TEST(LagTracker, AReplicaThatStopsApplyingIsLaggingAfterLagFor) {
  LagTracker t(10'000);
  for (uint64_t s = 0; s <= 20; ++s) {
    // Replica 3 applies nothing after slot 500.
    ClusterView v = View(1'000 * s + 1'000, 1'000 * s + 1'000, 500);
    t.OnRound(v, s * 1'000);
    const bool lagging = v.groups[kGroup].lagging_voters.count(3) > 0;
    // At second s it is behind what was chosen at s - 10 (>= 1,000 > 500)
    // as soon as the tracker has watched for 10 s.
    EXPECT_EQ(lagging, s >= 10) << "second " << s;
    EXPECT_EQ(v.groups[kGroup].lagging_voters.count(2), 0u);
  }
}

TEST(LagTracker, UnansweredNodesAndGroupsWithoutLeaderAreNotJudged) {
  LagTracker t(1'000);
  for (uint64_t s = 0; s <= 5; ++s) {
    ClusterView v = View(100 * s + 100, 0, 0);
    v.nodes[2].health = NodeHealth::kUnreachable;
    t.OnRound(v, s * 1'000);
    if (s >= 2) {
      EXPECT_EQ(v.groups[kGroup].lagging_voters, std::set<uint32_t>{3});
    }
  }
  ClusterView leaderless = View(1'000, 0, 0);
  leaderless.groups[kGroup].leader = 0;
  t.OnRound(leaderless, 10'000);
  EXPECT_TRUE(leaderless.groups[kGroup].lagging_voters.empty());
}

}  // namespace
}  // namespace tessera::autoadmin
