// Goal: a split entry applied by the partition state machine leaves the
// parent with exactly its left half and the child with exactly the parent's
// right half (values and versions), commands ordered after it with keys at
// or above the split key are not applied (wrong_partition) on every replica
// alike, even after a restart, and an invalid split changes nothing.
#include <gtest/gtest.h>

#include "node/partition_state_machine.h"
#include "node/snapshot_receiver.h"
#include "node/snapshot_sender.h"
#include "node/state_machine_test_util.h"
#include "storage/snapshot_staging.h"

namespace tessera::node {
namespace {

constexpr GroupId kParent = 3;
constexpr GroupId kChild = 8;

using testing::TempStore;

pb::Entry Entry(Slot slot, const pb::KvCommand& command) { return testing::CommandEntry(slot, command); }
pb::Entry Put(Slot slot, const std::string& key, const std::string& value) {
  return testing::PutEntry(slot, key, value);
}

pb::Entry Split(Slot slot, const std::string& key, GroupId child = kChild) {
  pb::KvCommand command;
  command.mutable_split()->set_split_key(key);
  command.mutable_split()->set_child_group_id(child);
  return Entry(slot, command);
}

pb::Entry Noop(Slot slot) {
  pb::Entry e;
  e.set_slot(slot);
  e.set_type(pb::ENTRY_NOOP);
  return e;
}

std::vector<pb::KvItem> Rows(const PartitionStateMachine& sm, const std::string& start = "",
                             const std::string& end = "") {
  auto scan = sm.Scan(start, end, 1000);
  EXPECT_TRUE(scan.ok());
  return {scan->items().begin(), scan->items().end()};
}

bool SameRows(const std::vector<pb::KvItem>& a, const std::vector<pb::KvItem>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key() != b[i].key() || a[i].value() != b[i].value() ||
        a[i].version() != b[i].version()) {
      return false;
    }
  }
  return true;
}

TEST(PartitionSplitApply, ParentKeepsTheLeftHalfChildGetsTheRight) {
  TempStore store;
  PartitionStateMachine sm(store.get(), kParent);
  ASSERT_TRUE(sm.Apply({Put(1, "a", "1"), Put(2, "m", "2"), Put(3, "z", "3")}).ok());
  const auto right_half = [&] {
    auto rows = Rows(sm, "m");
    rows.push_back(pb::KvItem());  // "mm", written just before the split
    rows.back().set_key("mm");
    rows.back().set_value("4");
    rows.back().set_version(4);
    std::sort(rows.begin(), rows.end(),
              [](const pb::KvItem& x, const pb::KvItem& y) { return x.key() < y.key(); });
    return rows;
  }();
  int prepared = 0, applied = 0;
  sm.set_split_hooks(
      [&](const pb::KvSplit& split, Slot slot) -> Result<SplitPlan> {
        ++prepared;
        EXPECT_EQ(split.split_key(), "m");
        EXPECT_EQ(slot, 6u);
        SplitPlan plan;
        plan.membership.add_voters(1);
        plan.membership.add_voters(2);
        plan.descriptor_writes.push_back({0, storage::Mutation::Put("group/x", "d")});
        return plan;
      },
      [&](const pb::KvSplit&, Slot) { ++applied; });
  // One apply: a command before the split (moved with the right half), a
  // no-op, the split, then a command on each side of the split key.
  auto r = sm.Apply({Put(4, "mm", "4"), Noop(5), Split(6, "m"), Put(7, "n", "x"),
                     Put(8, "b", "5")});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 4u);
  EXPECT_TRUE((*r)[1].result.applied());
  EXPECT_FALSE((*r)[2].result.applied());
  EXPECT_TRUE((*r)[2].result.wrong_partition());
  EXPECT_TRUE((*r)[3].result.applied());
  EXPECT_EQ(prepared, 1);
  EXPECT_EQ(applied, 1);

  PartitionStateMachine child(store.get(), kChild);
  EXPECT_TRUE(SameRows(Rows(child), right_half));
  ASSERT_EQ(Rows(sm).size(), 2u);  // a, b
  EXPECT_EQ(Rows(sm)[1].key(), "b");
  EXPECT_EQ(*store.get()->AppliedIndex(kParent), 8u);
  EXPECT_EQ(*store.get()->AppliedIndex(kChild), 6u);
  auto recovered = store.get()->RecoverGroup(kChild);
  ASSERT_TRUE(recovered.ok());
  EXPECT_EQ(recovered->log_base.log_start(), 7u);
  EXPECT_EQ(recovered->log_base.base_membership().voters_size(), 2);
  EXPECT_EQ(*store.get()->Get(0, "group/x"), "d");

  // After a restart the narrowed range still decides: a condition on a
  // moved key is refused too.
  store.Reopen();
  PartitionStateMachine again(store.get(), kParent);
  pb::KvCommand conditional;
  conditional.mutable_batch()->add_conditions()->set_key("q");
  conditional.mutable_batch()->mutable_conditions(0)->set_absent(true);
  auto w = conditional.mutable_batch()->add_writes();
  w->set_key("c");
  w->set_value("v");
  auto later = again.Apply({Entry(9, conditional), Put(10, "c", "y")});
  ASSERT_TRUE(later.ok());
  EXPECT_TRUE((*later)[0].result.wrong_partition());
  EXPECT_TRUE((*later)[1].result.applied());
}

// Goal: a split at or above the range end, or naming the parent or group 0
// as the child, is not applied and changes nothing but the applied index.
// Reads check their keys in the state they read (D130): before the
// split everything is in range; after it, a key at or past the split key
// and a scan reaching past it are WrongPartition.
TEST(PartitionSplitApply, ReadsCheckTheRangeOfTheStateTheyRead) {
  TempStore store;
  PartitionStateMachine sm(store.get(), kParent);
  ASSERT_TRUE(sm.Apply({Put(1, "a", "1"), Put(2, "z", "2")}).ok());
  EXPECT_TRUE(sm.CheckKeyInRange("z").ok());
  EXPECT_TRUE(sm.CheckEndInRange("").ok());
  ASSERT_TRUE(sm.Apply({Split(3, "m")}).ok());
  EXPECT_TRUE(sm.CheckKeyInRange("a").ok());
  EXPECT_TRUE(sm.CheckKeyInRange("lzz").ok());
  EXPECT_EQ(sm.CheckKeyInRange("m").code(), StatusCode::kWrongPartition);
  EXPECT_EQ(sm.CheckKeyInRange("z").code(), StatusCode::kWrongPartition);
  EXPECT_TRUE(sm.CheckEndInRange("m").ok());
  EXPECT_TRUE(sm.CheckEndInRange("b").ok());
  EXPECT_EQ(sm.CheckEndInRange("").code(), StatusCode::kWrongPartition);
  EXPECT_EQ(sm.CheckEndInRange("ma").code(), StatusCode::kWrongPartition);
  // A fresh state machine over the same store reads the stored end.
  PartitionStateMachine reopened(store.get(), kParent);
  EXPECT_EQ(reopened.CheckKeyInRange("m").code(), StatusCode::kWrongPartition);
}

TEST(PartitionSplitApply, InvalidSplitChangesNothing) {
  TempStore store;
  PartitionStateMachine sm(store.get(), kParent);
  ASSERT_TRUE(sm.Apply({Put(1, "a", "1"), Put(2, "m", "2"), Split(3, "k")}).ok());
  const auto before = Rows(sm);
  auto r = sm.Apply({Split(4, "p", 11), Split(5, "b", kParent), Split(6, "b", 0), Split(7, "")});
  ASSERT_TRUE(r.ok());
  for (const SlotResult& s : *r) {
    EXPECT_FALSE(s.result.applied()) << s.slot;
    EXPECT_FALSE(s.result.wrong_partition()) << s.slot;
  }
  EXPECT_TRUE(SameRows(Rows(sm), before));
  EXPECT_EQ(*store.get()->AppliedIndex(kParent), 7u);
  EXPECT_EQ(*store.get()->AppliedIndex(11), 0u);
  // A second, valid split of the left half: the grandchild's range ends at "k".
  ASSERT_TRUE(sm.Apply({Split(8, "b", 12)}).ok());
  EXPECT_EQ(**store.get()->RangeEnd(12), "k");
  EXPECT_EQ(*store.get()->AppliedIndex(kParent), 8u);
}


// Records what a SnapshotSender sends.
class CaptureSender : public MessageSender {
 public:
  void Send(pb::Message m) override { sent.push_back(std::move(m)); }
  std::vector<pb::Message> sent;
};

// Streams the parent's state from `from` to `to` as the group host does
// (sender, receiver, install at the leader's applied index).
void StreamSnapshot(storage::NodeStore* from, storage::NodeStore* to) {
  metrics::Registry registry;
  SnapshotCounters counters(registry);
  CaptureSender wire;
  SnapshotTransferOptions options;
  options.chunk_bytes = 64;
  options.window_chunks = 2;
  SnapshotSender sender(from, kParent, 1, &wire, options, &counters);
  SnapshotReceiver receiver(to, kParent, 2, &counters);
  sender.Start(0, 2);
  std::optional<SnapshotSender::Completed> done;
  for (uint64_t now = 1; !done && now < 1000; ++now) {
    std::vector<pb::Message> window = std::exchange(wire.sent, {});
    ASSERT_FALSE(window.empty());
    for (const pb::Message& chunk : window) {
      auto completed = sender.OnAck(now, 2, receiver.StageChunk(chunk).snapshot_transfer().ack());
      if (completed) done = completed;
    }
  }
  ASSERT_TRUE(done.has_value());
  pb::InstallSnapshot install;
  install.mutable_meta()->set_last_slot(done->applied_index);
  install.mutable_meta()->mutable_membership()->add_voters(1);
  install.set_data(done->manifest);
  ASSERT_TRUE(receiver.Install(install).ok());
}

// The parent's state digest as GroupHost::StateDigest computes it.
pb::SnapshotManifest Digest(storage::NodeStore* store) {
  auto snapshot = store->OpenSnapshot(kParent);
  EXPECT_TRUE(snapshot.ok());
  pb::SnapshotManifest digest;
  digest.set_applied_index((*snapshot)->applied_index());
  if ((*snapshot)->range_end()) digest.mutable_range_end()->set_end_key(*(*snapshot)->range_end());
  for (;;) {
    auto next = (*snapshot)->Next();
    EXPECT_TRUE(next.ok());
    if (!next.ok() || !next->has_value()) return digest;
    storage::AddPairToManifest((*next)->key, (*next)->value, &digest);
  }
}

// Goal: a replica that missed the split entry and installs a post-split
// snapshot of the parent stores its range end: commands after it with moved
// keys are refused there exactly as on the replica that applied the split,
// and both reach the same state digest.
TEST(PartitionSplitApply, SnapshotAfterTheSplitCarriesTheRangeEnd) {
  TempStore applied_store, lagging_store;
  PartitionStateMachine applied(applied_store.get(), kParent);
  PartitionStateMachine lagging(lagging_store.get(), kParent);
  const std::vector<pb::Entry> before = {Put(1, "a", "1"), Put(2, "m", "2"), Put(3, "z", "3")};
  ASSERT_TRUE(applied.Apply(before).ok());
  ASSERT_TRUE(lagging.Apply(before).ok());  // caches "no range end"
  ASSERT_TRUE(applied.Apply({Split(4, "m"), Put(5, "c", "4")}).ok());

  StreamSnapshot(applied_store.get(), lagging_store.get());
  lagging.ForgetRangeEnd();  // as GroupHost does after an install
  EXPECT_EQ(**lagging_store.get()->RangeEnd(kParent), "m");
  EXPECT_EQ(*lagging_store.get()->AppliedIndex(kParent), 5u);

  const std::vector<pb::Entry> after = {Put(6, "n", "x"), Put(7, "d", "y"), Put(8, "zz", "w")};
  auto on_applied = applied.Apply(after);
  auto on_lagging = lagging.Apply(after);
  ASSERT_TRUE(on_applied.ok() && on_lagging.ok());
  ASSERT_EQ(on_applied->size(), on_lagging->size());
  for (size_t i = 0; i < on_applied->size(); ++i) {
    EXPECT_EQ((*on_applied)[i].result.SerializeAsString(),
              (*on_lagging)[i].result.SerializeAsString()) << i;
  }
  EXPECT_TRUE((*on_lagging)[0].result.wrong_partition());
  EXPECT_TRUE((*on_lagging)[1].result.applied());
  EXPECT_TRUE(SameRows(Rows(lagging), Rows(applied)));
  const pb::SnapshotManifest digest = Digest(applied_store.get());
  EXPECT_EQ(Digest(lagging_store.get()).SerializeAsString(), digest.SerializeAsString());
  EXPECT_EQ(digest.range_end().end_key(), "m");
  EXPECT_EQ(digest.pair_count(), 3u);  // a, c, d

  // The range end survives a restart of the lagging replica.
  lagging_store.Reopen();
  PartitionStateMachine again(lagging_store.get(), kParent);
  auto later = again.Apply({Put(9, "q", "v")});
  ASSERT_TRUE(later.ok());
  EXPECT_TRUE((*later)[0].result.wrong_partition());
}

}  // namespace
}  // namespace tessera::node
