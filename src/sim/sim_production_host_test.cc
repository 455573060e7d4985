// Goal: three production GroupHosts (on virtual time, NodeStores over
// CrashFileSystems) talk only through the simulated transport: over a
// lossy, duplicating, reordering network they commit every write and end
// with equal state digests; a partitioned leader is replaced, and after it
// crashed and restarted on its disk behind the partition, it catches up
// once the partition heals.
#include <gtest/gtest.h>

#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "common/job_thread.h"
#include "node/group_host.h"
#include "node/group_host_test_util.h"
#include "node/virtual_time_loop.h"
#include "sim/sim_network.h"
#include "sim/sim_transport.h"
#include "storage/crash_file_system.h"
#include "storage/node_store.h"

namespace tessera::sim {
namespace {

constexpr uint64_t kGroupId = 11;
constexpr ReplicaId kReplicas = 3;

class SimTransportGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (ReplicaId id = 1; id <= kReplicas; ++id) {
      disks_[id] = std::make_shared<storage::CrashFileSystem>();
      Start(id);
    }
  }
  void TearDown() override {
    for (auto& [id, h] : hosts_) h->Stop();
    loop_.RunReady();
    transport_.Clear();
    hosts_.clear();
    loop_.RunReady();
    stores_.clear();
  }

  void Start(ReplicaId id) {
    storage::NodeStoreOptions so;
    so.path = "/sim/n" + std::to_string(id);
    so.file_system = disks_[id];
    so.write_buffer_bytes = 4 << 20;
    auto store = storage::NodeStore::Open(so);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    stores_[id] = std::move(store).value();
    node::GroupHostOptions o;
    o.consensus = node::testing::FastOptions(id, kGroupId, 23);
    for (ReplicaId v = 1; v <= kReplicas; ++v) o.bootstrap_membership.add_voters(v);
    o.write_timeout_ms = 1'000;
    auto host = node::GroupHost::Start(loop_.NewExecutor(), stores_[id].get(), &transport_, o);
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    hosts_[id] = *host;
    transport_.Attach(id, [host = *host](pb::Message m) { host->Deliver(std::move(m)); });
  }
  // The process dies: nothing more reaches or leaves it, its disk keeps
  // only what was synced.
  void Crash(ReplicaId id) {
    transport_.Detach(id);
    disks_[id]->Crash([](const std::string&, uint64_t) { return 0; });
    hosts_[id]->Stop();
    loop_.RunReady();
    hosts_.erase(id);
    stores_.erase(id);
    loop_.RunReady();
  }
  void Isolate(ReplicaId id, bool isolated) {
    for (ReplicaId other = 1; other <= kReplicas; ++other) {
      if (other == id) continue;
      if (isolated) {
        network_.Block(id, other);
        network_.Block(other, id);
      } else {
        network_.Unblock(id, other);
        network_.Unblock(other, id);
      }
    }
  }

  template <typename Pred>
  bool RunUntil(Pred done, uint64_t virtual_budget_us) {
    return node::testing::RunVirtualUntil(loop_, done, virtual_budget_us);
  }
  std::optional<node::GroupStatus> StatusOf(ReplicaId id) {
    if (!hosts_.count(id)) return std::nullopt;
    std::optional<node::GroupStatus> status;
    hosts_[id]->GetStatus([&](node::GroupStatus s) { status = s; });
    loop_.RunReady();
    return status;
  }
  // A replica other than `except` that holds the lease, or 0.
  ReplicaId Leader(ReplicaId except = 0) {
    for (auto& [id, h] : hosts_) {
      auto status = StatusOf(id);
      if (id != except && status && status->holds_lease && !status->stopped) return id;
    }
    return 0;
  }
  // Writes `key` = `value` through the leader (not `except`) until a write
  // is acknowledged (a Timeout leaves the outcome unknown: the same put
  // again is harmless). False when none was within the attempts.
  bool Put(const std::string& key, const std::string& value, ReplicaId except = 0) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      if (!RunUntil([&] { return Leader(except) != 0; }, 10'000'000)) return false;
      pb::KvBatch batch;
      auto* w = batch.add_writes();
      w->set_key(key);
      w->set_value(value);
      std::optional<Result<pb::KvApplyResult>> written;
      hosts_[Leader(except)]->Write(batch,
                                    [&](Result<pb::KvApplyResult> r) { written = std::move(r); });
      if (!RunUntil([&] { return written.has_value(); }, 5'000'000)) return false;
      if (written->ok()) return true;
    }
    return false;
  }
  bool CaughtUp() {
    const ReplicaId leader = Leader();
    if (leader == 0) return false;
    const consensus::Slot chosen = StatusOf(leader)->chosen;
    for (auto& [id, h] : hosts_) {
      if (StatusOf(id)->applied < chosen) return false;
    }
    return true;
  }
  std::string Digest(ReplicaId id) {
    std::promise<Result<pb::SnapshotManifest>> digest;
    hosts_[id]->StateDigest(scanner_, [&](Result<pb::SnapshotManifest> d) { digest.set_value(d); });
    loop_.RunReady();
    Result<pb::SnapshotManifest> got = digest.get_future().get();
    std::promise<void> scanned;  // the scan job's store snapshot is gone after it
    EXPECT_TRUE(scanner_.Submit([&scanned] { scanned.set_value(); }).ok());
    scanned.get_future().get();
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? got->ShortDebugString() : "";
  }
  std::optional<std::string> ValueAt(ReplicaId id, const std::string& key) {
    std::optional<Result<std::optional<pb::KvRecord>>> read;
    hosts_[id]->Read(key, pb::CONSISTENCY_EVENTUAL,
                     [&](Result<std::optional<pb::KvRecord>> r) { read = std::move(r); });
    loop_.RunReady();
    if (!read || !read->ok() || !read->value()) return std::nullopt;
    return (*read)->value().value();
  }
  void ExpectEqualReplicas(const std::map<std::string, std::string>& acked) {
    for (auto& [id, h] : hosts_) {
      for (const auto& [key, value] : acked) EXPECT_EQ(ValueAt(id, key), value) << id << " " << key;
    }
    const std::string digest = Digest(1);
    for (ReplicaId id = 2; id <= kReplicas; ++id) EXPECT_EQ(Digest(id), digest) << id;
  }

  node::VirtualTimeLoop loop_;
  SimNetwork network_{kReplicas};
  SimTransport transport_{&loop_, &network_, 77};
  JobThread scanner_{"digest", 8};
  std::map<ReplicaId, std::shared_ptr<storage::CrashFileSystem>> disks_;
  node::testing::VirtualStores stores_;
  node::testing::VirtualHosts hosts_;
};

TEST_F(SimTransportGroupTest, CommitsOverALossyDuplicatingReorderingNetwork) {
  NetworkParams params;
  params.loss_ppm = 20'000;
  params.duplicate_ppm = 20'000;
  params.delay_min_us = 300;
  params.delay_jitter_us = 3'000;
  network_.set_params(params);
  std::map<std::string, std::string> acked;
  for (int i = 0; i < 20; ++i) {
    const std::string key = "k" + std::to_string(i);
    ASSERT_TRUE(Put(key, "v" + std::to_string(i))) << key;
    acked[key] = "v" + std::to_string(i);
  }
  ASSERT_TRUE(RunUntil([&] { return CaughtUp(); }, 10'000'000));
  ExpectEqualReplicas(acked);
  const SimTransportStats stats = transport_.stats();
  EXPECT_GT(stats.lost, 0u);
  EXPECT_GT(stats.duplicated, 0u);
  RecordProperty("messages_sent", std::to_string(stats.sent));
}

TEST_F(SimTransportGroupTest, PartitionedLeaderIsReplacedAndCatchesUpAfterARestart) {
  std::map<std::string, std::string> acked;
  ASSERT_TRUE(Put("before", "1"));
  acked["before"] = "1";
  const ReplicaId old_leader = Leader();
  ASSERT_NE(old_leader, 0u);
  Isolate(old_leader, true);
  ASSERT_TRUE(Put("during", "2", old_leader));
  acked["during"] = "2";
  Crash(old_leader);
  Start(old_leader);
  ASSERT_TRUE(Put("restarted", "3", old_leader));
  acked["restarted"] = "3";
  EXPECT_EQ(ValueAt(old_leader, "during"), std::nullopt) << "behind the partition";
  Isolate(old_leader, false);
  ASSERT_TRUE(Put("healed", "4"));
  acked["healed"] = "4";
  ASSERT_TRUE(RunUntil([&] { return CaughtUp(); }, 20'000'000));
  ExpectEqualReplicas(acked);
}

}  // namespace
}  // namespace tessera::sim
