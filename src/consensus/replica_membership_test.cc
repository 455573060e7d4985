// Goal: single-step membership: learners never count, joint quorums, refusals, leader removal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "consensus/replica.h"
#include "consensus/replica_test_util.h"
#include "consensus/test_group.h"

namespace tessera::consensus {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using namespace testing;  // NOLINT: test builders

const pb::Ballot kB11 = B(1, 1);

StatusCode CodeOf(const Result<Slot>& result) { return result.status().code(); }

TEST(Membership, ChangeIsRefusedUntilTheLeadersOpeningNoopIsChosen) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, /*ackers=*/{});
  ASSERT_EQ(r->chosen_index(), 0u);
  EXPECT_EQ(CodeOf(r->ProposeMembership(kT0 + 1, Members({1, 2, 3}, {4}), 1)),
            StatusCode::kConflict);
  auto f = NewReplica(2, Recovered(Members({1, 2, 3})));
  EXPECT_EQ(CodeOf(f->ProposeMembership(kT0, Members({1, 2, 3}, {4}), 1)), StatusCode::kNotLeader);
}

TEST(Membership, OnlySingleStepChangesAreAccepted) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  for (const pb::Membership& next :
       {Members({1, 2, 3, 4}), Members({1}), Members({1, 2, 4}), Members({1, 2, 3}),
        Members({1, 2, 3}, {4, 5}), Members({1, 2, 3}, {3}), Members({}, {1, 2, 3})}) {
    EXPECT_EQ(CodeOf(r->ProposeMembership(kT0 + 1, next, 1)), StatusCode::kInvalidArgument)
        << Str(next);
  }
  EXPECT_FALSE(r->HasReady());
  EXPECT_EQ(r->ProposeMembership(kT0 + 1, Members({1, 2, 3}, {4}), 1).value(), 2u);
}

TEST(Membership, SecondChangeIsRefusedWhileTheFirstIsUncommitted) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  ASSERT_EQ(r->ProposeMembership(kT0 + 1, Members({1, 2, 3}, {4}), 1).value(), 2u);
  EXPECT_EQ(CodeOf(r->ProposeMembership(kT0 + 1, Members({1, 2, 3}, {4, 5}), 2)),
            StatusCode::kConflict);
  EXPECT_EQ(CodeOf(r->ProposeMembership(kT0 + 1, Members({1, 2}, {4}), 2)), StatusCode::kConflict);
  TakeAndPersist(*r);
  r->Step(kT0 + 2, AckMsg(2, 1, kB11, 2, 1));
  ASSERT_EQ(r->chosen_index(), 2u);
  EXPECT_EQ(r->ProposeMembership(kT0 + 3, Members({1, 2, 3}, {4, 5}), 2).value(), 3u);
}

TEST(Membership, AddedLearnerIsSentTheWholeLog) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  ASSERT_EQ(r->ProposeMembership(kT0 + 1, Members({1, 2, 3}, {4}), 9).value(), 2u);
  EXPECT_EQ(Str(r->membership()), "v1,2,3+l4");  // effective when appended
  Ready rd = r->TakeReady();
  EXPECT_THAT(Strs(rd.entries), ElementsAre("2@1.1 members=v1,2,3+l4#9"));
  const std::string change = "2@1.1 members=v1,2,3+l4#9";
  EXPECT_THAT(Strs(rd.messages),
              ElementsAre("1->2 accept b=1.1 first=2 commit=1 last=2 seq=1 [" + change + "]",
                          "1->3 accept b=1.1 first=2 commit=1 last=2 seq=1 [" + change + "]",
                          "1->4 accept b=1.1 first=1 commit=1 last=2 seq=1 [1@1.1 noop, " +
                              change + "]"));
}

// With voters {1,2,3} and learners {4,5}, acks from 2, 4 and 5 are three of
// five replicas — a majority only if learners counted. Voter 3 is down and
// the leader's own write is not durable: nothing may commit.
TEST(Membership, LearnerAcksNeverMakeAQuorum) {
  auto r = ElectedLeader(1, Members({1, 2, 3}, {4, 5}), {2}, {2, 3, 4, 5});
  ASSERT_EQ(r->chosen_index(), 1u);
  ASSERT_TRUE(r->Propose(kT0 + 1, "x", 1).ok());
  Ready rd = r->TakeReady();
  for (ReplicaId id : {2, 4, 5}) r->Step(kT0 + 2, AckMsg(id, 1, kB11, 2, 1));
  EXPECT_EQ(r->chosen_index(), 1u);
  EXPECT_THAT(r->TakeReady().committed, IsEmpty());
  r->OnPersisted(rd.persist_seq);  // {1, 2}: a majority of the voters
  EXPECT_THAT(Strs(r->TakeReady().committed), ElementsAre("2@1.1 cmd=x#1"));
}

TEST(Membership, PromotionNeedsAQuorumInBothTheOldAndTheNewMembership) {
  auto r = ElectedLeader(1, Members({1, 2, 3}, {4}), {2}, {2, 3, 4});
  ASSERT_EQ(r->ProposeMembership(kT0 + 1, Members({1, 2, 3, 4}), 1).value(), 2u);
  TakeAndPersist(*r);
  r->Step(kT0 + 2, AckMsg(2, 1, kB11, 2, 1));  // {1,2}: 2 of 3 old, but 2 of 4 new
  EXPECT_EQ(r->chosen_index(), 1u);
  r->Step(kT0 + 2, AckMsg(4, 1, kB11, 2, 1));  // {1,2,4}: 3 of 4 new
  EXPECT_EQ(r->chosen_index(), 2u);
  EXPECT_THAT(Strs(r->TakeReady().committed), ElementsAre("2@1.1 members=v1,2,3,4#1"));

  // From now on a majority is three of four.
  ASSERT_TRUE(r->Propose(kT0 + 3, "y", 2).ok());
  TakeAndPersist(*r);
  r->Step(kT0 + 4, AckMsg(4, 1, kB11, 3, 1));
  EXPECT_EQ(r->chosen_index(), 2u);
  r->Step(kT0 + 4, AckMsg(2, 1, kB11, 3, 1));
  EXPECT_EQ(r->chosen_index(), 3u);
}

// Removing voter 4 of {1,2,3,4}: {1,2} is a majority of the new membership
// but not of the old one; 4's own ack completes the old quorum.
TEST(Membership, RemovalNeedsBothQuorumsAndThenStopsReplicatingToTheRemoved) {
  auto r = ElectedLeader(1, Members({1, 2, 3, 4}), {2, 3}, {2, 3, 4});
  ASSERT_EQ(r->ProposeMembership(kT0 + 1, Members({1, 2, 3}), 1).value(), 2u);
  TakeAndPersist(*r);
  r->Step(kT0 + 2, AckMsg(2, 1, kB11, 2, 1));
  EXPECT_EQ(r->chosen_index(), 1u);
  r->Step(kT0 + 2, AckMsg(4, 1, kB11, 2, 1));
  EXPECT_EQ(r->chosen_index(), 2u);
  EXPECT_THAT(Strs(r->TakeReady().committed), ElementsAre("2@1.1 members=v1,2,3#1"));
  ASSERT_TRUE(r->Propose(kT0 + 3, "z", 2).ok());
  EXPECT_THAT(Strs(r->TakeReady().messages),
              ElementsAre("1->2 accept b=1.1 first=3 commit=2 last=3 seq=1 [3@1.1 cmd=z#2]",
                          "1->3 accept b=1.1 first=3 commit=2 last=3 seq=1 [3@1.1 cmd=z#2]"));
}

TEST(Membership, RemovedLeaderStepsDownOnceItsRemovalIsChosen) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  ASSERT_EQ(r->ProposeMembership(kT0 + 1, Members({2, 3}), 1).value(), 2u);
  TakeAndPersist(*r);
  r->Step(kT0 + 2, AckMsg(2, 1, kB11, 2, 1));  // old quorum {1,2}; new {2,3} lacks 3
  EXPECT_EQ(r->role(), Role::kLeader);
  EXPECT_EQ(r->chosen_index(), 1u);
  r->Step(kT0 + 2, AckMsg(3, 1, kB11, 2, 1));
  EXPECT_EQ(r->chosen_index(), 2u);
  EXPECT_EQ(r->role(), Role::kFollower);
  EXPECT_FALSE(r->HoldsLease(kT0 + 2));
  Ready rd = r->TakeReady();
  EXPECT_THAT(Strs(rd.committed), ElementsAre("2@1.1 members=v2,3#1"));
  EXPECT_THAT(rd.messages, IsEmpty());
  // No longer a voter: it never campaigns again.
  r->Tick(kT0 + 10'000'000);
  EXPECT_EQ(r->role(), Role::kFollower);
  EXPECT_FALSE(r->HasReady());
}

// --- multi-replica -------------------------------------------------------------

std::vector<std::string> AppliedCommands(TestGroup& g, ReplicaId id) {
  std::vector<std::string> out;
  for (const pb::Entry& e : g.node(id).applied) {
    if (e.type() == pb::ENTRY_COMMAND) out.push_back(e.command());
  }
  return out;
}

// Proposes `next` on `leader` and lets the group settle until it is chosen.
void ChangeMembership(TestGroup& g, ReplicaId leader, const pb::Membership& next) {
  auto slot = g.r(leader).ProposeMembership(g.now(), next, 1);
  ASSERT_TRUE(slot.ok()) << slot.status().ToString();
  g.Advance(20'000);
  ASSERT_GE(g.r(leader).chosen_index(), *slot);
}

TEST(MembershipGroup, LearnerIsAddedPromotedAndVotersAreRemovedThroughTheLog) {
  TestGroup g(3);
  const ReplicaId leader = g.ElectLeader();
  ASSERT_NE(leader, 0u);
  ASSERT_TRUE(g.r(leader).Propose(g.now(), "a", 1).ok());
  g.Advance(20'000);

  g.AddReplica(4, Members({1, 2, 3}));
  ChangeMembership(g, leader, Members({1, 2, 3}, {4}));
  ASSERT_TRUE(g.r(leader).Propose(g.now(), "b", 2).ok());
  g.Advance(20'000);
  EXPECT_EQ(Str(g.r(4).membership()), "v1,2,3+l4");
  EXPECT_EQ(AppliedCommands(g, 4), (std::vector<std::string>{"a", "b"}));

  ChangeMembership(g, leader, Members({1, 2, 3, 4}));
  const ReplicaId removed = leader % 3 + 1;
  std::vector<ReplicaId> voters;
  for (ReplicaId id : {1, 2, 3, 4}) {
    if (id != removed) voters.push_back(id);
  }
  ChangeMembership(g, leader, Members(voters));
  ASSERT_TRUE(g.r(leader).Propose(g.now(), "c", 3).ok());
  g.Advance(20'000);
  for (ReplicaId id : voters) {
    EXPECT_EQ(Str(g.r(id).membership()), Str(Members(voters))) << "replica " << id;
    EXPECT_EQ(AppliedCommands(g, id), (std::vector<std::string>{"a", "b", "c"})) << id;
  }
  EXPECT_EQ(AppliedCommands(g, removed), (std::vector<std::string>{"a", "b"}));

  // Remove the leader itself: it steps down and the rest elect a successor.
  std::vector<ReplicaId> rest;
  for (ReplicaId id : voters) {
    if (id != leader) rest.push_back(id);
  }
  ChangeMembership(g, leader, Members(rest));
  EXPECT_NE(g.r(leader).role(), Role::kLeader);
  g.Advance(1'000'000);
  ReplicaId successor = 0;
  for (ReplicaId id : rest) {
    if (g.r(id).role() == Role::kLeader) successor = id;
  }
  ASSERT_NE(successor, 0u);
  ASSERT_TRUE(g.r(successor).Propose(g.now(), "d", 4).ok());
  g.Advance(20'000);
  for (ReplicaId id : rest) {
    EXPECT_EQ(AppliedCommands(g, id), (std::vector<std::string>{"a", "b", "c", "d"})) << id;
  }
  EXPECT_NE(g.r(leader).role(), Role::kLeader);
  EXPECT_EQ(g.r(removed).role(), Role::kFollower);
}

}  // namespace
}  // namespace tessera::consensus
