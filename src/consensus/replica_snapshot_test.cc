// Goal: compaction, snapshot transfer and catch-up follow the documented exchange exactly.
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

// Leader 1 of {1,2,3}: slots 1-4 chosen with 2, replica 3 silent, the log
// compacted through slot 3 (log_start 4).
std::unique_ptr<Replica> LeaderWithCompactedLog() {
  auto r = ElectedLeader(1, Members({1, 2, 3}), {2}, {2});
  for (const char* cmd : {"a", "b", "c"}) EXPECT_TRUE(r->Propose(kT0 + 1, cmd, 1).ok());
  TakeAndPersist(*r);
  r->Step(kT0 + 2, AckMsg(2, 1, kB11, 4, 1));
  EXPECT_EQ(r->TakeReady().committed.size(), 3u);
  r->CompactLog(3);
  EXPECT_EQ(r->log_start(), 4u);
  return r;
}

TEST(Snapshot, LaggingReplicaIsSentASnapshotInstallsItAndResumesReplication) {
  auto leader = LeaderWithCompactedLog();
  leader->Step(kT0 + 3, NackMsg(3, 1, kB11, kB11, /*matched=*/0, 1));  // 3 holds nothing
  Ready rd = leader->TakeReady();
  EXPECT_THAT(rd.snapshot_requests, ElementsAre(3u));
  EXPECT_THAT(rd.messages, IsEmpty());

  leader->SendSnapshot(kT0 + 4, 3, 4, "state@4");
  rd = leader->TakeReady();
  ASSERT_THAT(Strs(rd.messages),
              ElementsAre("1->3 snapshot b=1.1 last=4 members=v1,2,3 commit=4 seq=1 data=state@4"));

  auto lagging = NewReplica(3, Recovered(Members({1, 2, 3})));
  lagging->Step(kT0 + 5, rd.messages[0]);
  Ready lag = lagging->TakeReady();
  EXPECT_EQ(Str(lag.hard_state), "promised=1.1 chosen=0");
  ASSERT_TRUE(lag.snapshot_to_install.has_value());
  EXPECT_EQ(lag.snapshot_to_install->meta().last_slot(), 4u);
  EXPECT_EQ(Str(lag.snapshot_to_install->meta().membership()), "v1,2,3");
  EXPECT_EQ(lag.snapshot_to_install->data(), "state@4");
  EXPECT_THAT(lag.messages, IsEmpty());
  EXPECT_THAT(lag.messages_after_persist, IsEmpty());
  lagging->OnPersisted(lag.persist_seq);

  lagging->OnSnapshotInstalled(kT0 + 6, lag.snapshot_to_install->meta());
  EXPECT_EQ(lagging->log_start(), 5u);
  EXPECT_EQ(lagging->chosen_index(), 4u);
  EXPECT_EQ(lagging->applied_index(), 4u);
  lag = TakeAndPersist(*lagging);
  // The host made the snapshot durable before OnSnapshotInstalled, and
  // nothing else is pending: the acknowledgement goes out at once.
  EXPECT_THAT(Strs(lag.messages),
              ElementsAre("3->1 accepted b=1.1 ok promised=1.1 matched=4 seq=0 start=5"));
  EXPECT_THAT(lag.committed, IsEmpty());  // the snapshot is the applied state

  leader->Step(kT0 + 7, lag.messages[0]);
  EXPECT_FALSE(leader->HasReady());
  ASSERT_TRUE(leader->Propose(kT0 + 8, "d", 4).ok());
  rd = leader->TakeReady();
  EXPECT_THAT(Strs(rd.messages),
              ElementsAre("1->2 accept b=1.1 first=5 commit=4 last=5 seq=1 [5@1.1 cmd=d#4]",
                          "1->3 accept b=1.1 first=5 commit=4 last=5 seq=1 [5@1.1 cmd=d#4]"));
  lagging->Step(kT0 + 9, rd.messages[1]);
  EXPECT_THAT(Strs(lagging->TakeReady().messages_after_persist),
              ElementsAre("3->1 accepted b=1.1 ok promised=1.1 matched=5 seq=1 start=5"));
}

TEST(Snapshot, ARefusedSnapshotChangesNothingAndTheNextOneIsHandedOut) {
  auto leader = LeaderWithCompactedLog();
  leader->Step(kT0 + 3, NackMsg(3, 1, kB11, kB11, /*matched=*/0, 1));
  leader->TakeReady();
  leader->SendSnapshot(kT0 + 4, 3, 4, "manifest-a");
  const pb::Message first = leader->TakeReady().messages.at(0);
  leader->SendSnapshot(kT0 + 5, 3, 4, "manifest-b");
  const pb::Message second = leader->TakeReady().messages.at(0);

  auto lagging = NewReplica(3, Recovered(Members({1, 2, 3})));
  lagging->Step(kT0 + 6, first);
  Ready lag = TakeAndPersist(*lagging);
  ASSERT_TRUE(lag.snapshot_to_install.has_value());
  lagging->Step(kT0 + 7, second);  // busy installing: ignored
  EXPECT_FALSE(TakeAndPersist(*lagging).snapshot_to_install.has_value());

  lagging->OnSnapshotRefused(kT0 + 8, lag.snapshot_to_install->meta());
  EXPECT_EQ(lagging->applied_index(), 0u);
  EXPECT_EQ(lagging->log_start(), 1u);
  lagging->Step(kT0 + 9, second);
  lag = TakeAndPersist(*lagging);
  ASSERT_TRUE(lag.snapshot_to_install.has_value());
  EXPECT_EQ(lag.snapshot_to_install->data(), "manifest-b");
  lagging->OnSnapshotInstalled(kT0 + 10, lag.snapshot_to_install->meta());
  EXPECT_EQ(lagging->applied_index(), 4u);
}

TEST(Snapshot, SnapshotRequestIsRepeatedOnlyAfterAnElectionTimeout) {
  auto leader = LeaderWithCompactedLog();
  leader->Step(kT0 + 3, NackMsg(3, 1, kB11, kB11, 0, 1));
  EXPECT_THAT(leader->TakeReady().snapshot_requests, ElementsAre(3u));
  leader->Step(kT0 + 4, NackMsg(3, 1, kB11, kB11, 0, 1));
  EXPECT_THAT(leader->TakeReady().snapshot_requests, IsEmpty());
  const TimeUs retry = kT0 + 3 + TestOptions(1).election_timeout_min_us;
  leader->Step(retry - 1, NackMsg(3, 1, kB11, kB11, 0, 1));
  EXPECT_THAT(leader->TakeReady().snapshot_requests, IsEmpty());
  leader->Step(retry, NackMsg(3, 1, kB11, kB11, 0, 1));
  EXPECT_THAT(leader->TakeReady().snapshot_requests, ElementsAre(3u));
}

TEST(Snapshot, StaleSnapshotFromTheHostIsNotSent) {
  auto leader = LeaderWithCompactedLog();
  leader->SendSnapshot(kT0 + 3, 3, 2, "too old");  // below log_start - 1
  leader->SendSnapshot(kT0 + 3, 3, 9, "not applied yet");
  EXPECT_FALSE(leader->HasReady());
}

TEST(Snapshot, ReplicaIgnoresASnapshotItsChosenPrefixAlreadyCovers) {
  auto f = NewReplica(3, Recovered(Members({1, 2, 3}),
                                   {Noop(1, kB11), Cmd(2, kB11, "a"), Cmd(3, kB11, "b"),
                                    Cmd(4, kB11, "c"), Cmd(5, kB11, "d")},
                                   kB11, /*chosen=*/5));
  pb::Message snap = Msg(1, 3, kB11);
  snap.mutable_install_snapshot()->mutable_meta()->set_last_slot(4);
  *snap.mutable_install_snapshot()->mutable_meta()->mutable_membership() = Members({1, 2, 3});
  f->Step(kT0, snap);
  Ready rd = f->TakeReady();
  EXPECT_FALSE(rd.snapshot_to_install.has_value());
  EXPECT_EQ(f->log_start(), 1u);
  EXPECT_EQ(f->leader_hint(), 1u);
}

TEST(Snapshot, NewLeaderWithACompactedLogStartsPhase2AtFromSlotWithoutSnapshots) {
  auto r = NewReplica(1, Recovered(Members({1, 2, 3}), {Cmd(4, B(1, 2), "d"), Cmd(5, B(1, 2), "e")},
                                   B(1, 2), /*chosen=*/5));
  ASSERT_EQ(r->log_start(), 4u);
  r->Campaign(kT0);
  TakeAndPersist(*r);
  r->Step(kT0, PromiseMsg(2, 1, B(2, 1), 5, {}, /*log_start=*/4));
  ASSERT_EQ(r->role(), Role::kLeader);
  Ready rd = r->TakeReady();
  EXPECT_THAT(rd.snapshot_requests, IsEmpty());
  EXPECT_THAT(Strs(rd.messages),
              ElementsAre("1->2 accept b=2.1 first=1 commit=5 last=6 seq=1",
                          "1->2 accept b=2.1 first=6 commit=5 last=6 seq=1 [6@2.1 noop]",
                          "1->3 accept b=2.1 first=1 commit=5 last=6 seq=1",
                          "1->3 accept b=2.1 first=6 commit=5 last=6 seq=1 [6@2.1 noop]"));
}

// --- multi-replica -------------------------------------------------------------

void ProposeCommands(TestGroup& g, ReplicaId leader, int count) {
  for (int i = 0; i < count; ++i) {
    ASSERT_TRUE(g.r(leader).Propose(g.now(), "c" + std::to_string(i), 1).ok());
  }
}

std::vector<std::string> AppliedCommands(TestGroup& g, ReplicaId id) {
  std::vector<std::string> out;
  for (const pb::Entry& e : g.node(id).applied) {
    if (e.type() == pb::ENTRY_COMMAND) out.push_back(e.command());
  }
  return out;
}

int SnapshotsSentTo(TestGroup& g, ReplicaId to, size_t from_index) {
  int count = 0;
  for (size_t i = from_index; i < g.sent().size(); ++i) {
    count += g.sent()[i].has_install_snapshot() && g.sent()[i].to() == to;
  }
  return count;
}

TEST(SnapshotGroup, RestartedReplicaCatchesUpFromTheLeadersLog) {
  TestGroup g(3);
  const ReplicaId leader = g.ElectLeader();
  ASSERT_NE(leader, 0u);
  const ReplicaId down = leader % 3 + 1;
  g.node(down).up = false;
  ProposeCommands(g, leader, 5);
  g.Advance(20'000);
  g.Restart(down);
  g.Advance(50'000);
  EXPECT_EQ(AppliedCommands(g, down), AppliedCommands(g, leader));
  EXPECT_EQ(AppliedCommands(g, down).size(), 5u);
  EXPECT_EQ(g.r(down).chosen_index(), g.r(leader).chosen_index());
}

TEST(SnapshotGroup, ReplicaBehindTheCompactedLogGetsASnapshotThenReplicates) {
  TestGroup g(3);
  const ReplicaId leader = g.ElectLeader();
  ASSERT_NE(leader, 0u);
  const ReplicaId lagging = leader % 3 + 1;
  const ReplicaId other = lagging % 3 + 1;
  g.Advance(20'000);
  g.node(lagging).up = false;
  ProposeCommands(g, leader, 10);
  g.Advance(20'000);
  const Slot applied = g.node(leader).applied.back().slot();
  g.Compact(leader, applied);
  g.Compact(other, g.node(other).applied.back().slot());
  const size_t mark = g.sent().size();

  g.Restart(lagging);
  g.Advance(50'000);
  EXPECT_EQ(SnapshotsSentTo(g, lagging, mark), 1);
  EXPECT_EQ(SnapshotsSentTo(g, other, mark), 0);
  EXPECT_EQ(g.r(lagging).log_start(), applied + 1);
  EXPECT_EQ(g.node(lagging).applied.front().command(), "snapshot@" + std::to_string(applied));

  ASSERT_TRUE(g.r(leader).Propose(g.now(), "after", 2).ok());
  g.Advance(20'000);
  EXPECT_EQ(AppliedCommands(g, lagging).back(), "after");
  EXPECT_EQ(g.r(lagging).chosen_index(), g.r(leader).chosen_index());
}

TEST(SnapshotGroup, LeaderChangeAfterCompactionSendsNoSnapshotsToUpToDateReplicas) {
  TestGroup g(3);
  const ReplicaId first = g.ElectLeader();
  ASSERT_NE(first, 0u);
  ProposeCommands(g, first, 5);
  g.Advance(20'000);
  for (ReplicaId id = 1; id <= 3; ++id) g.Compact(id, g.node(id).applied.back().slot());
  const size_t mark = g.sent().size();
  g.node(first).up = false;
  g.Advance(1'000'000);
  ReplicaId second = 0;
  for (ReplicaId id = 1; id <= 3; ++id) {
    if (id != first && g.r(id).role() == Role::kLeader) second = id;
  }
  ASSERT_NE(second, 0u);
  const ReplicaId third = 6 - first - second;
  EXPECT_EQ(SnapshotsSentTo(g, third, mark), 0);
  ASSERT_TRUE(g.r(second).Propose(g.now(), "after", 2).ok());
  g.Advance(20'000);
  EXPECT_EQ(AppliedCommands(g, third).back(), "after");
}

}  // namespace
}  // namespace tessera::consensus
