// Goal: pre-vote and Paxos phase 1 emit exactly the documented messages, refusals and recovery.
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

TEST(Ballot, OrdersByRoundThenReplicaId) {
  EXPECT_TRUE(BallotLess(B(1, 3), B(2, 1)));
  EXPECT_TRUE(BallotLess(B(2, 1), B(2, 2)));
  EXPECT_FALSE(BallotLess(B(2, 2), B(2, 1)));
  EXPECT_FALSE(BallotLess(B(2, 2), B(2, 2)));
  EXPECT_TRUE(BallotLess(B(0, 0), B(0, 1)));
  EXPECT_TRUE(BallotEq(B(3, 1), B(3, 1)));
  EXPECT_FALSE(BallotEq(B(3, 1), B(3, 2)));
}

TEST(Election, AcceptorOrdersPreparesByRoundThenReplicaId) {
  auto r = NewReplica(2, Recovered(Members({1, 2, 3}), {}, B(2, 2)));
  r->Step(kT0, PrepareMsg(1, 2, B(2, 1), 1, 0));  // same round, lower replica id
  r->Step(kT0, PrepareMsg(3, 2, B(2, 3), 1, 0));  // same round, higher replica id
  Ready rd = r->TakeReady();
  EXPECT_THAT(Strs(rd.messages),
              ElementsAre("2->1 promise b=2.1 refused promised=2.2 chosen=0 start=0"));
  EXPECT_THAT(Strs(rd.messages_after_persist),
              ElementsAre("2->3 promise b=2.3 granted promised=2.3 chosen=0 start=1"));
  EXPECT_EQ(Str(rd.hard_state), "promised=2.3 chosen=0");
}

TEST(Election, CandidateSendsOnePrepareFromFirstUnchosenSlotOnceDurable) {
  auto r = NewReplica(1, Recovered(Members({1, 2, 3}),
                                   {Cmd(1, B(1, 2), "a"), Cmd(2, B(1, 2), "b"),
                                    Cmd(3, B(1, 2), "c")},
                                   B(1, 2), /*chosen=*/2));
  r->Campaign(kT0);
  EXPECT_EQ(r->role(), Role::kCandidate);
  EXPECT_EQ(Str(r->promised()), "2.1");
  Ready rd = r->TakeReady();
  EXPECT_EQ(Str(rd.hard_state), "promised=2.1 chosen=2");
  EXPECT_THAT(rd.entries, IsEmpty());
  EXPECT_THAT(Strs(rd.messages), IsEmpty());
  EXPECT_THAT(Strs(rd.messages_after_persist),
              ElementsAre("1->2 prepare b=2.1 from=3 chosen=2",
                          "1->3 prepare b=2.1 from=3 chosen=2"));
  EXPECT_NE(rd.persist_seq, 0u);
}

TEST(Election, PrepareWithLowerOrEqualForeignBallotIsRefusedWithOutrankingBallot) {
  auto r = NewReplica(2, Recovered(Members({1, 2, 3}), {}, B(3, 3)));
  r->Step(kT0, PrepareMsg(1, 2, B(2, 1), 1, 0));
  r->Step(kT0, PrepareMsg(1, 2, B(3, 3), 1, 0));  // 3's ballot, but sent by 1
  Ready rd = r->TakeReady();
  EXPECT_THAT(Strs(rd.messages),
              ElementsAre("2->1 promise b=2.1 refused promised=3.3 chosen=0 start=0",
                          "2->1 promise b=3.3 refused promised=3.3 chosen=0 start=0"));
  EXPECT_THAT(rd.messages_after_persist, IsEmpty());
  EXPECT_EQ(Str(rd.hard_state), "none");
  EXPECT_EQ(rd.persist_seq, 0u);
  EXPECT_EQ(Str(r->promised()), "3.3");
}

TEST(Election, AcceptorPromisesOnlyAfterThePromiseIsDurable) {
  auto r = NewReplica(2, Recovered(Members({1, 2, 3}),
                                   {Cmd(1, B(1, 1), "a"), Cmd(2, B(1, 1), "b", 7),
                                    Cmd(3, B(1, 1), "c")},
                                   B(1, 1), /*chosen=*/1));
  r->Step(kT0, PrepareMsg(3, 2, B(2, 3), 2, 1));
  Ready rd = r->TakeReady();
  EXPECT_EQ(Str(rd.hard_state), "promised=2.3 chosen=1");
  EXPECT_THAT(rd.messages, IsEmpty());
  EXPECT_THAT(Strs(rd.messages_after_persist),
              ElementsAre("2->3 promise b=2.3 granted promised=2.3 chosen=1 start=1 "
                          "[2@1.1 cmd=b#7, 3@1.1 cmd=c]"));
  EXPECT_NE(rd.persist_seq, 0u);
  r->OnPersisted(rd.persist_seq);

  // A repeated Prepare from the same candidate is answered again, unchanged,
  // and at once: the promise is durable already and nothing else is pending.
  r->Step(kT0 + 1, PrepareMsg(3, 2, B(2, 3), 2, 1));
  rd = r->TakeReady();
  EXPECT_EQ(Str(rd.hard_state), "none");
  EXPECT_EQ(rd.persist_seq, 0u);
  EXPECT_THAT(rd.messages_after_persist, IsEmpty());
  EXPECT_THAT(Strs(rd.messages),
              ElementsAre("2->3 promise b=2.3 granted promised=2.3 chosen=1 start=1 "
                          "[2@1.1 cmd=b#7, 3@1.1 cmd=c]"));
}

TEST(Election, CandidateCountsItsOwnPromiseOnlyAfterOnPersisted) {
  auto r = NewReplica(1, Recovered(Members({1, 2, 3})));
  r->Campaign(kT0);
  Ready rd = r->TakeReady();
  r->Step(kT0, PromiseMsg(2, 1, B(1, 1), 0));
  EXPECT_EQ(r->role(), Role::kCandidate);  // 2 alone is no quorum of 3
  EXPECT_FALSE(r->HasReady());
  r->OnPersisted(rd.persist_seq);
  EXPECT_EQ(r->role(), Role::kLeader);
  EXPECT_EQ(r->last_slot(), 1u);  // the opening no-op
}

TEST(Election, PartialPromisesDoNotCountTowardTheQuorum) {
  auto r = NewReplica(1, Recovered(Members({1, 2, 3})));
  r->Campaign(kT0);
  r->OnPersisted(r->TakeReady().persist_seq);
  pb::Message partial = PromiseMsg(2, 1, B(1, 1), 5, {}, /*log_start=*/6);
  partial.mutable_promise()->set_partial(true);
  r->Step(kT0, partial);
  EXPECT_EQ(r->role(), Role::kCandidate);
  r->Step(kT0, PromiseMsg(3, 1, B(1, 1), 0));
  EXPECT_EQ(r->role(), Role::kLeader);
}

// Five voters; the candidate holds slots 1 (chosen) and 2. Acceptor 2 and 4
// report conflicting values; 3's promise is partial and must not count.
TEST(Election, RecoveryReproposesHighestBallotValuesFillsGapsAndOpensWithNoop) {
  auto r = NewReplica(1, Recovered(Members({1, 2, 3, 4, 5}),
                                   {Cmd(1, B(1, 1), "a", 1), Cmd(2, B(1, 1), "b", 2)},
                                   /*promised=*/B(2, 2), /*chosen=*/1));
  r->Campaign(kT0);
  Ready rd = r->TakeReady();
  EXPECT_THAT(Strs(rd.messages_after_persist),
              ElementsAre("1->2 prepare b=3.1 from=2 chosen=1",
                          "1->3 prepare b=3.1 from=2 chosen=1",
                          "1->4 prepare b=3.1 from=2 chosen=1",
                          "1->5 prepare b=3.1 from=2 chosen=1"));
  r->OnPersisted(rd.persist_seq);

  r->Step(kT0, PromiseMsg(2, 1, B(3, 1), 1, {Cmd(2, B(2, 2), "B", 20), Cmd(3, B(2, 2), "c", 3)}));
  pb::Message partial = PromiseMsg(3, 1, B(3, 1), 9, {}, /*log_start=*/10);
  partial.mutable_promise()->set_partial(true);
  r->Step(kT0, partial);
  EXPECT_EQ(r->role(), Role::kCandidate);  // {1, 2} + a partial promise: no quorum of 5
  EXPECT_FALSE(r->HasReady());

  // Slot 3: (2,3) outranks (2,2) by replica id. Slot 4: nobody reported it.
  r->Step(kT0, PromiseMsg(4, 1, B(3, 1), 1,
                          {Cmd(2, B(1, 1), "b", 2), Cmd(3, B(2, 3), "x", 30),
                           Cmd(5, B(1, 3), "e", 5)}));
  ASSERT_EQ(r->role(), Role::kLeader);
  rd = r->TakeReady();
  EXPECT_THAT(Strs(rd.entries), ElementsAre("2@3.1 cmd=B#20", "3@3.1 cmd=x#30", "4@3.1 noop",
                                            "5@3.1 cmd=e#5", "6@3.1 noop"));
  EXPECT_EQ(Str(rd.hard_state), "none");
  // Phase 2 starts at from_slot for everyone; the heartbeat probes from 1.
  const std::string batch =
      " [2@3.1 cmd=B#20, 3@3.1 cmd=x#30, 4@3.1 noop, 5@3.1 cmd=e#5, 6@3.1 noop]";
  EXPECT_THAT(Strs(rd.messages),
              ElementsAre("1->2 accept b=3.1 first=1 commit=1 last=6 seq=1",
                          "1->2 accept b=3.1 first=2 commit=1 last=6 seq=1" + batch,
                          "1->3 accept b=3.1 first=1 commit=1 last=6 seq=1",
                          "1->3 accept b=3.1 first=2 commit=1 last=6 seq=1" + batch,
                          "1->4 accept b=3.1 first=1 commit=1 last=6 seq=1",
                          "1->4 accept b=3.1 first=2 commit=1 last=6 seq=1" + batch,
                          "1->5 accept b=3.1 first=1 commit=1 last=6 seq=1",
                          "1->5 accept b=3.1 first=2 commit=1 last=6 seq=1" + batch));
  EXPECT_THAT(rd.snapshot_requests, IsEmpty());
  EXPECT_THAT(rd.committed, IsEmpty());

  // Phase 1 ran once: new proposals go straight to phase 2.
  ASSERT_TRUE(r->Propose(kT0 + 1, "f", 6).ok());
  rd = r->TakeReady();
  for (const pb::Message& m : rd.messages) EXPECT_TRUE(m.has_accept()) << Str(m);
  EXPECT_THAT(rd.messages_after_persist, IsEmpty());
}

TEST(Election, PromiseWithSlotsBeyondWhatAnyPromiseCarriesIsIgnored) {
  auto r = NewReplica(1, Recovered(Members({1, 2, 3})));
  r->Campaign(kT0);
  r->OnPersisted(r->TakeReady().persist_seq);
  // A corrupt promise must not make the candidate fill billions of no-ops.
  r->Step(kT0, PromiseMsg(2, 1, B(1, 1), 0, {Cmd(1'000'000'000'000, B(0, 2), "far")}));
  EXPECT_EQ(r->role(), Role::kCandidate);
  r->Step(kT0, PromiseMsg(3, 1, B(1, 1), 0, {Cmd(1, B(0, 3), "a")}));
  ASSERT_EQ(r->role(), Role::kLeader);
  EXPECT_EQ(r->last_slot(), 2u);
  EXPECT_EQ(Str(*r->EntryAt(1)), "1@1.1 cmd=a");
}

TEST(Election, RefusalWithHigherBallotEndsCandidacyButLeaseRefusalDoesNot) {
  auto r = NewReplica(1, Recovered(Members({1, 2, 3})));
  r->Campaign(kT0);
  TakeAndPersist(*r);
  r->Step(kT0, RefusedPromiseMsg(2, 1, B(1, 1), B(4, 2), /*lease_active=*/true));
  EXPECT_EQ(r->role(), Role::kCandidate);  // 2 may grant once its lease passes
  r->Step(kT0, RefusedPromiseMsg(3, 1, B(1, 1), B(5, 3), /*lease_active=*/false));
  EXPECT_EQ(r->role(), Role::kFollower);
  // The next attempt outranks every round it was told about.
  r->Campaign(kT0 + 1);
  EXPECT_EQ(Str(r->promised()), "6.1");
}

TEST(Election, RestartedReplicaCannotCampaignWithinOneLease) {
  auto r = NewReplica(1, Recovered(Members({1, 2, 3}), {}, B(1, 2)), kT0);
  r->Campaign(kT0 + 50'000);
  EXPECT_EQ(r->role(), Role::kFollower);
  EXPECT_FALSE(r->HasReady());
  r->Campaign(kT0 + 100'000);
  EXPECT_EQ(r->role(), Role::kCandidate);
  EXPECT_EQ(Str(r->promised()), "2.1");
}

// --- pre-vote ------------------------------------------------------------------

TEST(PreVote, ExpiredTimerSendsPreVoteWithoutChangingAnyBallot) {
  auto r = NewReplica(3, Recovered(Members({1, 2, 3})));
  r->Tick(149'999);  // before any deadline in [E, E2)
  EXPECT_EQ(r->role(), Role::kFollower);
  EXPECT_FALSE(r->HasReady());
  r->Tick(300'000);  // past every deadline in [E, E2)
  EXPECT_EQ(r->role(), Role::kPreCandidate);
  Ready rd = r->TakeReady();
  EXPECT_THAT(Strs(rd.messages), ElementsAre("3->1 prevote b=1.3 round=1 chosen=0",
                                             "3->2 prevote b=1.3 round=1 chosen=0"));
  EXPECT_EQ(Str(rd.hard_state), "none");
  EXPECT_THAT(rd.messages_after_persist, IsEmpty());
  EXPECT_EQ(rd.persist_seq, 0u);
  EXPECT_EQ(Str(r->promised()), "0.0");
}

TEST(PreVote, PeerThatHeardTheLeaderRecentlyRefuses) {
  auto r = NewReplica(2, Recovered(Members({1, 2, 3})));
  r->Step(kT0, AcceptMsg(1, 2, B(1, 1), 1, {}, 0, 0, 1));
  TakeAndPersist(*r);
  r->Step(kT0 + 50'000, PreVoteMsg(3, 2, 2, 0));
  r->Step(kT0 + 149'999, PreVoteMsg(3, 2, 2, 0));
  r->Step(kT0 + 150'000, PreVoteMsg(3, 2, 2, 0));  // silent for election_timeout_min
  Ready rd = r->TakeReady();
  EXPECT_THAT(Strs(rd.messages), ElementsAre("2->3 prevote_reply b=2.3 refused",
                                             "2->3 prevote_reply b=2.3 refused",
                                             "2->3 prevote_reply b=2.3 granted"));
  EXPECT_EQ(Str(rd.hard_state), "none");
  EXPECT_EQ(Str(r->promised()), "1.1");
  EXPECT_EQ(r->leader_hint(), 1u);
}

TEST(PreVote, LeaderRefusesPreVote) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  r->Step(kT0 + 500'000, PreVoteMsg(3, 1, 2, 0));
  EXPECT_THAT(Strs(r->TakeReady().messages),
              ElementsAre("1->3 prevote_reply b=2.3 refused"));
}

TEST(PreVote, QuorumOfGrantsStartsTheElection) {
  auto r = NewReplica(3, Recovered(Members({1, 2, 3})));
  r->Tick(300'000);
  r->TakeReady();
  r->Step(300'001, PreVoteReplyMsg(1, 3, B(0, 3), true));  // wrong round: ignored
  EXPECT_EQ(r->role(), Role::kPreCandidate);
  r->Step(300'001, PreVoteReplyMsg(1, 3, B(1, 3), false));
  EXPECT_EQ(r->role(), Role::kPreCandidate);
  r->Step(300'002, PreVoteReplyMsg(2, 3, B(1, 3), true));
  ASSERT_EQ(r->role(), Role::kCandidate);
  Ready rd = r->TakeReady();
  const std::string b = Str(r->promised());
  EXPECT_EQ(r->promised().replica(), 3u);
  EXPECT_GE(r->promised().round(), 1u);
  EXPECT_EQ(Str(rd.hard_state), "promised=" + b + " chosen=0");
  EXPECT_THAT(Strs(rd.messages_after_persist),
              ElementsAre("3->1 prepare b=" + b + " from=1 chosen=0",
                          "3->2 prepare b=" + b + " from=1 chosen=0"));
}

TEST(PreVote, UnansweredPreCandidateFallsBackToFollower) {
  auto r = NewReplica(3, Recovered(Members({1, 2, 3})));
  r->Tick(300'000);
  ASSERT_EQ(r->role(), Role::kPreCandidate);
  r->Tick(300'000 + 149'999);
  EXPECT_EQ(r->role(), Role::kPreCandidate);
  r->Tick(300'000 + 150'000);
  EXPECT_EQ(r->role(), Role::kFollower);
  EXPECT_EQ(Str(r->promised()), "0.0");
}

// --- multi-replica -------------------------------------------------------------

bool Between(const pb::Message& m, ReplicaId a, ReplicaId b) {
  return (m.from() == a && m.to() == b) || (m.from() == b && m.to() == a);
}

TEST(PreVoteGroup, FollowerCutOffFromTheLeaderOnlyDoesNotDeposeIt) {
  TestGroup g(3);
  const ReplicaId leader = g.ElectLeader();
  ASSERT_NE(leader, 0u);
  g.Advance(20'000);
  const ReplicaId cut = leader == 3 ? 2 : 3;
  const pb::Ballot ballot = g.r(leader).promised();
  g.SetFilter([&](const pb::Message& m) { return !Between(m, leader, cut); });
  const size_t sent_before = g.sent().size();
  g.Advance(1'500'000);  // five maximal election timeouts

  EXPECT_EQ(g.r(leader).role(), Role::kLeader);
  EXPECT_TRUE(BallotEq(g.r(leader).promised(), ballot));
  for (ReplicaId id = 1; id <= 3; ++id) {
    EXPECT_TRUE(BallotEq(g.r(id).promised(), ballot)) << "replica " << id;
  }
  int pre_votes = 0;
  for (size_t i = sent_before; i < g.sent().size(); ++i) {
    const pb::Message& m = g.sent()[i];
    pre_votes += m.has_pre_vote() && m.from() == cut;
    EXPECT_FALSE(m.has_prepare()) << Str(m);
  }
  EXPECT_GT(pre_votes, 0);  // its timer did fire

  const Slot slot = g.r(leader).Propose(g.now(), "during", 1).value();
  g.Advance(20'000);
  EXPECT_GE(g.r(leader).chosen_index(), slot);
  EXPECT_TRUE(g.r(leader).HoldsLease(g.now()));
}

}  // namespace
}  // namespace tessera::consensus
