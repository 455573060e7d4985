// Goal: the production GroupHost, on virtual time and NodeStores over
// CrashFileSystems, loses no acknowledged write when a replica's process
// dies in the middle of a group commit (unsynced writes lost, a torn
// tail), restarts from what its disk kept, and catches up to the same
// state digest as the others; a disk that returns errors stops the group
// on that replica and the others go on.
#include <gtest/gtest.h>

#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/job_thread.h"
#include "node/group_host.h"
#include "node/group_host_test_util.h"
#include "node/virtual_time_loop.h"
#include "storage/crash_file_system.h"
#include "storage/node_store.h"

namespace tessera::node {
namespace {

constexpr uint64_t kGroupId = 9;

class CrashingGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (consensus::ReplicaId id = 1; id <= 3; ++id) {
      disks_[id] = std::make_shared<storage::CrashFileSystem>();
      Start(id);
    }
  }
  void TearDown() override {
    testing::StopVirtualTimeGroup(loop_, sender_, hosts_, stores_);
  }

  void Start(consensus::ReplicaId id) {
    storage::NodeStoreOptions so;
    so.path = "/sim/n" + std::to_string(id);
    so.file_system = disks_[id];
    so.write_buffer_bytes = 4 << 20;
    auto store = storage::NodeStore::Open(so);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    stores_[id] = std::move(store).value();
    GroupHostOptions o;
    o.consensus = testing::FastOptions(id, kGroupId, 17);
    for (consensus::ReplicaId v = 1; v <= 3; ++v) o.bootstrap_membership.add_voters(v);
    o.write_timeout_ms = 1'000;
    auto host = GroupHost::Start(loop_.NewExecutor(), stores_[id].get(), &sender_, o);
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    hosts_[id] = *host;
    sender_.Register(id, *host);
    sender_.SetDown(id, false);
  }
  // The process dies: its messages stop, its disk keeps what was synced
  // plus `torn_bytes` of each file's unsynced tail, and the dead store's
  // shutdown writes nothing. Returns the unsynced bytes lost.
  uint64_t Crash(consensus::ReplicaId id, uint64_t torn_bytes) {
    sender_.SetDown(id, true);
    const uint64_t lost =
        disks_[id]->Crash([torn_bytes](const std::string&, uint64_t) { return torn_bytes; });
    hosts_[id]->Stop();
    loop_.RunReady();
    hosts_.erase(id);
    stores_.erase(id);  // after the host: its callbacks hold only weak references
    loop_.RunReady();
    return lost;
  }

  template <typename Pred>
  bool RunUntil(Pred done, uint64_t virtual_budget_us) {
    return testing::RunVirtualUntil(loop_, done, virtual_budget_us);
  }
  std::optional<GroupStatus> StatusOf(consensus::ReplicaId id) {
    if (!hosts_.count(id)) return std::nullopt;
    std::optional<GroupStatus> status;
    hosts_[id]->GetStatus([&](GroupStatus s) { status = s; });
    loop_.RunReady();
    return status;
  }
  consensus::ReplicaId Leader() {
    for (auto& [id, h] : hosts_) {
      auto status = StatusOf(id);
      if (status && status->holds_lease && !status->stopped) return id;
    }
    return 0;
  }
  // Writes `key` = `value` through the leader; nullopt when no answer came
  // within the budget.
  std::optional<Result<pb::KvApplyResult>> Put(const std::string& key, const std::string& value) {
    if (!RunUntil([&] { return Leader() != 0; }, 10'000'000)) return std::nullopt;
    std::optional<Result<pb::KvApplyResult>> written;
    hosts_[Leader()]->Write(Batch(key, value),
                            [&](Result<pb::KvApplyResult> r) { written = std::move(r); });
    if (!RunUntil([&] { return written.has_value(); }, 5'000'000)) return std::nullopt;
    return written;
  }
  static pb::KvBatch Batch(const std::string& key, const std::string& value) {
    pb::KvBatch batch;
    auto* w = batch.add_writes();
    w->set_key(key);
    w->set_value(value);
    return batch;
  }
  // Every live replica applied everything the leader chose.
  bool CaughtUp() {
    const consensus::ReplicaId leader = Leader();
    if (leader == 0) return false;
    const consensus::Slot chosen = StatusOf(leader)->chosen;
    for (auto& [id, h] : hosts_) {
      if (StatusOf(id)->applied < chosen) return false;
    }
    return true;
  }
  std::string Digest(consensus::ReplicaId id) {
    std::promise<Result<pb::SnapshotManifest>> digest;
    hosts_[id]->StateDigest(scanner_, [&](Result<pb::SnapshotManifest> d) { digest.set_value(d); });
    loop_.RunReady();
    Result<pb::SnapshotManifest> got = digest.get_future().get();
    // The scan job pins a store snapshot until it is destroyed, after its
    // callback: a later job runs only once it is gone (JobThread's order).
    std::promise<void> scanned;
    EXPECT_TRUE(scanner_.Submit([&scanned] { scanned.set_value(); }).ok());
    scanned.get_future().get();
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? got->ShortDebugString() : "";
  }
  std::optional<std::string> ValueAt(consensus::ReplicaId id, const std::string& key) {
    std::optional<Result<std::optional<pb::KvRecord>>> read;
    hosts_[id]->Read(key, pb::CONSISTENCY_EVENTUAL,
                     [&](Result<std::optional<pb::KvRecord>> r) { read = std::move(r); });
    loop_.RunReady();
    if (!read || !read->ok() || !read->value()) return std::nullopt;
    return (*read)->value().value();
  }

  VirtualTimeLoop loop_;
  JobThread scanner_{"digest", 8};
  testing::LoopbackSender sender_;
  std::map<consensus::ReplicaId, std::shared_ptr<storage::CrashFileSystem>> disks_;
  testing::VirtualStores stores_;
  testing::VirtualHosts hosts_;
};

// Writes are in flight (proposed, some of their group commits queued or
// running) when the leader's process dies; the unsynced tail goes, a torn
// prefix stays. Every acknowledged write survives on every replica and the
// replicas end with equal digests.
TEST_F(CrashingGroupTest, LeaderDiesInTheMiddleOfAGroupCommit) {
  std::map<std::string, std::string> acked;
  for (int i = 0; i < 10; ++i) {
    const std::string key = "k" + std::to_string(i);
    auto written = Put(key, "v" + std::to_string(i));
    ASSERT_TRUE(written.has_value() && written->ok()) << key;
    acked[key] = "v" + std::to_string(i);
  }
  const consensus::ReplicaId leader = Leader();
  ASSERT_NE(leader, 0u);
  std::vector<std::optional<Result<pb::KvApplyResult>>> burst(8);
  for (size_t i = 0; i < burst.size(); ++i) {
    hosts_[leader]->Write(Batch("b" + std::to_string(i), "x"),
                          [&burst, i](Result<pb::KvApplyResult> r) { burst[i] = std::move(r); });
  }
  loop_.RunReady();  // proposed, their log writes submitted; not waited for
  const uint64_t lost = Crash(leader, /*torn_bytes=*/7);
  // Whatever of the burst was acknowledged before the crash must survive it.
  for (size_t i = 0; i < burst.size(); ++i) {
    if (burst[i] && burst[i]->ok()) acked["b" + std::to_string(i)] = "x";
  }
  Start(leader);

  ASSERT_TRUE(RunUntil([&] { return CaughtUp(); }, 20'000'000));
  auto after = Put("after", "crash");
  ASSERT_TRUE(after.has_value() && after->ok());
  acked["after"] = "crash";
  ASSERT_TRUE(RunUntil([&] { return CaughtUp(); }, 10'000'000));
  for (auto& [id, h] : hosts_) {
    for (const auto& [key, value] : acked) EXPECT_EQ(ValueAt(id, key), value) << id << " " << key;
  }
  RecordProperty("unsynced_bytes_lost", std::to_string(lost));
  const std::string digest = Digest(1);
  EXPECT_EQ(Digest(2), digest);
  EXPECT_EQ(Digest(3), digest);
}

// A follower's disk starts failing: its group stops (fail-stop, reported
// in its status) and the two others keep committing; after a restart on a
// healed disk it catches up to the same digest.
TEST_F(CrashingGroupTest, DiskErrorsStopTheReplicaAndTheOthersGoOn) {
  ASSERT_TRUE(Put("before", "1").value_or(Status::Timeout("none")).ok());
  const consensus::ReplicaId leader = Leader();
  const consensus::ReplicaId follower = leader == 1 ? 2 : 1;
  disks_[follower]->SetFailWrites(true);
  for (int i = 0; i < 5; ++i) {
    auto written = Put("during" + std::to_string(i), "2");
    ASSERT_TRUE(written.has_value() && written->ok()) << i;
  }
  ASSERT_TRUE(RunUntil([&] { return StatusOf(follower)->stopped; }, 5'000'000));
  disks_[follower]->SetFailWrites(false);
  Crash(follower, 0);
  Start(follower);
  ASSERT_TRUE(RunUntil([&] { return CaughtUp(); }, 20'000'000));
  EXPECT_EQ(ValueAt(follower, "during4"), "2");
  EXPECT_EQ(Digest(follower), Digest(leader));
}

}  // namespace
}  // namespace tessera::node
