// Goal: leadership moves to a chosen caught-up voter at once, without
// waiting out the lease, and without a moment in which two replicas could
// serve lease reads; a transfer that fails ends in a fresh election.
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

// A settled three-replica group whose leader committed `writes` commands.
ReplicaId SettledGroup(TestGroup& g, int writes) {
  const ReplicaId leader = g.ElectLeader();
  EXPECT_NE(leader, 0u);
  for (int i = 0; i < writes; ++i) {
    EXPECT_TRUE(g.r(leader).Propose(g.now(), "w" + std::to_string(i), 100 + i).ok());
  }
  g.Advance(30'000);  // commits, and heartbeats give the leader its lease
  EXPECT_TRUE(g.r(leader).HoldsLease(g.now()));
  return leader;
}

ReplicaId Other(ReplicaId a, ReplicaId b) {
  for (ReplicaId id : {1u, 2u, 3u}) {
    if (id != a && id != b) return id;
  }
  return 0;
}

bool IsTimeoutNow(const pb::Message& m) { return m.has_timeout_now(); }

TEST(Transfer, TargetLeadsAtOnceWithoutWaitingForTheLease) {
  TestGroup g(3);
  const ReplicaId old_leader = SettledGroup(g, 3);
  const ReplicaId target = Other(old_leader, 0);
  const TimeUs start = g.now();
  ASSERT_TRUE(g.r(old_leader).TransferLeadership(g.now(), target).ok());
  EXPECT_FALSE(g.r(old_leader).HoldsLease(g.now()));
  g.Settle();  // no time passes: no lease window has expired
  EXPECT_EQ(g.now(), start);
  EXPECT_EQ(g.r(target).role(), Role::kLeader);
  EXPECT_EQ(g.r(old_leader).role(), Role::kFollower);
  EXPECT_EQ(g.r(old_leader).leader_hint(), target);

  // The new leader's lease and log: everything committed before is there,
  // and it takes writes.
  g.Advance(30'000);
  EXPECT_TRUE(g.r(target).HoldsLease(g.now()));
  EXPECT_FALSE(g.r(old_leader).HoldsLease(g.now()));
  ASSERT_TRUE(g.r(target).Propose(g.now(), "after", 200).ok());
  g.Advance(30'000);
  for (ReplicaId id : {1u, 2u, 3u}) {
    std::vector<std::string> commands;
    for (const pb::Entry& e : g.node(id).applied) {
      if (e.type() == pb::ENTRY_COMMAND) commands.push_back(e.command());
    }
    EXPECT_THAT(commands, ElementsAre("w0", "w1", "w2", "after")) << "replica " << id;
  }
}

TEST(Transfer, LeaderTakesNothingWhileTransferringAndNeverRegainsItsLease) {
  TestGroup g(3);
  const ReplicaId leader = SettledGroup(g, 1);
  const ReplicaId target = Other(leader, 0);
  g.SetFilter([](const pb::Message& m) { return !IsTimeoutNow(m); });
  ASSERT_TRUE(g.r(leader).TransferLeadership(g.now(), target).ok());
  EXPECT_EQ(g.r(leader).transfer_target(), target);
  EXPECT_EQ(g.r(leader).Propose(g.now(), "x", 9).status().code(), StatusCode::kThrottled);
  EXPECT_EQ(g.r(leader).LeaseReadIndex(g.now()).status().code(), StatusCode::kThrottled);
  g.Advance(50'000);  // heartbeats keep flowing and are acknowledged
  EXPECT_EQ(g.r(leader).role(), Role::kLeader);
  EXPECT_FALSE(g.r(leader).HoldsLease(g.now()));
}

TEST(Transfer, FailedTransferEndsInAFreshElectionWithinTheTimeout) {
  TestGroup g(3);
  const ReplicaId leader = SettledGroup(g, 1);
  const uint64_t round = g.r(leader).promised().round();
  const ReplicaId target = Other(leader, 0);
  g.SetFilter([](const pb::Message& m) { return !IsTimeoutNow(m); });
  ASSERT_TRUE(g.r(leader).TransferLeadership(g.now(), target).ok());
  g.Advance(TestOptions(1).election_timeout_min_us + 50'000);
  ReplicaId now_leading = 0;
  for (ReplicaId id : {1u, 2u, 3u}) {
    if (g.r(id).role() == Role::kLeader) now_leading = id;
  }
  // The old leader ran the election at once, naming its own ballot released.
  ASSERT_EQ(now_leading, leader);
  EXPECT_GT(g.r(leader).promised().round(), round);
  EXPECT_EQ(g.r(leader).transfer_target(), 0u);
  EXPECT_TRUE(g.r(leader).HoldsLease(g.now()));
  EXPECT_TRUE(g.r(leader).Propose(g.now(), "y", 10).ok());
}

TEST(Transfer, WaitsUntilTheTargetHoldsTheWholeLog) {
  TestGroup g(3);
  const ReplicaId leader = SettledGroup(g, 0);
  const ReplicaId target = Other(leader, 0);
  bool cut = true;
  g.SetFilter([&](const pb::Message& m) { return !cut || (m.to() != target && m.from() != target); });
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(g.r(leader).Propose(g.now(), "lag", 300 + i).ok());
  g.Advance(20'000);
  g.sent().clear();
  ASSERT_TRUE(g.r(leader).TransferLeadership(g.now(), target).ok());
  g.Settle();
  for (const pb::Message& m : g.sent()) EXPECT_FALSE(IsTimeoutNow(m)) << Str(m);
  cut = false;
  g.Advance(30'000);
  EXPECT_EQ(g.r(target).role(), Role::kLeader);
  EXPECT_GE(g.r(target).chosen_index(), 6u);  // opening no-op + 5 commands
}

TEST(Transfer, RefusesWhatItCannotDo) {
  TestGroup g(3);
  const ReplicaId leader = SettledGroup(g, 0);
  const ReplicaId follower = Other(leader, 0);
  EXPECT_EQ(g.r(follower).TransferLeadership(g.now(), leader).code(), StatusCode::kNotLeader);
  EXPECT_EQ(g.r(leader).TransferLeadership(g.now(), leader).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(g.r(leader).TransferLeadership(g.now(), 9).code(), StatusCode::kInvalidArgument);
  g.SetFilter([](const pb::Message& m) { return !IsTimeoutNow(m); });
  ASSERT_TRUE(g.r(leader).TransferLeadership(g.now(), follower).ok());
  EXPECT_TRUE(g.r(leader).TransferLeadership(g.now(), follower).ok());  // the same: idempotent
  EXPECT_EQ(g.r(leader).TransferLeadership(g.now(), Other(leader, follower)).code(),
            StatusCode::kConflict);
}

TEST(Transfer, AcceptorWaivesTheLeaseOnlyForTheBallotItFollows) {
  auto f = NewReplica(2, Recovered(Members({1, 2, 3})));
  f->Step(kT0, AcceptMsg(1, 2, B(2, 1), 1, {}, 0, 0, 1));
  TakeAndPersist(*f);
  pb::Message stale = PrepareMsg(3, 2, B(3, 3), 1, 0);
  *stale.mutable_prepare()->mutable_released_ballot() = B(1, 1);
  f->Step(kT0 + 1'000, stale);
  EXPECT_THAT(Strs(f->TakeReady().messages),
              ElementsAre("2->3 promise b=3.3 refused promised=2.1 chosen=0 start=0 lease"));
  pb::Message released = PrepareMsg(3, 2, B(3, 3), 1, 0);
  *released.mutable_prepare()->mutable_released_ballot() = B(2, 1);
  f->Step(kT0 + 1'000, released);
  EXPECT_THAT(Strs(f->TakeReady().messages_after_persist),
              ElementsAre("2->3 promise b=3.3 granted promised=3.3 chosen=0 start=1"));
}

TEST(Transfer, TimeoutNowCountsOnlyFromTheLeaderOfTheBallotFollowed) {
  auto f = NewReplica(2, Recovered(Members({1, 2, 3})));
  f->Step(kT0, AcceptMsg(1, 2, B(2, 1), 1, {}, 0, 0, 1));
  TakeAndPersist(*f);
  pb::Message old_ballot = Msg(1, 2, B(1, 1));
  old_ballot.mutable_timeout_now();
  f->Step(kT0 + 1'000, old_ballot);
  pb::Message not_its_owner = Msg(3, 2, B(2, 1));
  not_its_owner.mutable_timeout_now();
  f->Step(kT0 + 1'000, not_its_owner);
  Ready rd = f->TakeReady();
  EXPECT_THAT(rd.messages, IsEmpty());
  EXPECT_THAT(rd.messages_after_persist, IsEmpty());
  EXPECT_EQ(f->role(), Role::kFollower);

  pb::Message from_leader = Msg(1, 2, B(2, 1));
  from_leader.mutable_timeout_now();
  f->Step(kT0 + 1'000, from_leader);
  EXPECT_EQ(f->role(), Role::kCandidate);
  EXPECT_THAT(Strs(TakeAndPersist(*f).messages_after_persist),
              ElementsAre("2->1 prepare b=3.2 from=1 chosen=0 released=2.1",
                          "2->3 prepare b=3.2 from=1 chosen=0 released=2.1"));
}

}  // namespace
}  // namespace tessera::consensus
