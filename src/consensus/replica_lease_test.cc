// Goal: leases, the restart guard and check-quorum begin and end exactly when documented.
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
const TimeUs kLeaderLeaseUs = TestOptions(1).LeaderLeaseUs();

TEST(Lease, FollowerRefusesHigherBallotWithinLeaseAndGrantsOnceItPassed) {
  auto f = NewReplica(2, Recovered(Members({1, 2, 3})));
  f->Step(kT0, AcceptMsg(1, 2, kB11, 1, {}, 0, 0, 1));
  TakeAndPersist(*f);
  f->Step(kT0 + 99'999, PrepareMsg(3, 2, B(2, 3), 1, 0));
  Ready rd = f->TakeReady();
  EXPECT_THAT(Strs(rd.messages),
              ElementsAre("2->3 promise b=2.3 refused promised=1.1 chosen=0 start=0 lease"));
  EXPECT_THAT(rd.messages_after_persist, IsEmpty());
  EXPECT_EQ(Str(rd.hard_state), "none");

  f->Step(kT0 + 100'000, PrepareMsg(3, 2, B(2, 3), 1, 0));  // lease_duration after the Accept
  rd = f->TakeReady();
  EXPECT_THAT(rd.messages, IsEmpty());
  EXPECT_THAT(Strs(rd.messages_after_persist),
              ElementsAre("2->3 promise b=2.3 granted promised=2.3 chosen=0 start=1"));
  EXPECT_EQ(Str(rd.hard_state), "promised=2.3 chosen=0");
  EXPECT_EQ(f->leader_hint(), 0u);
}

TEST(Lease, RestartedReplicaRefusesPromisesForOneLease) {
  auto f = NewReplica(2, Recovered(Members({1, 2, 3}), {Noop(1, kB11)}, kB11, 1), kT0);
  f->Step(kT0 + 50'000, PrepareMsg(3, 2, B(2, 3), 2, 1));
  EXPECT_THAT(Strs(f->TakeReady().messages),
              ElementsAre("2->3 promise b=2.3 refused promised=1.1 chosen=0 start=0 lease"));
  f->Step(kT0 + 100'000, PrepareMsg(3, 2, B(2, 3), 2, 1));
  EXPECT_THAT(Strs(f->TakeReady().messages_after_persist),
              ElementsAre("2->3 promise b=2.3 granted promised=2.3 chosen=1 start=1"));
}

TEST(Lease, LeaderHoldsLeaseOnlyOnceItsNoopIsChosenAndAQuorumAckedAHeartbeat) {
  auto r = NewReplica(1, Recovered(Members({1, 2, 3})));
  r->Campaign(kT0);
  TakeAndPersist(*r);
  r->Step(kT0, PromiseMsg(2, 1, kB11, 0));
  ASSERT_EQ(r->role(), Role::kLeader);
  Ready rd = r->TakeReady();  // no-op at slot 1 and heartbeat 1, sent at kT0
  EXPECT_FALSE(r->HoldsLease(kT0));
  EXPECT_EQ(r->LeaseReadIndex(kT0).status().code(), StatusCode::kUnavailable);

  // Durable on {1, 2} but acknowledged without a heartbeat sequence: the
  // no-op is chosen, yet no quorum vouched for heartbeat 1.
  r->OnPersisted(rd.persist_seq);
  r->Step(kT0 + 1'000, AckMsg(2, 1, kB11, 1, /*seq=*/0));
  EXPECT_EQ(r->chosen_index(), 1u);
  EXPECT_FALSE(r->HoldsLease(kT0 + 1'000));

  r->Step(kT0 + 2'000, AckMsg(3, 1, kB11, 1, /*seq=*/1));
  EXPECT_TRUE(r->HoldsLease(kT0 + 2'000));
  EXPECT_EQ(r->LeaseReadIndex(kT0 + 2'000).value(), 1u);
  // The lease runs from the send time of heartbeat 1, not from its receipt.
  EXPECT_TRUE(r->HoldsLease(kT0 + kLeaderLeaseUs - 1));
  EXPECT_FALSE(r->HoldsLease(kT0 + kLeaderLeaseUs));
  EXPECT_EQ(r->LeaseReadIndex(kT0 + kLeaderLeaseUs).status().code(), StatusCode::kUnavailable);
}

TEST(Lease, QuorumAckedHeartbeatWithoutChosenNoopGivesNoLease) {
  auto r = NewReplica(1, Recovered(Members({1, 2, 3})));
  r->Campaign(kT0);
  TakeAndPersist(*r);
  r->Step(kT0, PromiseMsg(2, 1, kB11, 0));
  r->TakeReady();  // the leader's own no-op write is not durable yet
  r->Step(kT0 + 1'000, AckMsg(2, 1, kB11, 1, 1));
  EXPECT_EQ(r->chosen_index(), 0u);
  EXPECT_FALSE(r->HoldsLease(kT0 + 1'000));
  EXPECT_EQ(r->LeaseReadIndex(kT0 + 1'000).status().code(), StatusCode::kUnavailable);
}

TEST(Lease, EachAcknowledgedHeartbeatExtendsTheLeaseFromItsSendTime) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  r->Tick(kT0 + 10'000);  // heartbeat 2
  EXPECT_THAT(Strs(r->TakeReady().messages),
              ElementsAre("1->2 accept b=1.1 first=2 commit=1 last=1 seq=2",
                          "1->3 accept b=1.1 first=2 commit=1 last=1 seq=2"));
  r->Step(kT0 + 30'000, AckMsg(3, 1, kB11, 1, 2));
  EXPECT_TRUE(r->HoldsLease(kT0 + 10'000 + kLeaderLeaseUs - 1));
  EXPECT_FALSE(r->HoldsLease(kT0 + 10'000 + kLeaderLeaseUs));
}

TEST(Lease, LeaseReadIndexOnAFollowerIsNotLeaderWithHint) {
  auto f = NewReplica(2, Recovered(Members({1, 2, 3})));
  f->Step(kT0, AcceptMsg(1, 2, kB11, 1, {Noop(1, kB11)}, 1, 1, 1));
  auto index = f->LeaseReadIndex(kT0);
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().code(), StatusCode::kNotLeader);
  EXPECT_EQ(index.status().leader_hint(), 1u);
  EXPECT_FALSE(f->HoldsLease(kT0));
}

TEST(Lease, LeaderRefusesPromisesWhileItsLeaseMayHold) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  r->Step(kT0 + 1'000, PrepareMsg(3, 1, B(2, 3), 2, 1));
  EXPECT_THAT(Strs(r->TakeReady().messages),
              ElementsAre("1->3 promise b=2.3 refused promised=1.1 chosen=0 start=0 lease"));
  EXPECT_EQ(r->role(), Role::kLeader);
}

TEST(CheckQuorum, IsolatedLeaderStepsDownAfterCheckQuorumTimeout) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});  // last heard both at kT0
  const TimeUs timeout = TestOptions(1).check_quorum_timeout_us;
  for (TimeUs t = kT0 + 10'000; t <= kT0 + timeout; t += 10'000) {
    r->Tick(t);
    r->TakeReady();
  }
  EXPECT_EQ(r->role(), Role::kLeader);
  EXPECT_FALSE(r->HoldsLease(kT0 + timeout));  // the lease ended long before
  r->Tick(kT0 + timeout + 1);
  EXPECT_EQ(r->role(), Role::kFollower);
  EXPECT_EQ(r->LeaseReadIndex(kT0 + timeout + 1).status().code(), StatusCode::kNotLeader);
}

TEST(CheckQuorum, OneRespondingFollowerKeepsTheLeaderInOffice) {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2, 3});
  uint64_t seq = 1;
  for (TimeUs t = kT0 + 10'000; t <= kT0 + 500'000; t += 10'000) {
    r->Tick(t);
    r->TakeReady();
    r->Step(t, AckMsg(2, 1, kB11, 1, ++seq));
  }
  EXPECT_EQ(r->role(), Role::kLeader);
  EXPECT_TRUE(r->HoldsLease(kT0 + 500'000));
}

// --- multi-replica -------------------------------------------------------------

TEST(LeaseGroup, IsolatedLeaderIsReplacedWithoutOverlappingLeases) {
  TestGroup g(3);
  const ReplicaId old_leader = g.ElectLeader();
  ASSERT_NE(old_leader, 0u);
  ASSERT_TRUE(g.r(old_leader).Propose(g.now(), "x", 1).ok());
  g.Advance(20'000);
  const TimeUs isolated_at = g.now();
  g.SetFilter([&](const pb::Message& m) {
    return m.from() != old_leader && m.to() != old_leader;
  });
  ReplicaId new_leader = 0;
  TimeUs stepped_down_at = 0;
  for (int step = 0; step < 2'000 && new_leader == 0; ++step) {
    g.Advance(1'000);
    int holders = 0;
    for (ReplicaId id = 1; id <= 3; ++id) {
      holders += g.r(id).HoldsLease(g.now());
      if (id != old_leader && g.r(id).role() == Role::kLeader) new_leader = id;
    }
    ASSERT_LE(holders, 1) << "two lease holders at " << g.now();
    if (stepped_down_at == 0 && g.r(old_leader).role() != Role::kLeader) {
      stepped_down_at = g.now();
    }
  }
  ASSERT_NE(new_leader, 0u);
  ASSERT_NE(stepped_down_at, 0u);
  EXPECT_LE(stepped_down_at, isolated_at + TestOptions(1).check_quorum_timeout_us + 2'000);
  ASSERT_TRUE(g.r(new_leader).Propose(g.now(), "y", 2).ok());
  g.Advance(20'000);
  EXPECT_TRUE(g.r(new_leader).HoldsLease(g.now()));
  EXPECT_FALSE(g.r(old_leader).HoldsLease(g.now()));
}

}  // namespace
}  // namespace tessera::consensus
