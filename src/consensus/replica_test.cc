// Goal: end-to-end behaviour of a small replication group on the TestGroup
// host: election, replication, commit, lease reads, restart and catch-up.
#include "consensus/replica.h"

#include <gtest/gtest.h>

#include "consensus/test_group.h"

namespace tessera::consensus {
namespace {

using testing::TestGroup;

TEST(ReplicaSmoke, ElectsOneLeaderAndCommits) {
  TestGroup g(3);
  ReplicaId leader = g.ElectLeader();
  ASSERT_NE(leader, 0u);
  for (int i = 0; i < 10; ++i) {
    auto slot = g.r(leader).Propose(g.now(), "cmd" + std::to_string(i), 100 + i);
    ASSERT_TRUE(slot.ok()) << slot.status().ToString();
  }
  g.Advance(20'000);
  for (ReplicaId id = 1; id <= 3; ++id) {
    std::vector<std::string> cmds;
    for (const auto& e : g.node(id).applied) {
      if (e.type() == pb::ENTRY_COMMAND) cmds.push_back(e.command());
    }
    ASSERT_EQ(cmds.size(), 10u) << "replica " << id;
    EXPECT_EQ(cmds.front(), "cmd0");
    EXPECT_EQ(cmds.back(), "cmd9");
  }
  EXPECT_TRUE(g.r(leader).HoldsLease(g.now()));
  int holders = 0;
  for (ReplicaId id = 1; id <= 3; ++id) holders += g.r(id).HoldsLease(g.now());
  EXPECT_EQ(holders, 1);
}

TEST(ReplicaSmoke, NewLeaderAfterLeaderDiesKeepsCommittedEntries) {
  TestGroup g(3);
  ReplicaId first = g.ElectLeader();
  ASSERT_NE(first, 0u);
  ASSERT_TRUE(g.r(first).Propose(g.now(), "before", 1).ok());
  g.Advance(5'000);
  g.node(first).up = false;
  g.Advance(1'000'000);
  ReplicaId second = g.ElectLeader();
  ASSERT_NE(second, 0u);
  ASSERT_NE(second, first);
  ASSERT_TRUE(g.r(second).Propose(g.now(), "after", 2).ok());
  g.Advance(20'000);
  g.Restart(first);
  g.Advance(200'000);
  for (ReplicaId id = 1; id <= 3; ++id) {
    std::vector<std::string> cmds;
    for (const auto& e : g.node(id).applied) {
      if (e.type() == pb::ENTRY_COMMAND) cmds.push_back(e.command());
    }
    EXPECT_EQ(cmds, (std::vector<std::string>{"before", "after"})) << "replica " << id;
  }
}

// A proposal is (proposer, request id): request ids are unique only per
// proposer, so the host needs the proposer to tell its own entry from
// another replica's entry with an equal id in the same slot.
TEST(ReplicaSmoke, EntriesKeepTheirProposerWhenANewLeaderReproposesThem) {
  TestGroup g(3);
  const ReplicaId first = g.ElectLeader();
  ASSERT_NE(first, 0u);
  // The followers accept, but the leader never learns it: not chosen yet.
  g.SetFilter([&](const pb::Message& m) { return !(m.has_accepted() && m.to() == first); });
  ASSERT_TRUE(g.r(first).Propose(g.now(), "from-first", 7).ok());
  g.Advance(5'000);
  g.node(first).up = false;
  g.SetFilter(nullptr);
  g.Advance(1'000'000);
  const ReplicaId second = g.ElectLeader();
  ASSERT_NE(second, 0u);
  ASSERT_NE(second, first);
  ASSERT_TRUE(g.r(second).Propose(g.now(), "from-second", 7).ok());  // the same id
  g.Advance(20'000);
  std::vector<std::pair<std::string, ReplicaId>> seen;
  for (const auto& e : g.node(second).applied) {
    if (e.type() == pb::ENTRY_COMMAND) seen.emplace_back(e.command(), e.proposer());
  }
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, ReplicaId>>{{"from-first", first},
                                                                   {"from-second", second}}));
}

}  // namespace
}  // namespace tessera::consensus

namespace tessera::consensus {
namespace {

// Goal: the production defaults satisfy the timeout table of options.h.
TEST(OptionsDefaults, AreValid) {
  Options o;
  o.self = 1;
  EXPECT_EQ(o.Validate(), "");
  EXPECT_GT(o.LeaderLeaseUs(), 2 * o.heartbeat_interval_us);
  EXPECT_LT(o.election_timeout_max_us, 1'000'000u) << "failover budget: under a second";
}

}  // namespace
}  // namespace tessera::consensus
