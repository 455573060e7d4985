// Goal: phase 2 emits exactly the documented Accepts and acks, and commits only on durable quorums.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "common/limits.h"
#include "consensus/replica.h"
#include "consensus/replica_test_util.h"
#include "consensus/test_group.h"

namespace tessera::consensus {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using namespace testing;  // NOLINT: test builders

const pb::Ballot kB11 = B(1, 1);

TEST(Replication, ProposalsBetweenTakeReadyCallsGoOutAsOneAcceptPerFollower) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  EXPECT_EQ(r->Propose(kT0 + 1, "a", 11).value(), 2u);
  EXPECT_EQ(r->Propose(kT0 + 1, "b", 12).value(), 3u);
  EXPECT_EQ(r->Propose(kT0 + 1, "c", 13).value(), 4u);
  Ready rd = r->TakeReady();
  EXPECT_THAT(Strs(rd.entries), ElementsAre("2@1.1 cmd=a#11", "3@1.1 cmd=b#12", "4@1.1 cmd=c#13"));
  EXPECT_EQ(Str(rd.hard_state), "promised=1.1 chosen=1");  // the chosen index rides along
  const std::string batch = " [2@1.1 cmd=a#11, 3@1.1 cmd=b#12, 4@1.1 cmd=c#13]";
  EXPECT_THAT(Strs(rd.messages),
              ElementsAre("1->2 accept b=1.1 first=2 commit=1 last=4 seq=1" + batch,
                          "1->3 accept b=1.1 first=2 commit=1 last=4 seq=1" + batch));
  EXPECT_THAT(rd.messages_after_persist, IsEmpty());
  EXPECT_THAT(rd.committed, IsEmpty());
  EXPECT_NE(rd.persist_seq, 0u);
}

TEST(Replication, LeaderPipelinesAcceptsBeforeAnyAcknowledgement) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  ASSERT_TRUE(r->Propose(kT0 + 1, "a", 1).ok());
  Ready first = r->TakeReady();
  ASSERT_TRUE(r->Propose(kT0 + 2, "b", 2).ok());
  Ready second = r->TakeReady();
  EXPECT_THAT(Strs(first.messages),
              ElementsAre("1->2 accept b=1.1 first=2 commit=1 last=2 seq=1 [2@1.1 cmd=a#1]",
                          "1->3 accept b=1.1 first=2 commit=1 last=2 seq=1 [2@1.1 cmd=a#1]"));
  EXPECT_THAT(Strs(second.messages),
              ElementsAre("1->2 accept b=1.1 first=3 commit=1 last=3 seq=1 [3@1.1 cmd=b#2]",
                          "1->3 accept b=1.1 first=3 commit=1 last=3 seq=1 [3@1.1 cmd=b#2]"));
  EXPECT_EQ(Str(second.hard_state), "none");
  EXPECT_LT(first.persist_seq, second.persist_seq);
}

// First slots of the Accepts in `messages` addressed to `to`.
std::vector<Slot> AcceptsTo(const std::vector<pb::Message>& messages, ReplicaId to) {
  std::vector<Slot> firsts;
  for (const pb::Message& m : messages) {
    if (m.to() == to && m.has_accept() && m.accept().entries_size() > 0) {
      firsts.push_back(m.accept().first_slot());
    }
  }
  return firsts;
}

TEST(Replication, InflightBytesToOneFollowerAreBounded) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  const std::string mib(1 << 20, 'x');  // each its own Accept (kAcceptBytesMax)
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(r->Propose(kT0 + 1, mib, 100 + i).ok());  // slots 2..13
  Ready rd = TakeAndPersist(*r);
  const size_t window = limits::kInflightBytesPerPeerMax / mib.size();
  ASSERT_LT(window, 12u);
  EXPECT_EQ(AcceptsTo(rd.messages, 2).size(), window);
  EXPECT_EQ(AcceptsTo(rd.messages, 3).size(), window);
  EXPECT_FALSE(r->HasReady());  // a closed window is nothing to do, not a spin

  r->Step(kT0 + 2, AckMsg(2, 1, kB11, 3, 1));  // follower 2 holds slots 2 and 3
  rd = r->TakeReady();
  EXPECT_THAT(AcceptsTo(rd.messages, 2), ElementsAre(2 + window, 3 + window));
  EXPECT_THAT(AcceptsTo(rd.messages, 3), IsEmpty());
}

TEST(Replication, NothingCommitsUntilAQuorumIncludingTheLeaderMadeItDurable) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  ASSERT_TRUE(r->Propose(kT0 + 1, "a", 1).ok());
  Ready rd = r->TakeReady();  // the leader's own write of slot 2 is not durable yet

  r->Step(kT0 + 2, AckMsg(2, 1, kB11, 2, 1));  // one follower made it durable
  EXPECT_EQ(r->chosen_index(), 1u);
  EXPECT_FALSE(r->HasReady());
  EXPECT_THAT(r->TakeReady().committed, IsEmpty());

  r->OnPersisted(rd.persist_seq);  // now the leader too: {1, 2} of {1, 2, 3}
  EXPECT_EQ(r->chosen_index(), 2u);
  rd = r->TakeReady();
  EXPECT_THAT(Strs(rd.committed), ElementsAre("2@1.1 cmd=a#1"));
  EXPECT_EQ(Str(rd.hard_state), "none");

  // The leader's own persist alone is no quorum either.
  ASSERT_TRUE(r->Propose(kT0 + 3, "b", 2).ok());
  rd = r->TakeReady();
  r->OnPersisted(rd.persist_seq);
  EXPECT_EQ(r->chosen_index(), 2u);
  EXPECT_THAT(r->TakeReady().committed, IsEmpty());
  r->Step(kT0 + 4, AckMsg(3, 1, kB11, 3, 1));
  EXPECT_THAT(Strs(r->TakeReady().committed), ElementsAre("3@1.1 cmd=b#2"));
}

TEST(Replication, CommitIndexRidesOnHeartbeatsAndAccepts) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  ASSERT_TRUE(r->Propose(kT0 + 1, "a", 1).ok());
  TakeAndPersist(*r);
  r->Step(kT0 + 2, AckMsg(2, 1, kB11, 2, 1));
  r->Step(kT0 + 2, AckMsg(3, 1, kB11, 2, 1));
  EXPECT_THAT(Strs(r->TakeReady().committed), ElementsAre("2@1.1 cmd=a#1"));

  r->Tick(kT0 + 9'999);
  EXPECT_FALSE(r->HasReady());
  r->Tick(kT0 + 10'000);  // heartbeat interval: empty Accepts, sequence 2
  Ready rd = r->TakeReady();
  EXPECT_THAT(Strs(rd.messages), ElementsAre("1->2 accept b=1.1 first=3 commit=2 last=2 seq=2",
                                             "1->3 accept b=1.1 first=3 commit=2 last=2 seq=2"));
  ASSERT_TRUE(r->Propose(kT0 + 10'001, "b", 2).ok());
  rd = r->TakeReady();
  EXPECT_THAT(Strs(rd.messages),
              ElementsAre("1->2 accept b=1.1 first=3 commit=2 last=3 seq=2 [3@1.1 cmd=b#2]",
                          "1->3 accept b=1.1 first=3 commit=2 last=3 seq=2 [3@1.1 cmd=b#2]"));
  EXPECT_EQ(Str(rd.hard_state), "promised=1.1 chosen=2");
}

TEST(Replication, FollowerAcknowledgesAfterPersistAndChoosesMinOfCommitAndMatched) {
  auto f = NewReplica(2, Recovered(Members({1, 2, 3})));
  f->Step(kT0, AcceptMsg(1, 2, kB11, 1, {Noop(1, kB11), Cmd(2, kB11, "a"), Cmd(3, kB11, "b")},
                         /*commit=*/5, /*leader_last=*/5, 1));
  EXPECT_EQ(f->chosen_index(), 3u);  // the leader chose 5, we hold its values up to 3
  Ready rd = f->TakeReady();
  EXPECT_EQ(Str(rd.hard_state), "promised=1.1 chosen=3");
  EXPECT_THAT(Strs(rd.entries), ElementsAre("1@1.1 noop", "2@1.1 cmd=a", "3@1.1 cmd=b"));
  EXPECT_THAT(rd.messages, IsEmpty());
  EXPECT_THAT(Strs(rd.messages_after_persist),
              ElementsAre("2->1 accepted b=1.1 ok promised=1.1 matched=3 seq=1 start=1"));
  EXPECT_THAT(rd.committed, IsEmpty());  // not durable here yet
  f->OnPersisted(rd.persist_seq);
  rd = f->TakeReady();
  EXPECT_THAT(Strs(rd.committed), ElementsAre("1@1.1 noop", "2@1.1 cmd=a", "3@1.1 cmd=b"));
  EXPECT_EQ(rd.persist_seq, 0u);

  // A heartbeat with nothing pending is acknowledged at once, no write.
  f->Step(kT0 + 10'000, AcceptMsg(1, 2, kB11, 4, {}, 5, 5, 2));
  rd = TakeAndPersist(*f);
  EXPECT_EQ(f->chosen_index(), 3u);
  EXPECT_EQ(rd.persist_seq, 0u);
  EXPECT_THAT(Strs(rd.messages),
              ElementsAre("2->1 accepted b=1.1 ok promised=1.1 matched=3 seq=2 start=1"));

  f->Step(kT0 + 10'001, AcceptMsg(1, 2, kB11, 4, {Cmd(4, kB11, "c"), Cmd(5, kB11, "d")}, 5, 5, 2));
  rd = TakeAndPersist(*f);
  EXPECT_EQ(Str(rd.hard_state), "promised=1.1 chosen=5");
  EXPECT_THAT(Strs(rd.messages_after_persist),
              ElementsAre("2->1 accepted b=1.1 ok promised=1.1 matched=5 seq=2 start=1"));
  EXPECT_THAT(Strs(f->TakeReady().committed), ElementsAre("4@1.1 cmd=c", "5@1.1 cmd=d"));
}

TEST(Replication, AcceptWithGapIsRefusedWithMatchedSlotHint) {
  auto f = NewReplica(2, Recovered(Members({1, 2, 3})));
  f->Step(kT0, AcceptMsg(1, 2, kB11, 1, {Noop(1, kB11)}, 0, 1, 1));
  TakeAndPersist(*f);
  f->Step(kT0 + 1, AcceptMsg(1, 2, kB11, 4, {Cmd(4, kB11, "x")}, 1, 4, 1));
  Ready rd = f->TakeReady();
  EXPECT_THAT(Strs(rd.messages),
              ElementsAre("2->1 accepted b=1.1 nack promised=1.1 matched=1 seq=1 start=1"));
  EXPECT_THAT(rd.messages_after_persist, IsEmpty());
  EXPECT_THAT(rd.entries, IsEmpty());
  EXPECT_EQ(Str(rd.hard_state), "none");
  EXPECT_EQ(f->last_slot(), 1u);
  EXPECT_EQ(f->EntryAt(4), nullptr);
}

TEST(Replication, LeaderResendsFromTheReportedMatchedSlotAfterAGap) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  ASSERT_TRUE(r->Propose(kT0 + 1, "a", 1).ok());
  TakeAndPersist(*r);  // this Accept never reaches 3
  ASSERT_TRUE(r->Propose(kT0 + 2, "b", 2).ok());
  TakeAndPersist(*r);
  r->Step(kT0 + 3, NackMsg(3, 1, kB11, kB11, /*matched=*/1, 1));
  Ready rd = r->TakeReady();
  EXPECT_THAT(Strs(rd.messages),
              ElementsAre("1->3 accept b=1.1 first=2 commit=1 last=3 seq=1 "
                          "[2@1.1 cmd=a#1, 3@1.1 cmd=b#2]"));
  EXPECT_EQ(r->role(), Role::kLeader);
}

TEST(Replication, AcceptWithLowerBallotIsRefusedWithThePromisedBallot) {
  auto f = NewReplica(2, Recovered(Members({1, 2, 3}), {}, B(5, 3)));
  f->Step(kT0, AcceptMsg(1, 2, kB11, 1, {Noop(1, kB11)}, 0, 1, 1));
  Ready rd = f->TakeReady();
  EXPECT_THAT(Strs(rd.messages),
              ElementsAre("2->1 accepted b=1.1 nack promised=5.3 matched=0 seq=0 start=0"));
  EXPECT_THAT(rd.entries, IsEmpty());
  EXPECT_EQ(Str(rd.hard_state), "none");
  EXPECT_EQ(f->leader_hint(), 0u);
}

TEST(Replication, LeaderStepsDownOnSeeingAHigherPromisedBallot) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  ASSERT_TRUE(r->HoldsLease(kT0 + 1));
  r->Step(kT0 + 1, NackMsg(2, 1, kB11, B(5, 3), 0, 1));
  EXPECT_EQ(r->role(), Role::kFollower);
  EXPECT_FALSE(r->HoldsLease(kT0 + 1));
  auto slot = r->Propose(kT0 + 2, "late", 1);
  ASSERT_FALSE(slot.ok());
  EXPECT_EQ(slot.status().code(), StatusCode::kNotLeader);
  EXPECT_EQ(r->LeaseReadIndex(kT0 + 2).status().code(), StatusCode::kNotLeader);
}

TEST(Replication, AcceptFromAHigherBallotMakesTheLeaderFollowIt) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  r->Step(kT0 + 1, AcceptMsg(3, 1, B(2, 3), 2, {Noop(2, B(2, 3))}, 1, 2, 1));
  EXPECT_EQ(r->role(), Role::kFollower);
  EXPECT_EQ(r->leader_hint(), 3u);
  Ready rd = r->TakeReady();
  EXPECT_THAT(Strs(rd.messages_after_persist),
              ElementsAre("1->3 accepted b=2.3 ok promised=2.3 matched=2 seq=1 start=1"));
}

// The new leader's chosen prefix (slots 1-3) was accepted under the old
// ballot; a replica that missed it must still receive it in well-formed
// Accepts carrying the new ballot.
TEST(Replication, LaggingReplicaCatchesUpOnSlotsChosenUnderAnEarlierBallot) {
  auto leader = NewReplica(1, Recovered(Members({1, 2, 3}),
                                        {Cmd(1, B(1, 2), "a"), Cmd(2, B(1, 2), "b"),
                                         Cmd(3, B(1, 2), "c")},
                                        B(1, 2), /*chosen=*/3));
  leader->Campaign(kT0);
  TakeAndPersist(*leader);
  leader->Step(kT0, PromiseMsg(2, 1, B(2, 1), 3));
  ASSERT_EQ(leader->role(), Role::kLeader);
  Ready rd = TakeAndPersist(*leader);
  EXPECT_THAT(Strs(rd.entries), ElementsAre("4@2.1 noop"));

  auto lagging = NewReplica(3, Recovered(Members({1, 2, 3})));
  for (const pb::Message& m : rd.messages) {
    if (m.to() == 3) lagging->Step(kT0 + 1, m);
  }
  Ready lag = TakeAndPersist(*lagging);
  EXPECT_THAT(Strs(lag.messages),
              ElementsAre("3->1 accepted b=2.1 nack promised=2.1 matched=0 seq=1 start=1"));
  EXPECT_THAT(Strs(lag.messages_after_persist),
              ElementsAre("3->1 accepted b=2.1 ok promised=2.1 matched=0 seq=1 start=1"));

  for (const pb::Message& m : lag.messages) leader->Step(kT0 + 2, m);
  for (const pb::Message& m : lag.messages_after_persist) leader->Step(kT0 + 2, m);
  rd = leader->TakeReady();
  ASSERT_THAT(Strs(rd.messages),
              ElementsAre("1->3 accept b=2.1 first=1 commit=3 last=4 seq=1 "
                          "[1@2.1 cmd=a, 2@2.1 cmd=b, 3@2.1 cmd=c, 4@2.1 noop]"));

  lagging->Step(kT0 + 3, rd.messages[0]);
  lag = TakeAndPersist(*lagging);
  EXPECT_THAT(Strs(lag.messages_after_persist),
              ElementsAre("3->1 accepted b=2.1 ok promised=2.1 matched=4 seq=1 start=1"));
  EXPECT_THAT(Strs(lagging->TakeReady().committed),
              ElementsAre("1@2.1 cmd=a", "2@2.1 cmd=b", "3@2.1 cmd=c"));
  leader->Step(kT0 + 4, lag.messages_after_persist[0]);
  EXPECT_EQ(leader->chosen_index(), 4u);
}

// A late Accept from the old leader and the new leader's first Accept land in
// one Ready: the durable log the host builds from it must equal the log in
// memory (no stale slot written after the truncation).
TEST(Replication, TruncationOfStaleSlotsAlsoDropsTheirPendingWrites) {
  std::vector<pb::Entry> log = {Noop(1, kB11),         Cmd(2, kB11, "a"), Cmd(3, kB11, "b"),
                                Cmd(4, kB11, "c"),     Cmd(5, kB11, "d"), Cmd(6, kB11, "e"),
                                Cmd(7, kB11, "f")};
  auto f = NewReplica(2, Recovered(Members({1, 2, 3}), log, kB11, /*chosen=*/5));
  f->Step(kT0, AcceptMsg(1, 2, kB11, 6, {Cmd(6, kB11, "e"), Cmd(7, kB11, "f"), Cmd(8, kB11, "g")},
                         5, 8, 3));
  f->Step(kT0 + 1, AcceptMsg(3, 2, B(2, 3), 6, {}, 5, 5, 1));
  EXPECT_EQ(f->last_slot(), 5u);
  Ready rd = f->TakeReady();
  ASSERT_TRUE(rd.truncate_from.has_value());
  EXPECT_EQ(*rd.truncate_from, 6u);
  EXPECT_THAT(Strs(rd.entries), IsEmpty());

  std::map<Slot, pb::Entry> durable;  // the host's log after applying the Ready
  for (const pb::Entry& e : log) durable[e.slot()] = e;
  durable.erase(durable.lower_bound(*rd.truncate_from), durable.end());
  for (const pb::Entry& e : rd.entries) durable[e.slot()] = e;
  ASSERT_EQ(durable.rbegin()->first, f->last_slot());
  for (const auto& [slot, e] : durable) EXPECT_EQ(Str(e), Str(*f->EntryAt(slot)));
}

// --- multi-replica -------------------------------------------------------------

std::vector<std::string> AppliedCommands(TestGroup& g, ReplicaId id) {
  std::vector<std::string> out;
  for (const pb::Entry& e : g.node(id).applied) {
    if (e.type() == pb::ENTRY_COMMAND) out.push_back(e.command());
  }
  return out;
}

TEST(ReplicationGroup, RestartedReplicaCatchesUpUnderANewLeader) {
  TestGroup g(3);
  const ReplicaId first = g.ElectLeader();
  ASSERT_NE(first, 0u);
  const ReplicaId lagging = first % 3 + 1;
  const ReplicaId next = lagging % 3 + 1;
  g.node(lagging).up = false;
  for (const char* cmd : {"a", "b", "c"}) ASSERT_TRUE(g.r(first).Propose(g.now(), cmd, 1).ok());
  g.Advance(20'000);
  ASSERT_EQ(AppliedCommands(g, next), (std::vector<std::string>{"a", "b", "c"}));

  g.node(first).up = false;
  g.Advance(200'000);  // `next` is past the old leader's lease
  g.Restart(lagging);
  g.Advance(110'000);  // `lagging` is past its restart guard
  g.r(next).Campaign(g.now());
  g.Advance(1'000);
  ASSERT_EQ(g.r(next).role(), Role::kLeader);
  ASSERT_TRUE(g.r(next).Propose(g.now(), "d", 2).ok());
  g.Advance(50'000);
  const std::vector<std::string> all{"a", "b", "c", "d"};
  EXPECT_EQ(AppliedCommands(g, next), all);
  EXPECT_EQ(AppliedCommands(g, lagging), all);
}

// --- bad input -----------------------------------------------------------------

TEST(BadInput, MalformedAcceptsAreRefusedWithoutStateChange) {
  auto f = NewReplica(2, Recovered(Members({1, 2, 3}), {}, kB11));
  f->Step(kT0, AcceptMsg(1, 2, kB11, 1, {Noop(1, kB11), Cmd(3, kB11, "x")}, 0, 3, 1));
  f->Step(kT0, AcceptMsg(1, 2, kB11, 1, {Noop(1, B(0, 1))}, 0, 1, 1));
  f->Step(kT0, AcceptMsg(1, 2, B(2, 1), 1, {Noop(1, kB11)}, 0, 1, 1));  // would raise promise
  f->Step(kT0, AcceptMsg(1, 2, kB11, 0, {}, 0, 0, 1));
  Ready rd = f->TakeReady();
  EXPECT_THAT(Strs(rd.messages),
              ElementsAre("2->1 accepted b=1.1 nack promised=1.1 matched=0 seq=0 start=0",
                          "2->1 accepted b=1.1 nack promised=1.1 matched=0 seq=0 start=0",
                          "2->1 accepted b=2.1 nack promised=1.1 matched=0 seq=0 start=0",
                          "2->1 accepted b=1.1 nack promised=1.1 matched=0 seq=0 start=0"));
  EXPECT_THAT(rd.entries, IsEmpty());
  EXPECT_EQ(Str(rd.hard_state), "none");
  EXPECT_EQ(Str(f->promised()), "1.1");
  EXPECT_EQ(f->last_slot(), 0u);
  EXPECT_EQ(f->leader_hint(), 0u);
}

TEST(BadInput, MessagesForAnotherGroupOrReplicaAreIgnored) {
  auto f = NewReplica(2, Recovered(Members({1, 2, 3})));
  pb::Message other_group = AcceptMsg(1, 2, kB11, 1, {Noop(1, kB11)}, 1, 1, 1);
  other_group.set_group_id(8);
  f->Step(kT0, other_group);
  f->Step(kT0, AcceptMsg(1, 9, kB11, 1, {Noop(1, kB11)}, 1, 1, 1));
  f->Step(kT0, AcceptMsg(2, 2, kB11, 1, {Noop(1, kB11)}, 1, 1, 1));  // from itself
  f->Step(kT0, PrepareMsg(3, 4, B(9, 3), 1, 0));
  f->Step(kT0, Msg(1, 2, kB11));  // no body
  EXPECT_FALSE(f->HasReady());
  EXPECT_EQ(Str(f->promised()), "0.0");
  EXPECT_EQ(f->last_slot(), 0u);
}

TEST(BadInput, StrayRepliesAndUnknownPersistSequencesAreHarmless) {
  auto f = NewReplica(2, Recovered(Members({1, 2, 3})));
  f->OnPersisted(12345);
  f->Step(kT0, PromiseMsg(1, 2, B(1, 2), 0));
  f->Step(kT0, AckMsg(1, 2, B(1, 2), 9, 9));
  f->Step(kT0, PreVoteReplyMsg(1, 2, B(1, 2), true));
  EXPECT_FALSE(f->HasReady());
  EXPECT_EQ(f->role(), Role::kFollower);

  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  r->Step(kT0 + 1, AckMsg(9, 1, kB11, 1'000, 1));   // not a member
  r->Step(kT0 + 1, AckMsg(2, 1, B(0, 1), 1'000, 1));  // another ballot of ours
  r->Step(kT0 + 1, PromiseMsg(2, 1, kB11, 0, {Cmd(5, kB11, "late")}));
  EXPECT_FALSE(r->HasReady());
  EXPECT_EQ(r->chosen_index(), 1u);
  EXPECT_EQ(r->last_slot(), 1u);
  r->OnPersisted(999);
  EXPECT_EQ(r->role(), Role::kLeader);
}

}  // namespace
}  // namespace tessera::consensus
