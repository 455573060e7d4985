// Goal: a log replica (docs/consensus.md, "Log replicas") joins with the
// leader's log base instead of a snapshot, votes and counts toward quorums,
// lets a surviving full voter recover every chosen value, and never leads.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "consensus/replica.h"
#include "consensus/replica_test_util.h"
#include "consensus/test_group.h"

namespace tessera::consensus {
namespace {

using namespace testing;  // NOLINT: test builders

pb::Membership With(std::vector<ReplicaId> voters, std::vector<ReplicaId> learners,
                    std::vector<ReplicaId> log_only) {
  pb::Membership m = Voters(std::move(voters));
  for (ReplicaId id : learners) m.add_learners(id);
  for (ReplicaId id : log_only) m.add_log_only(id);
  return m;
}

// Proposes on the leader and settles; true once chosen and applied there.
bool Commit(TestGroup& g, ReplicaId leader, const std::string& command, uint64_t request_id) {
  auto slot = g.r(leader).Propose(g.now(), command, request_id);
  if (!slot.ok()) return false;
  g.Settle();
  return g.r(leader).applied_index() >= *slot;
}

bool ChangeTo(TestGroup& g, ReplicaId leader, const pb::Membership& next, uint64_t request_id) {
  auto slot = g.r(leader).ProposeMembership(g.now(), next, request_id);
  if (!slot.ok()) return false;
  g.Settle();
  return g.r(leader).chosen_index() >= *slot;
}

// Every command entry `id` holds in its log or applied, by command text.
std::set<std::string> CommandsHeld(TestGroup& g, ReplicaId id) {
  std::set<std::string> out;
  for (const pb::Entry& e : g.node(id).applied) {
    if (e.type() == pb::ENTRY_COMMAND && !e.command().empty()) out.insert(e.command());
  }
  return out;
}

class LogReplica : public ::testing::Test {
 protected:
  // Voters {1,2,3} with 1 leading and 40 commands chosen and compacted
  // away on every replica; then 3 is lost for good, and 4 joins as a log
  // replica, is promoted, and 3 is removed: {1,2,4}, 4 log-only.
  void SetUp() override {
    g_.Advance(110'000);  // past the restart guard, before any election timeout
    g_.r(1).Campaign(g_.now());
    g_.Settle();
    ASSERT_EQ(g_.r(1).role(), Role::kLeader);
    for (int i = 0; i < 40; ++i) ASSERT_TRUE(Commit(g_, 1, "c" + std::to_string(i), 100 + i));
    for (ReplicaId id : {1, 2, 3}) g_.Compact(id, 30);
    g_.node(3).up = false;
    g_.AddReplica(4, With({1, 2, 3}, {4}, {4}));
    ASSERT_TRUE(ChangeTo(g_, 1, With({1, 2, 3}, {4}, {4}), 1));
    ASSERT_TRUE(ChangeTo(g_, 1, With({1, 2, 3, 4}, {}, {4}), 2));
    ASSERT_TRUE(ChangeTo(g_, 1, With({1, 2, 4}, {}, {4}), 3));
    g_.Advance(20'000);  // a heartbeat: every survivor knows the removal is chosen
  }

  TestGroup g_{3};
};

// As above, but survivor 2 holds the removal of 3 without hearing that it
// was chosen (every later Accept to it is lost) when the leader is lost.
class LogReplicaRemovalUnheard : public ::testing::Test {
 protected:
  void SetUp() override {
    g_.Advance(110'000);
    g_.r(1).Campaign(g_.now());
    g_.Settle();
    ASSERT_EQ(g_.r(1).role(), Role::kLeader);
    ASSERT_TRUE(Commit(g_, 1, "before", 100));
    g_.node(3).up = false;
    g_.AddReplica(4, With({1, 2, 3}, {4}, {4}));
    ASSERT_TRUE(ChangeTo(g_, 1, With({1, 2, 3}, {4}, {4}), 1));
    ASSERT_TRUE(ChangeTo(g_, 1, With({1, 2, 3, 4}, {}, {4}), 2));
    auto removal = g_.r(1).ProposeMembership(g_.now(), With({1, 2, 4}, {}, {4}), 3);
    ASSERT_TRUE(removal.ok());
    const Slot slot = *removal;
    g_.SetFilter([slot](const pb::Message& m) {
      return !(m.to() == 2 && m.has_accept() && m.accept().commit_index() >= slot);
    });
    g_.Settle();
    g_.Advance(20'000);
    ASSERT_GE(g_.r(1).chosen_index(), slot);
    ASSERT_NE(g_.r(2).EntryAt(slot), nullptr) << "2 holds the removal";
    ASSERT_LT(g_.r(2).chosen_index(), slot) << "2 has not heard it was chosen";
    g_.SetFilter(nullptr);
    g_.node(1).up = false;
  }

  TestGroup g_{3};
};

TEST_F(LogReplicaRemovalUnheard, TheSurvivorLearnsItFromTheLogReplicasPromiseAndLeads) {
  EXPECT_EQ(g_.ElectLeader(), 2u);
  EXPECT_EQ(Str(g_.r(2).membership()), "v1,2,4+o4");
  EXPECT_TRUE(Commit(g_, 2, "after", 101));
  EXPECT_TRUE(CommandsHeld(g_, 2).count("before"));
}

TEST_F(LogReplica, JoinsWithTheLeadersLogBaseAndNoState) {
  // Its "snapshot" is the leader's log base, without data.
  EXPECT_EQ(g_.r(4).log_start(), 31u);
  ASSERT_FALSE(g_.node(4).applied.empty());
  EXPECT_EQ(g_.node(4).applied.front().slot(), 30u);
  EXPECT_EQ(g_.node(4).applied.front().command(), "");
  EXPECT_EQ(g_.r(4).chosen_index(), g_.r(1).chosen_index());
  EXPECT_EQ(g_.r(4).last_slot(), g_.r(1).last_slot());
  EXPECT_EQ(Str(g_.r(4).membership()), "v1,2,4+o4");
}

TEST_F(LogReplica, CountsTowardTheQuorum) {
  // 2 cannot hear the leader: {1, 4} are two of three voters.
  g_.SetFilter([](const pb::Message& m) { return m.to() != 2 && m.from() != 2; });
  EXPECT_TRUE(Commit(g_, 1, "with-the-log-replica", 500));
}

TEST_F(LogReplica, ASurvivingFullVoterRecoversWhatOnlyTheLeaderAndTheLogReplicaHold) {
  // Chosen by {1, 4} while 2 hears nothing; then 1 is lost too.
  g_.SetFilter([](const pb::Message& m) { return m.to() != 2 && m.from() != 2; });
  ASSERT_TRUE(Commit(g_, 1, "only-on-1-and-4", 500));
  g_.SetFilter(nullptr);
  g_.node(1).up = false;
  EXPECT_EQ(g_.ElectLeader(), 2u);
  ASSERT_TRUE(Commit(g_, 2, "after", 501));
  const std::set<std::string> held = CommandsHeld(g_, 2);
  EXPECT_TRUE(held.count("only-on-1-and-4")) << "a chosen value was lost";
  EXPECT_TRUE(held.count("after"));
}

TEST_F(LogReplica, NeverLeadsNorTakesATransfer) {
  EXPECT_EQ(g_.r(1).TransferLeadership(g_.now(), 4).code(), StatusCode::kInvalidArgument);
  g_.r(4).Campaign(g_.now());
  g_.Settle();
  EXPECT_EQ(g_.r(4).role(), Role::kFollower);
  // Alone with the log replica, nobody leads: it holds no state to lead with.
  g_.node(1).up = false;
  g_.node(2).up = false;
  g_.Advance(3'000'000);
  EXPECT_NE(g_.r(4).role(), Role::kLeader);
  EXPECT_EQ(g_.r(4).role(), Role::kFollower);
}

TEST_F(LogReplica, IsRemovedOnceAFullReplicaIsPromoted) {
  g_.AddReplica(5, With({1, 2, 4}, {5}, {4}));
  ASSERT_TRUE(ChangeTo(g_, 1, With({1, 2, 4}, {5}, {4}), 4));
  // A full learner gets a snapshot with the leader's state, not a log base.
  ASSERT_FALSE(g_.node(5).applied.empty());
  EXPECT_NE(g_.node(5).applied.front().command(), "");
  ASSERT_TRUE(ChangeTo(g_, 1, With({1, 2, 4, 5}, {}, {4}), 5));
  ASSERT_TRUE(ChangeTo(g_, 1, With({1, 2, 5}, {}, {}), 6));
  EXPECT_EQ(Str(g_.r(1).membership()), "v1,2,5");
  EXPECT_TRUE(Commit(g_, 1, "after-the-swap", 600));
}

}  // namespace
}  // namespace tessera::consensus
