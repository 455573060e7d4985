// Goal: a replica that missed a compacted log whose state is many chunks
// catches up by a streamed snapshot (state equal on all three replicas);
// a transfer whose acknowledgements are lost is abandoned and a later one
// succeeds; the sender keeps at most its window of chunks in flight; an
// install does not hold the io thread.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <boost/asio/executor_work_guard.hpp>
#include <filesystem>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "node/group_host.h"
#include "node/group_host_test_util.h"
#include "node/snapshot_receiver.h"
#include "node/snapshot_sender.h"

namespace tessera::node {
namespace {

constexpr uint64_t kGroup = 5;

// Records what a SnapshotSender/Receiver sends.
class CaptureSender : public MessageSender {
 public:
  void Send(pb::Message m) override {
    std::lock_guard lock(mu_);
    sent.push_back(std::move(m));
  }
  std::vector<pb::Message> Take() {
    std::lock_guard lock(mu_);
    return std::exchange(sent, {});
  }
  std::mutex mu_;
  std::vector<pb::Message> sent;
};

bool WaitFor(const std::function<bool()>& done, int timeout_ms = 20'000) {
  for (int waited = 0; waited < timeout_ms; waited += 10) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

std::vector<storage::KeyValue> StateOf(storage::NodeStore& store) {
  auto snapshot = store.OpenSnapshot(kGroup);
  EXPECT_TRUE(snapshot.ok());
  std::vector<storage::KeyValue> out;
  for (;;) {
    auto next = (*snapshot)->Next();
    EXPECT_TRUE(next.ok());
    if (!next.ok() || !next->has_value()) return out;
    out.push_back(**next);
  }
}

class SnapshotTransferTest : public testing::ThreeReplicaGroupTest {
 protected:
  void AdjustStoreOptions(storage::NodeStoreOptions& so) override {
    so.snapshot_install_batch_bytes = 8 << 10;
  }
  void AdjustHostOptions(GroupHostOptions& o) override {
    o.consensus.random_seed = 7;
    o.compaction_trigger_slots = 40;
    o.compaction_keep_slots = 10;
    o.snapshot.chunk_bytes = 4 << 10;
    o.snapshot.window_chunks = 2;
    o.snapshot.retransmit_us = 100'000;
    o.snapshot.stall_timeout_us = 400'000;
    o.snapshot_counters = &counters_;
  }
  consensus::ReplicaId WaitForLeader(std::set<consensus::ReplicaId> among) {
    consensus::ReplicaId leader = 0;
    WaitFor([&] {
      for (auto id : among) {
        if (StatusOf(id).holds_lease) leader = id;
      }
      return leader != 0;
    });
    return leader;
  }
  // Writes `count` keys of ~500 bytes: the state is many 4 KiB chunks, and
  // the log is compacted far past a replica that missed it.
  void WriteState(consensus::ReplicaId leader, int count) {
    for (int i = 0; i < count; ++i) {
      const std::string key = "key" + std::to_string(1000 + i);
      ASSERT_TRUE(Put(leader, key, std::string(500, static_cast<char>('a' + i % 26))).ok()) << i;
    }
  }
  // Elects a leader and writes 150 keys (~75 KB: ~19 chunks) while one
  // replica is down, so the log is compacted past it. Sets *leader and
  // *lagging (left down); call through ASSERT_NO_FATAL_FAILURE.
  void LeaveOneBehind(consensus::ReplicaId* leader, consensus::ReplicaId* lagging) {
    *leader = WaitForLeader({1, 2, 3});
    ASSERT_NE(*leader, 0u);
    *lagging = *leader % 3 + 1;
    sender_.SetDown(*lagging, true);
    WriteState(*leader, 150);
    ASSERT_GT(StatusOf(*leader).log_start, StatusOf(*lagging).applied + 1);
  }
  bool CaughtUp(consensus::ReplicaId leader, consensus::ReplicaId lagging) {
    return WaitFor([&] { return StatusOf(lagging).applied == StatusOf(leader).applied; });
  }

  metrics::Registry registry_;
  SnapshotCounters counters_{registry_};
};

TEST_F(SnapshotTransferTest, LaggingReplicaCatchesUpByStreamedSnapshot) {
  consensus::ReplicaId leader = 0, lagging = 0;
  ASSERT_NO_FATAL_FAILURE(LeaveOneBehind(&leader, &lagging));
  sender_.SetDown(lagging, false);
  sender_.SetMuted(lagging, false);
  ASSERT_TRUE(CaughtUp(leader, lagging));
  EXPECT_GE(counters_.transfers_completed.value(), 1u);
  EXPECT_GE(counters_.installs_done.value(), 1u);
  // The state is several chunks (each holds at least chunk_bytes).
  size_t state_bytes = 0;
  for (const auto& kv : StateOf(*stores_[leader])) state_bytes += kv.key.size() + kv.value.size();
  EXPECT_GE(state_bytes, 4u * (4 << 10));
  EXPECT_GE(counters_.chunks_received.value(), 4u) << state_bytes;
  EXPECT_EQ(counters_.installs_refused.value(), 0u);
  // Writes after the install reach the replica through the log again.
  ASSERT_TRUE(Put(leader, "after", "x").ok());
  ASSERT_TRUE(CaughtUp(leader, lagging));
  const auto expected = StateOf(*stores_[leader]);
  EXPECT_EQ(expected.size(), 151u);
  for (consensus::ReplicaId id = 1; id <= 3; ++id) EXPECT_EQ(StateOf(*stores_[id]), expected) << id;
  // Nothing stays staged or pinned.
  EXPECT_EQ(stores_[lagging]->StagedSnapshot(kGroup).status().code(), StatusCode::kNotFound);
}

TEST_F(SnapshotTransferTest, InterruptedTransferIsAbandonedThenRetried) {
  consensus::ReplicaId leader = 0, lagging = 0;
  ASSERT_NO_FATAL_FAILURE(LeaveOneBehind(&leader, &lagging));
  // The lagging replica hears the leader but all it says is lost: chunks are
  // staged, never acknowledged, and the transfer is abandoned.
  const uint64_t abandoned = counters_.transfers_abandoned.value();
  sender_.SetDown(lagging, false);
  sender_.SetMuted(lagging, true);
  ASSERT_TRUE(WaitFor([&] {
    return counters_.chunks_received.value() > 0 &&
           counters_.transfers_abandoned.value() > abandoned;
  }));
  EXPECT_EQ(counters_.installs_done.value(), 0u);
  EXPECT_TRUE(stores_[lagging]->StagedSnapshot(kGroup).ok());
  sender_.SetDown(lagging, false);
  sender_.SetMuted(lagging, false);
  ASSERT_TRUE(CaughtUp(leader, lagging));
  EXPECT_GE(counters_.transfers_completed.value(), 1u);
  EXPECT_GE(counters_.installs_done.value(), 1u);
  const auto expected = StateOf(*stores_[leader]);
  for (consensus::ReplicaId id = 1; id <= 3; ++id) EXPECT_EQ(StateOf(*stores_[id]), expected) << id;
}

// Goal: an install does not hold the io thread. With one io thread for all
// three replicas and every install slowed by 1.5 s after its marker is
// durable, the lagging replica refuses reads as "installing" while the
// leader and the other follower still commit writes, i.e. before the
// install is done; afterwards all three states are equal.
class SlowInstallOnOneIoThreadTest : public SnapshotTransferTest {
 protected:
  void AdjustStoreOptions(storage::NodeStoreOptions& so) override {
    SnapshotTransferTest::AdjustStoreOptions(so);
    so.fault_install_delay_ms = 1'500;
  }
  int IoThreads() const override { return 1; }

  Status EventualRead(consensus::ReplicaId at) {
    std::promise<Status> p;
    hosts_[at]->Read("key1000", pb::CONSISTENCY_EVENTUAL,
                     [&p](Result<std::optional<pb::KvRecord>> r) { p.set_value(r.status()); });
    return p.get_future().get();
  }
};

TEST_F(SlowInstallOnOneIoThreadTest, WritesCommitWhileAReplicaInstalls) {
  consensus::ReplicaId leader = 0, lagging = 0;
  ASSERT_NO_FATAL_FAILURE(LeaveOneBehind(&leader, &lagging));
  sender_.SetDown(lagging, false);
  ASSERT_TRUE(WaitFor([&] { return EventualRead(lagging).code() == StatusCode::kUnavailable; }));
  ASSERT_EQ(counters_.installs_done.value(), 0u);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(Put(leader, "during" + std::to_string(i), "x").ok()) << i;
  }
  EXPECT_EQ(counters_.installs_done.value(), 0u) << "the writes waited for the install";
  ASSERT_TRUE(CaughtUp(leader, lagging));
  // The leader may have started another transfer while the slow install
  // ran (its stall timeout is shorter); wait until that one settled too.
  EXPECT_GE(counters_.installs_done.value(), 1u);
  const auto expected = StateOf(*stores_[leader]);
  EXPECT_EQ(expected.size(), 155u);
  EXPECT_TRUE(WaitFor([&] {
    if (!EventualRead(lagging).ok()) return false;
    for (consensus::ReplicaId id = 1; id <= 3; ++id) {
      if (StateOf(*stores_[id]) != expected) return false;
    }
    return true;
  }));
}

// Records the host's range-narrowing calls per replica.
class SplitThenSnapshotTest : public SnapshotTransferTest {
 protected:
  void AdjustHostOptions(GroupHostOptions& o) override {
    SnapshotTransferTest::AdjustHostOptions(o);
    const consensus::ReplicaId id = o.consensus.self;
    o.on_range_narrowed = [this, id](const std::string& end_key) {
      std::lock_guard lock(narrowed_mu_);
      narrowed_[id].push_back(end_key);
      return Status::Ok();
    };
  }
  std::vector<std::string> NarrowedOn(consensus::ReplicaId id) {
    std::lock_guard lock(narrowed_mu_);
    return narrowed_[id];
  }
  std::mutex narrowed_mu_;
  std::map<consensus::ReplicaId, std::vector<std::string>> narrowed_;
};

// Goal: a replica that missed a split entry (the log was compacted past it)
// catches up by a snapshot that carries the parent's range end: it then
// refuses moved keys like the others, its state equals theirs, and the host
// is told to narrow the range.
TEST_F(SplitThenSnapshotTest, InstalledSnapshotNarrowsTheLaggingReplica) {
  consensus::ReplicaId leader = 0, lagging = 0;
  ASSERT_NO_FATAL_FAILURE(LeaveOneBehind(&leader, &lagging));
  pb::KvCommand split;
  split.mutable_split()->set_split_key("key1100");
  split.mutable_split()->set_child_group_id(kGroup + 1);
  std::promise<Result<pb::KvApplyResult>> p;
  hosts_[leader]->Write(split, [&p](Result<pb::KvApplyResult> r) { p.set_value(std::move(r)); });
  auto applied = p.get_future().get();
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  ASSERT_TRUE(applied->applied());
  // Keys below the split key again, until the log is compacted past the
  // split (a transfer to the down replica pins the log until it stalls).
  for (int round = 0; round < 50 && StatusOf(leader).log_start <= applied->version(); ++round) {
    WriteState(leader, 20);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GT(StatusOf(leader).log_start, applied->version());
  sender_.SetDown(lagging, false);
  sender_.SetMuted(lagging, false);
  ASSERT_TRUE(CaughtUp(leader, lagging));
  EXPECT_EQ(**stores_[lagging]->RangeEnd(kGroup), "key1100");
  EXPECT_EQ(NarrowedOn(lagging), std::vector<std::string>{"key1100"});
  auto moved = Put(leader, "key1120", "x");
  ASSERT_TRUE(moved.ok());
  EXPECT_TRUE(moved->wrong_partition());
  ASSERT_TRUE(Put(leader, "key1001", "y").ok());
  ASSERT_TRUE(CaughtUp(leader, lagging));
  const auto expected = StateOf(*stores_[leader]);
  EXPECT_EQ(expected.size(), 100u);  // key1000..key1099
  for (consensus::ReplicaId id = 1; id <= 3; ++id) {
    EXPECT_EQ(StateOf(*stores_[id]), expected) << id;
    EXPECT_EQ(**stores_[id]->RangeEnd(kGroup), "key1100") << id;
  }
}

// Replica 3 is a log replica.
class LogReplicaSplitTest : public SplitThenSnapshotTest {
 protected:
  void AdjustHostOptions(GroupHostOptions& o) override {
    SplitThenSnapshotTest::AdjustHostOptions(o);
    o.bootstrap_membership.add_log_only(3);
    o.log_only = o.consensus.self == 3;
  }
};

// Goal: a log replica, which applies nothing, narrows its range when a
// split entry commits (once per valid split; an invalid one is ignored).
TEST_F(LogReplicaSplitTest, CommittedSplitNarrowsTheLogReplica) {
  const consensus::ReplicaId leader = WaitForLeader({1, 2});
  ASSERT_NE(leader, 0u);
  ASSERT_TRUE(Put(leader, "a", "1").ok());
  for (const auto& [key, child] : {std::pair<std::string, uint64_t>{"m", kGroup + 1},
                                   std::pair<std::string, uint64_t>{"", kGroup + 2}}) {
    pb::KvCommand split;
    split.mutable_split()->set_split_key(key);
    split.mutable_split()->set_child_group_id(child);
    std::promise<Result<pb::KvApplyResult>> p;
    hosts_[leader]->Write(split, [&p](Result<pb::KvApplyResult> r) { p.set_value(std::move(r)); });
    ASSERT_TRUE(p.get_future().get().ok());
  }
  ASSERT_TRUE(CaughtUp(leader, 3));
  EXPECT_EQ(NarrowedOn(3), std::vector<std::string>{"m"});
  EXPECT_TRUE(NarrowedOn(leader).empty());  // a full replica narrows in its split apply
}

// Goal: the sender holds at most window_chunks unacknowledged chunks,
// retransmits them, abandons when the receiver loses its staging, and the
// manifest of a completed transfer matches the receiver's staging.
TEST(SnapshotSenderTest, WindowAcksAndManifest) {
  char pattern[] = "/tmp/tessera-snaps-XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  {
    storage::NodeStoreOptions so;
    so.path = dir + "/leader";
    auto leader_store = std::move(storage::NodeStore::Open(so)).value();
    so.path = dir + "/follower";
    auto follower_store = std::move(storage::NodeStore::Open(so)).value();
    std::vector<storage::Mutation> puts;
    for (int i = 0; i < 40; ++i) puts.push_back(storage::Mutation::Put("k" + std::to_string(100 + i), std::string(1000, 'v')));
    ASSERT_TRUE(leader_store->Apply(kGroup, 12, puts).ok());

    metrics::Registry registry;
    SnapshotCounters counters(registry);
    CaptureSender to_follower;
    SnapshotTransferOptions options;
    options.chunk_bytes = 4 << 10;
    options.window_chunks = 3;
    options.retransmit_us = 1'000;
    options.stall_timeout_us = 1'000'000;
    SnapshotSender sender(leader_store.get(), kGroup, 1, &to_follower, options, &counters);
    SnapshotReceiver receiver(follower_store.get(), kGroup, 2, &counters);

    sender.Start(0, 2);
    sender.Start(0, 2);  // one transfer per destination
    EXPECT_EQ(sender.transfers(), 1u);
    EXPECT_EQ(sender.OldestPinnedIndex(), std::optional<consensus::Slot>(12));
    auto window = to_follower.Take();
    ASSERT_EQ(window.size(), 3u);
    sender.Tick(5'000);  // no progress: the window again
    EXPECT_EQ(to_follower.Take().size(), 3u);

    std::optional<SnapshotSender::Completed> done;
    uint64_t now = 10'000;
    while (!done) {
      ASSERT_LE(window.size(), 3u);
      std::vector<pb::Message> acks;
      for (const pb::Message& chunk : window) acks.push_back(receiver.StageChunk(chunk));
      for (const pb::Message& ack : acks) {
        auto completed = sender.OnAck(++now, 2, ack.snapshot_transfer().ack());
        if (completed) done = completed;
      }
      window = to_follower.Take();
    }
    EXPECT_EQ(done->to, 2u);
    EXPECT_EQ(done->applied_index, 12u);
    EXPECT_EQ(sender.transfers(), 0u);
    pb::SnapshotManifest manifest;
    ASSERT_TRUE(manifest.ParseFromString(done->manifest));
    EXPECT_EQ(manifest.pair_count(), 40u);
    EXPECT_EQ(manifest.chunk_count(), 8u);  // 5 pairs of ~1 KB reach 4 KiB
    pb::InstallSnapshot install;
    install.mutable_meta()->set_last_slot(12);
    install.mutable_meta()->mutable_membership()->add_voters(1);
    install.set_data(done->manifest);
    ASSERT_TRUE(receiver.Install(install).ok());
    EXPECT_EQ(StateOf(*follower_store), StateOf(*leader_store));
    EXPECT_EQ(counters.transfers_completed.value(), 1u);

    // A receiver that lost its staging (acks 0 after chunks were acked)
    // makes the sender abandon at once.
    sender.Start(now, 3);
    auto first = to_follower.Take();
    pb::SnapshotChunkAck ack;
    ack.set_snapshot_id(first[0].snapshot_transfer().chunk().snapshot_id());
    ack.set_staged_chunks(2);
    EXPECT_FALSE(sender.OnAck(++now, 3, ack).has_value());
    ack.set_staged_chunks(0);
    EXPECT_FALSE(sender.OnAck(++now, 3, ack).has_value());
    EXPECT_EQ(sender.transfers(), 0u);
    EXPECT_EQ(counters.transfers_abandoned.value(), 1u);
    // A stalled transfer is abandoned by Tick; AbortAll refuses new ones.
    sender.Start(now, 3);
    sender.Tick(now + 2'000'000);
    EXPECT_EQ(sender.transfers(), 0u);
    sender.AbortAll();
    sender.Start(now, 3);
    EXPECT_EQ(sender.transfers(), 0u);
  }
  std::filesystem::remove_all(dir);
}


TEST(SnapshotPacerTest, TakesAtMostItsRate) {
  SnapshotPacer pacer(100'000);  // burst: 10,000 bytes
  EXPECT_TRUE(pacer.Ready(1'000'000));
  pacer.Take(30'000);  // into debt: 20,000 bytes
  EXPECT_FALSE(pacer.Ready(1'100'000));  // 10,000 back
  EXPECT_TRUE(pacer.Ready(1'200'000));   // even
  // A long idle spell earns no more than the burst.
  pacer.Take(10'000);
  EXPECT_TRUE(pacer.Ready(60'000'000));
  pacer.Take(10'001);
  EXPECT_FALSE(pacer.Ready(60'000'000));
}

// A paced transfer takes as long as its bytes at the pacer's rate, chunks
// leaving as the bucket allows (Tick sends them), and still completes.
TEST(SnapshotSenderTest, PacedToTheNodeRate) {
  char pattern[] = "/tmp/tessera-snaps-XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  {
    storage::NodeStoreOptions so;
    so.path = dir + "/leader";
    auto leader_store = std::move(storage::NodeStore::Open(so)).value();
    so.path = dir + "/follower";
    auto follower_store = std::move(storage::NodeStore::Open(so)).value();
    std::vector<storage::Mutation> puts;
    for (int i = 0; i < 40; ++i) {
      puts.push_back(storage::Mutation::Put("k" + std::to_string(100 + i), std::string(1000, 'v')));
    }
    ASSERT_TRUE(leader_store->Apply(kGroup, 12, puts).ok());
    metrics::Registry registry;
    SnapshotCounters counters(registry);
    CaptureSender to_follower;
    SnapshotTransferOptions options;
    options.chunk_bytes = 4 << 10;
    options.window_chunks = limits::kSnapshotChunksInFlightMax;
    options.retransmit_us = 10'000'000;
    options.stall_timeout_us = 2'000'000;
    options.pacer = std::make_shared<SnapshotPacer>(20'000);  // ~40 KB: about 2 s
    SnapshotSender sender(leader_store.get(), kGroup, 1, &to_follower, options, &counters);
    SnapshotReceiver receiver(follower_store.get(), kGroup, 2, &counters);
    uint64_t now = 1'000'000;
    sender.Start(now, 2);
    std::optional<SnapshotSender::Completed> done;
    while (!done && now < 10'000'000) {
      for (const pb::Message& chunk : to_follower.Take()) {
        const pb::Message ack = receiver.StageChunk(chunk);
        if (auto c = sender.OnAck(now, 2, ack.snapshot_transfer().ack())) done = c;
      }
      // Never more than the rate allows (plus the first burst and a chunk).
      EXPECT_LE(counters.bytes_sent.value(), (now - 1'000'000) / 50 + 2'000 + 5'000) << now;
      now += 10'000;
      sender.Tick(now);
    }
    ASSERT_TRUE(done.has_value());
    EXPECT_GE(now - 1'000'000, 1'500'000u);
    EXPECT_LE(now - 1'000'000, 3'000'000u);
    EXPECT_EQ(counters.transfers_abandoned.value(), 0u);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera::node
