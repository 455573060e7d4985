// Goal: ReplicationHost creates groups idempotently, refuses bad
// descriptors, drops (and counts) messages for groups it does not host, and
// re-hosts its groups from their stored descriptors after a reopen.
#include "node/replication_host.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "common/metrics.h"

namespace tessera::node {
namespace {

pb::PartitionDescriptor Descriptor(uint64_t group, std::vector<uint32_t> nodes) {
  pb::PartitionDescriptor d;
  d.set_table("t");
  d.set_group_id(group);
  for (uint32_t n : nodes) d.add_replicas()->set_node_id(n);
  return d;
}

class ReplicationHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tessera-rh-XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `body` against a host opened on dir_, with io threads, then closes
  // it in the documented order.
  void WithHost(const std::function<void(ReplicationHost&)>& body,
                std::shared_ptr<storage::StorageFaults> faults = nullptr) {
    boost::asio::io_context io;
    auto work = boost::asio::make_work_guard(io);
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) threads.emplace_back([&io] { io.run(); });
    ReplicationHostOptions options;
    options.self_id = 1;
    options.store.path = dir_ + "/rocksdb";
    options.store.group_commit.faults = std::move(faults);
    options.send_batch = [](uint32_t, std::string) { return Status::Ok(); };
    auto host = ReplicationHost::Open(io, registry_, options);
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    body(**host);
    (*host)->Stop();
    work.reset();
    io.stop();
    for (auto& t : threads) t.join();
  }

  std::string dir_;
  metrics::Registry registry_;
};

TEST_F(ReplicationHostTest, CreatesIdempotentlyAndRestoresAfterReopen) {
  WithHost([](ReplicationHost& host) {
    EXPECT_TRUE(host.CreateGroup(Descriptor(7, {1, 2, 3})).ok());
    const auto first = host.Find(7);
    ASSERT_NE(first, nullptr);
    EXPECT_TRUE(host.CreateGroup(Descriptor(7, {1, 2, 3})).ok());
    EXPECT_EQ(host.Find(7), first);
    EXPECT_TRUE(host.CreateGroup(Descriptor(9, {1})).ok());
    EXPECT_EQ(host.Groups().size(), 2u);

    EXPECT_EQ(host.CreateGroup(Descriptor(0, {1})).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(host.CreateGroup(Descriptor(8, {2, 3})).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(host.CreateGroup(Descriptor(8, {1, 1})).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(host.CreateGroup(Descriptor(8, {})).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(host.Find(8), nullptr);
  });
  WithHost([this](ReplicationHost& host) {
    const std::vector<HostedGroup> groups = host.Groups();
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups[0].descriptor.group_id(), 7u);
    EXPECT_EQ(groups[0].descriptor.replicas_size(), 3);
    EXPECT_EQ(groups[1].descriptor.group_id(), 9u);

    pb::ConsensusBatch batch;
    pb::Message* unknown = batch.add_messages();
    unknown->set_group_id(42);
    unknown->set_to(1);
    host.DeliverBatch(batch);
    EXPECT_NE(registry_.RenderText().find("tessera_consensus_unknown_group_total 1\n"),
              std::string::npos);
  });
}

// A write through `host` of group `group`, retried while the group elects
// itself (NotLeader/Unavailable); the last outcome.
Result<pb::KvApplyResult> WriteUntilLed(GroupHost& host, const pb::KvCommand& command) {
  Result<pb::KvApplyResult> last = Status::Unavailable("not tried");
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::promise<Result<pb::KvApplyResult>> p;
    host.Write(command, [&p](Result<pb::KvApplyResult> r) { p.set_value(std::move(r)); });
    last = p.get_future().get();
    if (last.ok()) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return last;
}

pb::KvCommand PutCommand(const std::string& key) {
  pb::KvCommand command;
  auto* w = command.mutable_batch()->add_writes();
  w->set_key(key);
  w->set_value("v-" + key);
  return command;
}

std::shared_ptr<GroupHost> WaitFor(ReplicationHost& host, uint64_t group) {
  for (int i = 0; i < 200 && !host.Find(group); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return host.Find(group);
}

// Goal: a group whose log write failed stops; it is restarted from the
// store only once the store writes again, keeps what it acknowledged, and
// takes writes again.
TEST_F(ReplicationHostTest, GroupStoppedOnADiskErrorRestartsOnceTheStoreWrites) {
  constexpr uint64_t kGroup = 5;
  auto faults = std::make_shared<storage::StorageFaults>();
  WithHost(
      [&](ReplicationHost& host) {
        ASSERT_TRUE(host.CreateGroup(Descriptor(kGroup, {1})).ok());
        EXPECT_TRUE(host.RestartFailedGroups().empty());  // nothing stopped
        const std::shared_ptr<GroupHost> first = host.Find(kGroup);
        ASSERT_TRUE(WriteUntilLed(*first, PutCommand("a")).ok());
        faults->fail_writes = true;
        std::promise<Result<pb::KvApplyResult>> p;
        first->Write(PutCommand("b"), [&p](Result<pb::KvApplyResult> r) { p.set_value(std::move(r)); });
        EXPECT_FALSE(p.get_future().get().ok());
        EXPECT_TRUE(first->StoppedOnDiskError());
        // The store still fails writes: the group stays stopped.
        EXPECT_TRUE(host.RestartFailedGroups().empty());
        EXPECT_EQ(host.Find(kGroup), first);
        faults->fail_writes = false;
        EXPECT_EQ(host.RestartFailedGroups(), std::vector<uint64_t>{kGroup});
        const std::shared_ptr<GroupHost> second = host.Find(kGroup);
        ASSERT_NE(second, nullptr);
        EXPECT_NE(second, first);
        EXPECT_FALSE(second->StoppedOnDiskError());
        auto written = WriteUntilLed(*second, PutCommand("c"));
        ASSERT_TRUE(written.ok()) << written.status().ToString();
        EXPECT_TRUE(written->applied());
        auto rows = host.store().Scan(kGroup, "", "", 100);
        ASSERT_TRUE(rows.ok());
        std::string keys;
        for (const auto& kv : *rows) keys += kv.key;
        EXPECT_EQ(keys, "ac");  // "b" was never acknowledged, nor applied
        EXPECT_TRUE(host.RestartFailedGroups().empty());
      },
      faults);
}

// Goal: a split entry applied by a hosted group narrows its descriptor,
// stores and starts the child on the same replicas with the right half of
// the keys (it then leads and takes writes), refuses moved keys in the
// parent, and both groups come back as they were after a reopen.
TEST_F(ReplicationHostTest, SplitStartsTheChildAndSurvivesReopen) {
  constexpr uint64_t kParent = 7, kChild = 20;
  auto key_allowed = [](ReplicationHost& host, uint64_t group, const std::string& key) {
    return host.DescriptorAllows(group, [&key](const pb::PartitionDescriptor& d) {
      return key >= d.start_key() && (d.end_key().empty() || key < d.end_key());
    });
  };
  WithHost([&](ReplicationHost& host) {
    ASSERT_TRUE(host.CreateGroup(Descriptor(kParent, {1})).ok());
    auto parent = host.Find(kParent);
    for (const char* key : {"a", "f", "m", "q", "z"}) {
      ASSERT_TRUE(WriteUntilLed(*parent, PutCommand(key)).ok());
    }
    pb::KvCommand split;
    split.mutable_split()->set_split_key("m");
    split.mutable_split()->set_child_group_id(kChild);
    auto applied = WriteUntilLed(*parent, split);
    ASSERT_TRUE(applied.ok()) << applied.status().ToString();
    EXPECT_TRUE(applied->applied());
    auto child = WaitFor(host, kChild);
    ASSERT_NE(child, nullptr);
    EXPECT_FALSE(key_allowed(host, kParent, "q"));
    EXPECT_TRUE(key_allowed(host, kParent, "f"));
    EXPECT_TRUE(key_allowed(host, kChild, "q"));
    EXPECT_FALSE(key_allowed(host, kChild, "f"));
    auto moved = WriteUntilLed(*parent, PutCommand("r"));
    ASSERT_TRUE(moved.ok());
    EXPECT_TRUE(moved->wrong_partition());
    auto written = WriteUntilLed(*child, PutCommand("r"));
    ASSERT_TRUE(written.ok()) << written.status().ToString();
    EXPECT_TRUE(written->applied());
    EXPECT_GT(written->version(), applied->version());  // the child's log goes on from the split
  });
  WithHost([&](ReplicationHost& host) {
    ASSERT_EQ(host.Groups().size(), 2u);
    EXPECT_FALSE(key_allowed(host, kParent, "q"));
    EXPECT_TRUE(key_allowed(host, kChild, "q"));
    auto keys = [&host](uint64_t group) {
      auto rows = host.store().Scan(group, "", "", 100);
      std::string out;
      for (const auto& kv : *rows) out += kv.key;
      return out;
    };
    EXPECT_EQ(keys(kParent), "af");
    EXPECT_EQ(keys(kChild), "mqrz");
  });
}

// Goal: a range end the store holds without a narrowed descriptor (a
// snapshot install that finished just before a crash) narrows the
// descriptor when the host restores its groups, once (epoch + 1).
TEST_F(ReplicationHostTest, StoredRangeEndNarrowsTheDescriptorAtRestore) {
  constexpr uint64_t kGroup = 7;
  WithHost([](ReplicationHost& host) {
    ASSERT_TRUE(host.CreateGroup(Descriptor(kGroup, {1})).ok());
  });
  {
    storage::NodeStoreOptions so;
    so.path = dir_ + "/rocksdb";
    auto store = std::move(storage::NodeStore::Open(so)).value();
    ASSERT_TRUE(store->StageSnapshotChunk(kGroup, 1, 0, {{"a", "1"}}).ok());
    pb::SnapshotManifest manifest = *store->StagedSnapshot(kGroup);
    manifest.mutable_range_end()->set_end_key("m");
    pb::SnapshotMeta meta;
    meta.set_last_slot(30);
    meta.mutable_membership()->add_voters(1);
    ASSERT_TRUE(store->InstallStagedSnapshot(kGroup, manifest, meta).ok());
  }
  for (int reopen = 0; reopen < 2; ++reopen) {
    WithHost([](ReplicationHost& host) {
      const std::vector<HostedGroup> groups = host.Groups();
      ASSERT_EQ(groups.size(), 1u);
      EXPECT_EQ(groups[0].descriptor.end_key(), "m");
      EXPECT_EQ(groups[0].descriptor.epoch(), 1u);  // narrowed once, not per restart
    });
  }
}

// Goal: admin.create_group of a split's child (step 6) answers Unavailable
// while the parent's replica has not reached the split, OK once it applied
// it (the child it started), creates an empty child where the replica
// skipped the entry (its stored range end already ends at the split key)
// and where the parent is not hosted.
TEST_F(ReplicationHostTest, SplitChildIsCreatedOnlyWhereTheSplitCannotRace) {
  constexpr uint64_t kParent = 7, kChild = 20;
  pb::PartitionDescriptor child = Descriptor(kChild, {1});
  child.set_start_key("m");
  WithHost([&](ReplicationHost& host) {
    ASSERT_TRUE(host.CreateGroup(Descriptor(kParent, {1})).ok());
    auto parent = host.Find(kParent);
    for (int i = 0; i < 200; ++i) {
      ASSERT_TRUE(WriteUntilLed(*parent, PutCommand(std::string(1, static_cast<char>('a' + i % 26)) +
                                                    std::to_string(i))).ok());
    }
    auto bytes = host.store().ApproximateStateBytes(kParent);
    ASSERT_TRUE(bytes.ok());
    EXPECT_GT(*bytes, 0u);  // the planner's estimate sees the memtable
    EXPECT_EQ(host.CreateSplitChild(child, kParent).code(), StatusCode::kUnavailable);
    EXPECT_EQ(host.Find(kChild), nullptr);
    pb::KvCommand split;
    split.mutable_split()->set_split_key("m");
    split.mutable_split()->set_child_group_id(kChild);
    ASSERT_TRUE(WriteUntilLed(*parent, split).ok());
    ASSERT_NE(WaitFor(host, kChild), nullptr);
    EXPECT_TRUE(host.CreateSplitChild(child, kParent).ok());
    EXPECT_EQ(host.Groups().size(), 2u);
    // A parent this node does not host: the child starts empty here.
    pb::PartitionDescriptor other = Descriptor(31, {1});
    other.set_start_key("x");
    EXPECT_TRUE(host.CreateSplitChild(other, 99).ok());
    EXPECT_NE(host.Find(31), nullptr);
    EXPECT_EQ(host.CreateSplitChild(other, 31).code(), StatusCode::kInvalidArgument);
  });
}

TEST_F(ReplicationHostTest, SplitChildStartsEmptyWhereASnapshotSkippedTheSplit) {
  constexpr uint64_t kParent = 7, kChild = 20;
  WithHost([](ReplicationHost& host) {
    ASSERT_TRUE(host.CreateGroup(Descriptor(kParent, {1})).ok());
  });
  {
    storage::NodeStoreOptions so;
    so.path = dir_ + "/rocksdb";
    auto store = std::move(storage::NodeStore::Open(so)).value();
    ASSERT_TRUE(store->StageSnapshotChunk(kParent, 1, 0, {{"a", "1"}}).ok());
    pb::SnapshotManifest manifest = *store->StagedSnapshot(kParent);
    manifest.mutable_range_end()->set_end_key("m");
    pb::SnapshotMeta meta;
    meta.set_last_slot(30);
    meta.mutable_membership()->add_voters(1);
    ASSERT_TRUE(store->InstallStagedSnapshot(kParent, manifest, meta).ok());
  }
  WithHost([](ReplicationHost& host) {
    pb::PartitionDescriptor child = Descriptor(kChild, {1});
    child.set_start_key("n");  // not where the parent's range ends
    EXPECT_EQ(host.CreateSplitChild(child, kParent).code(), StatusCode::kUnavailable);
    child.set_start_key("m");
    EXPECT_TRUE(host.CreateSplitChild(child, kParent).ok());
    EXPECT_NE(host.Find(kChild), nullptr);
    EXPECT_TRUE(host.CreateSplitChild(child, kParent).ok());  // idempotent
  });
}

// The descriptor keys' bytes on disk: "group/" and the group id big-endian,
// so group 0x0102030405060708 is found where earlier versions stored it.
TEST(DescriptorKey, GroupIdIsEightBytesBigEndian) {
  EXPECT_EQ(DescriptorKey(0x0102030405060708), std::string("group/\x01\x02\x03\x04\x05\x06\x07\x08", 14));
  EXPECT_EQ(DescriptorKey(1), std::string("group/\0\0\0\0\0\0\0\x01", 14));
  EXPECT_LT(DescriptorKey(255), DescriptorKey(256));  // byte order is numeric order
}

}  // namespace
}  // namespace tessera::node
