// Goal: three GroupHosts over three real RocksDB stores and an in-process
// transport elect a leader, apply conditional writes, serve strong and
// eventual reads, survive the leader's loss, and recover from disk.
#include "node/group_host.h"

#include "node/group_host_test_util.h"
#include "node/tick_schedule.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <filesystem>
#include <future>
#include <mutex>
#include <set>
#include <thread>

namespace tessera::node {
namespace {

// Ticks fall on multiples of the interval: strictly after now, at most one
// interval later, the same instant for every caller within one interval.
TEST(TickSchedule, NextTickIsTheNextMultipleOfTheInterval) {
  using std::chrono::microseconds;
  using std::chrono::steady_clock;
  const microseconds interval(10'000);
  const auto at = [](int64_t us) { return steady_clock::time_point(microseconds(us)); };
  EXPECT_EQ(NextAlignedTick(at(1'234'567), interval), at(1'240'000));
  EXPECT_EQ(NextAlignedTick(at(1'230'001), interval), at(1'240'000));
  EXPECT_EQ(NextAlignedTick(at(1'239'999), interval), at(1'240'000));
  EXPECT_EQ(NextAlignedTick(at(1'240'000), interval), at(1'250'000));  // never now itself
  EXPECT_EQ(NextAlignedTick(at(0), interval), at(10'000));
  const auto now = steady_clock::now();
  const auto next = NextAlignedTick(now, interval);
  EXPECT_GT(next, now);
  EXPECT_LE(next, now + interval);
}

class GroupHostTest : public testing::ThreeReplicaGroupTest {
 protected:
  consensus::ReplicaId WaitForLeader(std::set<consensus::ReplicaId> among, int timeout_ms = 10'000) {
    for (int waited = 0; waited < timeout_ms; waited += 20) {
      for (auto id : among) {
        if (StatusOf(id).holds_lease) return id;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
  }
  Result<std::optional<pb::KvRecord>> Get(consensus::ReplicaId at, const std::string& k,
                                          pb::Consistency c = pb::CONSISTENCY_STRONG) {
    std::promise<Result<std::optional<pb::KvRecord>>> p;
    hosts_[at]->Read(k, c, [&p](Result<std::optional<pb::KvRecord>> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }
};

TEST_F(GroupHostTest, WritesReadsAndConditions) {
  const auto leader = WaitForLeader({1, 2, 3});
  ASSERT_NE(leader, 0u);
  auto r = Put(leader, "k", "v1");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->applied());
  auto cas_bad = Put(leader, "k", "v2", r->version() + 100);
  ASSERT_TRUE(cas_bad.ok());
  EXPECT_FALSE(cas_bad->applied());
  auto cas_ok = Put(leader, "k", "v3", r->version());
  ASSERT_TRUE(cas_ok.ok() && cas_ok->applied());
  auto got = Get(leader, "k");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->value(), "v3");
  // A follower refuses strong reads and writes, naming the leader.
  const consensus::ReplicaId follower = leader % 3 + 1;
  auto strong = Get(follower, "k");
  ASSERT_FALSE(strong.ok());
  EXPECT_EQ(strong.status().code(), StatusCode::kNotLeader);
  EXPECT_EQ(strong.status().leader_hint(), leader);
  EXPECT_EQ(Put(follower, "x", "y").status().code(), StatusCode::kNotLeader);
  // Eventually the follower's applied state has the write too.
  for (int i = 0; i < 200; ++i) {
    auto ev = Get(follower, "k", pb::CONSISTENCY_EVENTUAL);
    if (ev.ok() && ev->has_value() && (*ev)->value() == "v3") return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL() << "follower never applied the write";
}

TEST_F(GroupHostTest, LeaderLossElectsAnotherAndKeepsAcknowledgedWrites) {
  const auto first = WaitForLeader({1, 2, 3});
  ASSERT_NE(first, 0u);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(Put(first, "k" + std::to_string(i), "v").ok());
  sender_.SetDown(first, true);
  std::set<consensus::ReplicaId> others{1, 2, 3};
  others.erase(first);
  const auto second = WaitForLeader(others);
  ASSERT_NE(second, 0u);
  ASSERT_TRUE(Put(second, "after", "x").ok());
  for (int i = 0; i < 20; ++i) {
    auto got = Get(second, "k" + std::to_string(i));
    ASSERT_TRUE(got.ok() && got->has_value()) << i;
  }
  // The old leader rejoins and catches up.
  sender_.SetDown(first, false);
  for (int i = 0; i < 300; ++i) {
    auto ev = Get(first, "after", pb::CONSISTENCY_EVENTUAL);
    if (ev.ok() && ev->has_value()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL() << "old leader never caught up";
}

TEST_F(GroupHostTest, RestartRecoversAppliedStateFromDisk) {
  const auto leader = WaitForLeader({1, 2, 3});
  ASSERT_NE(leader, 0u);
  ASSERT_TRUE(Put(leader, "durable", "yes").ok());
  // Restart every replica from its store.
  for (auto& [id, h] : hosts_) h->Stop();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (consensus::ReplicaId id = 1; id <= 3; ++id) StartHost(id);
  const auto again = WaitForLeader({1, 2, 3});
  ASSERT_NE(again, 0u);
  auto got = Get(again, "durable");
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status().ToString();
  EXPECT_EQ((*got)->value(), "yes");
}

// Each replica's store with its own fault knobs (index: replica id - 1).
class StoppedGroupTest : public GroupHostTest {
 protected:
  void AdjustStoreOptions(storage::NodeStoreOptions& so) override {
    faults_.push_back(std::make_shared<storage::StorageFaults>());
    so.group_commit.faults = faults_.back();
  }
  std::vector<std::shared_ptr<storage::StorageFaults>> faults_;
};

TEST_F(StoppedGroupTest, AReplicaWhoseLogWriteFailsStopsAndSendsClientsElsewhere) {
  const auto leader = WaitForLeader({1, 2, 3});
  ASSERT_NE(leader, 0u);
  ASSERT_TRUE(Put(leader, "before", "v").ok());
  faults_[leader - 1]->fail_writes = true;
  EXPECT_FALSE(Put(leader, "k", "v").ok());  // its log write failed: fail-stop
  // Every request now: not the leader, no hint (look elsewhere); nothing
  // was proposed, so a router may resend a write.
  const auto write = Put(leader, "x", "y");
  EXPECT_EQ(write.status().code(), StatusCode::kNotLeader) << write.status().ToString();
  EXPECT_EQ(write.status().leader_hint(), 0u);
  EXPECT_EQ(Get(leader, "before").status().code(), StatusCode::kNotLeader);
  GroupStatus stopped = StatusOf(leader);
  EXPECT_TRUE(stopped.stopped);
  EXPECT_EQ(stopped.role, consensus::Role::kFollower);
  EXPECT_FALSE(stopped.holds_lease);
  // The others elect a leader and serve, with what was acknowledged; the
  // stopped replica stays stopped once its disk works again.
  faults_[leader - 1]->fail_writes = false;
  std::set<consensus::ReplicaId> others{1, 2, 3};
  others.erase(leader);
  const auto next = WaitForLeader(others);
  ASSERT_NE(next, 0u);
  ASSERT_TRUE(Put(next, "after", "v").ok());
  auto kept = Get(next, "before");
  ASSERT_TRUE(kept.ok() && kept->has_value());
  EXPECT_TRUE(StatusOf(leader).stopped);
}

}  // namespace
}  // namespace tessera::node
