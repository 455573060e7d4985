// Goal: GroupHost runs on any GroupExecutor: on a VirtualTimeLoop, three
// hosts over real RocksDB stores elect, commit and time out only as the
// virtual clock moves, however long the real machine takes; the loop's
// ticks and tasks follow its contract.
#include "node/virtual_time_loop.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "node/group_host.h"
#include "node/group_host_test_util.h"
#include "storage/node_store.h"

namespace tessera::node {
namespace {

// Ticks fall on multiples of the interval strictly after now, run in time
// order when time reaches them, and a cancelled or re-armed tick never runs.
TEST(VirtualTimeLoop, TicksRunInOrderOnlyWhenTimeReachesThem) {
  VirtualTimeLoop loop(1'000'500);
  auto a = loop.NewExecutor();
  auto b = loop.NewExecutor();
  std::vector<std::string> ran;
  a->ArmTick(1'000, [&] { ran.push_back("a@" + std::to_string(loop.now_us())); });
  b->ArmTick(300, [&] { ran.push_back("b@" + std::to_string(loop.now_us())); });
  EXPECT_EQ(loop.NextTickUs(), 1'000'800u);
  loop.AdvanceTo(1'000'700);
  EXPECT_TRUE(ran.empty());
  loop.AdvanceTo(1'001'000);
  EXPECT_EQ(ran, (std::vector<std::string>{"b@1000800", "a@1001000"}));
  EXPECT_EQ(loop.now_us(), 1'001'000u);

  ran.clear();
  a->ArmTick(1'000, [&] { ran.push_back("a1"); });
  a->ArmTick(1'000, [&] { ran.push_back("a2"); });  // replaces a1
  b->ArmTick(1'000, [&] { ran.push_back("b"); });
  b->CancelTick();
  loop.AdvanceTo(1'010'000);
  EXPECT_EQ(ran, std::vector<std::string>{"a2"});
  loop.AdvanceTo(5);  // never backwards
  EXPECT_EQ(loop.now_us(), 1'010'000u);
}

// One-shot timers run with the ticks in (instant, arming order) order, an
// instant already past counts as now, and NextTickUs sees them.
TEST(VirtualTimeLoop, TimersRunWithTheTicksInInstantOrder) {
  VirtualTimeLoop loop(2'000'000);
  auto executor = loop.NewExecutor();
  std::vector<std::string> ran;
  loop.PostAt(2'000'700, [&] { ran.push_back("t700@" + std::to_string(loop.now_us())); });
  executor->ArmTick(1'000, [&] { ran.push_back("tick@" + std::to_string(loop.now_us())); });
  loop.PostAt(2'001'000, [&] { ran.push_back("t1000"); });
  EXPECT_EQ(loop.NextTickUs(), 2'000'700u);
  loop.AdvanceTo(2'000'600);
  EXPECT_TRUE(ran.empty());
  loop.AdvanceTo(2'005'000);
  EXPECT_EQ(ran, (std::vector<std::string>{"t700@2000700", "tick@2001000", "t1000"}));
  loop.PostAt(1, [&] { ran.push_back("past"); });
  EXPECT_EQ(loop.NextTickUs(), 2'005'000u);
  loop.AdvanceTo(2'005'000);
  EXPECT_EQ(ran.back(), "past");
  EXPECT_FALSE(loop.NextTickUs().has_value());
}

// Posted tasks run FIFO, never inline, those they post included, and a
// task posted from another thread waits for the owner.
TEST(VirtualTimeLoop, PostedTasksRunInOrderWhenTheOwnerRunsThem) {
  VirtualTimeLoop loop;
  auto executor = loop.NewExecutor();
  std::vector<int> ran;
  executor->Post([&] {
    ran.push_back(1);
    executor->Post([&] { ran.push_back(3); });
    EXPECT_EQ(ran, std::vector<int>{1});  // not inline
  });
  executor->Post([&] { ran.push_back(2); });
  EXPECT_TRUE(ran.empty());
  EXPECT_EQ(loop.RunReady(), 3u);
  EXPECT_EQ(ran, (std::vector<int>{1, 2, 3}));

  std::thread other([&] { executor->Post([&] { ran.push_back(4); }); });
  EXPECT_TRUE(loop.WaitForTask(std::chrono::seconds(10)));
  other.join();
  EXPECT_EQ(ran.size(), 3u);
  EXPECT_EQ(loop.RunReady(), 1u);
  EXPECT_EQ(ran.back(), 4);
  EXPECT_FALSE(loop.WaitForTask(std::chrono::milliseconds(1)));
}

class VirtualTimeGroupTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kGroupId = 7;

  void SetUp() override {
    char pattern[] = "/tmp/tessera-vt-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    for (consensus::ReplicaId id = 1; id <= 3; ++id) {
      storage::NodeStoreOptions so;
      so.path = dir_ + "/n" + std::to_string(id);
      stores_[id] = std::move(storage::NodeStore::Open(so)).value();
      GroupHostOptions o;
      o.consensus = testing::FastOptions(id, kGroupId, 41);
      for (consensus::ReplicaId v = 1; v <= 3; ++v) o.bootstrap_membership.add_voters(v);
      o.write_timeout_ms = 1'000;  // virtual; each idle tick costs a short real wait
      auto host = GroupHost::Start(loop_.NewExecutor(), stores_[id].get(), &sender_, o);
      ASSERT_TRUE(host.ok()) << host.status().ToString();
      hosts_[id] = *host;
      sender_.Register(id, *host);
    }
  }
  void TearDown() override {
    testing::StopVirtualTimeGroup(loop_, sender_, hosts_, stores_);
    std::filesystem::remove_all(dir_);
  }

  template <typename Pred>
  bool RunUntil(Pred done, uint64_t virtual_budget_us) {
    return testing::RunVirtualUntil(loop_, done, virtual_budget_us);
  }
  GroupStatus StatusOf(consensus::ReplicaId id) {
    std::optional<GroupStatus> status;
    hosts_[id]->GetStatus([&](GroupStatus s) { status = s; });
    loop_.RunReady();
    EXPECT_TRUE(status.has_value());
    return status.value_or(GroupStatus{});
  }
  consensus::ReplicaId Leader() {
    for (auto& [id, h] : hosts_) {
      if (StatusOf(id).holds_lease) return id;
    }
    return 0;
  }

  VirtualTimeLoop loop_;
  std::string dir_;
  testing::LoopbackSender sender_;
  testing::VirtualStores stores_;
  testing::VirtualHosts hosts_;
};

// No election while virtual time stands still, however long the real wait;
// then a leader within the election bound of virtual time, and a write
// applied on every replica.
TEST_F(VirtualTimeGroupTest, ElectsAndCommitsOnlyAsVirtualTimeMoves) {
  const uint64_t start_us = loop_.now_us();
  loop_.RunReady();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // > election timeout
  loop_.RunReady();
  EXPECT_EQ(Leader(), 0u);
  EXPECT_EQ(loop_.now_us(), start_us);

  ASSERT_TRUE(RunUntil([&] { return Leader() != 0; }, 10'000'000));
  const consensus::ReplicaId leader = Leader();
  EXPECT_GE(loop_.now_us() - start_us, testing::FastOptions(1, kGroupId, 41).election_timeout_min_us);

  pb::KvBatch batch;
  auto* w = batch.add_writes();
  w->set_key("k");
  w->set_value("v");
  std::optional<Result<pb::KvApplyResult>> written;
  hosts_[leader]->Write(batch, [&](Result<pb::KvApplyResult> r) { written = std::move(r); });
  ASSERT_TRUE(RunUntil([&] { return written.has_value(); }, 5'000'000));
  ASSERT_TRUE(written->ok()) << written->status().ToString();

  const consensus::Slot chosen = StatusOf(leader).chosen;
  ASSERT_TRUE(RunUntil(
      [&] {
        for (auto& [id, h] : hosts_) {
          if (StatusOf(id).applied < chosen) return false;
        }
        return true;
      },
      5'000'000));
  for (auto& [id, h] : hosts_) {
    std::optional<Result<std::optional<pb::KvRecord>>> read;
    h->Read("k", pb::CONSISTENCY_EVENTUAL,
            [&](Result<std::optional<pb::KvRecord>> r) { read = std::move(r); });
    loop_.RunReady();
    ASSERT_TRUE(read.has_value() && read->ok()) << "replica " << id;
    ASSERT_TRUE(read->value().has_value()) << "replica " << id;
    EXPECT_EQ((*read)->value().value(), "v") << "replica " << id;
  }
}

// A write the peers never see times out after write_timeout_ms of virtual
// time, not of real time.
TEST_F(VirtualTimeGroupTest, WriteDeadlineRunsOnTheExecutorsClock) {
  ASSERT_TRUE(RunUntil([&] { return Leader() != 0; }, 10'000'000));
  const consensus::ReplicaId leader = Leader();
  for (auto& [id, h] : hosts_) {
    if (id != leader) sender_.SetDown(id, true);
  }
  pb::KvBatch batch;
  auto* w = batch.add_writes();
  w->set_key("k");
  w->set_value("lost");
  std::optional<Result<pb::KvApplyResult>> written;
  const uint64_t sent_us = loop_.now_us();
  hosts_[leader]->Write(batch, [&](Result<pb::KvApplyResult> r) { written = std::move(r); });
  ASSERT_TRUE(RunUntil([&] { return written.has_value(); }, 20'000'000));
  ASSERT_FALSE(written->ok());
  // NotLeader once its lease lapsed (check quorum) or Timeout: either way
  // only after virtual time passed.
  EXPECT_TRUE(written->status().code() == StatusCode::kTimeout ||
              written->status().code() == StatusCode::kNotLeader)
      << written->status().ToString();
  EXPECT_GE(loop_.now_us() - sent_us, testing::FastOptions(1, kGroupId, 41).check_quorum_timeout_us);
}

}  // namespace
}  // namespace tessera::node
