// Goal: a split moves exactly the parent's keys >= the split key to the
// child (applied index and log base at the split slot), narrows the parent's
// range end, and a crash after the marker or in the middle of the copy is
// finished by reopening the store with the same result.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "storage/crash_file_system.h"
#include "storage/node_store.h"
#include "storage/storage_test_util.h"

namespace tessera::storage {
namespace {

using testing::MakeMembership;
using testing::TempDir;

constexpr GroupId kParent = 7;
constexpr GroupId kChild = 9;
constexpr Slot kSplitSlot = 12;

std::unique_ptr<NodeStore> Open(const std::string& path,
                                std::optional<size_t> stop_after_batches = std::nullopt,
                                std::shared_ptr<CrashFileSystem> fs = nullptr) {
  NodeStoreOptions options;
  options.path = path;
  options.file_system = std::move(fs);
  options.write_buffer_bytes = 4 << 20;
  options.snapshot_install_batch_bytes = 1 << 10;
  options.split_file_bytes = 1 << 10;  // many copy files
  options.fault_split_stop_after_batches = stop_after_batches;
  return testing::OpenStoreWith(options);
}

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "key%06d", i);
  return buf;
}

// 200 keys of ~100 bytes each at applied index 10.
std::vector<KeyValue> WriteParent(NodeStore& store) {
  std::vector<Mutation> puts;
  std::vector<KeyValue> rows;
  for (int i = 0; i < 200; ++i) {
    rows.push_back({Key(i), std::string(90, static_cast<char>('a' + i % 26))});
    puts.push_back(Mutation::Put(rows.back().key, rows.back().value));
  }
  EXPECT_TRUE(store.Apply(kParent, 10, puts).ok());
  return rows;
}

std::vector<KeyValue> AllState(NodeStore& store, GroupId group) {
  auto rows = store.Scan(group, "", "", limits::kScanItemsMax);
  EXPECT_TRUE(rows.ok());
  return rows.ok() ? *rows : std::vector<KeyValue>{};
}

pb::SplitMarker MarkerAt(const std::string& split_key, GroupId child = kChild,
                         Slot slot = kSplitSlot) {
  pb::SplitMarker marker;
  marker.set_child_group_id(child);
  marker.set_split_key(split_key);
  marker.set_split_slot(slot);
  *marker.mutable_membership() = MakeMembership({1, 2, 3});
  return marker;
}

std::vector<GroupMutation> Descriptors() {
  return {{0, Mutation::Put("group/child", "child descriptor")}};
}

void ExpectSplit(NodeStore& store, const std::vector<KeyValue>& rows, int split_at) {
  const std::vector<KeyValue> left(rows.begin(), rows.begin() + split_at);
  const std::vector<KeyValue> right(rows.begin() + split_at, rows.end());
  EXPECT_EQ(AllState(store, kParent), left);
  EXPECT_EQ(AllState(store, kChild), right);
  EXPECT_EQ(*store.AppliedIndex(kParent), kSplitSlot);
  EXPECT_EQ(*store.AppliedIndex(kChild), kSplitSlot);
  EXPECT_EQ(**store.RangeEnd(kParent), Key(split_at));
  EXPECT_FALSE(store.RangeEnd(kChild)->has_value());
  EXPECT_FALSE(*store.SplitPending(kParent));
  auto recovered = store.RecoverGroup(kChild);
  ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
  EXPECT_EQ(recovered->log_base.log_start(), kSplitSlot + 1);
  EXPECT_EQ(recovered->log_base.base_membership().voters_size(), 3);
  EXPECT_EQ(*store.Get(0, "group/child"), "child descriptor");
  // Group 0's applied index is not the split's business.
  EXPECT_EQ(*store.AppliedIndex(0), 0u);
}

TEST(NodeStoreSplit, MovesTheRightHalfToTheChild) {
  TempDir dir;
  auto store = Open(dir.Sub("db"));
  const auto rows = WriteParent(*store);
  ASSERT_TRUE(store->ApplySplit(kParent, MarkerAt(Key(120)), Descriptors()).ok());
  ExpectSplit(*store, rows, 120);
  // The same after a restart, with nothing to resume.
  store.reset();
  store = Open(dir.Sub("db"));
  EXPECT_EQ(store->snapshot_recovery_stats().splits_resumed, 0u);
  ExpectSplit(*store, rows, 120);
}

// The files a split's copy left in the store's directory.
std::vector<std::string> SplitFiles(const std::string& store_path) {
  std::vector<std::string> names;
  const std::filesystem::path dir = std::filesystem::path(store_path) / "split-files";
  if (!std::filesystem::exists(dir)) return names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

// Goal: a crash right after the marker batch or after some copy files
// (written, not ingested) is finished at reopen, exactly, and the files it
// left are gone.
TEST(NodeStoreSplit, CrashDuringSplitIsFinishedAtOpen) {
  for (size_t stop_after : {size_t{0}, size_t{1}, size_t{4}}) {
    TempDir dir;
    std::vector<KeyValue> rows;
    {
      auto store = Open(dir.Sub("db"), stop_after);
      rows = WriteParent(*store);
      EXPECT_EQ(store->ApplySplit(kParent, MarkerAt(Key(50)), Descriptors()).code(),
                StatusCode::kAborted);
      EXPECT_TRUE(*store->SplitPending(kParent));
      // The parent already serves the narrowed range; a second split waits.
      EXPECT_EQ(**store->RangeEnd(kParent), Key(50));
      EXPECT_EQ(store->ApplySplit(kParent, MarkerAt(Key(20), 11, 13), {}).code(),
                StatusCode::kConflict);
      EXPECT_EQ(SplitFiles(dir.Sub("db")).size(), stop_after) << stop_after;
    }
    auto store = Open(dir.Sub("db"));
    EXPECT_EQ(store->snapshot_recovery_stats().splits_resumed, 1u) << stop_after;
    ExpectSplit(*store, rows, 50);
    EXPECT_TRUE(SplitFiles(dir.Sub("db")).empty());
  }
}

// Goal: a power cut after the marker batch (synced, and with it the
// parent's earlier applies) and some copy files is finished at reopen,
// exactly.
TEST(NodeStoreSplit, PowerCutDuringCopyIsFinishedAtOpen) {
  for (size_t stop_after : {size_t{0}, size_t{3}}) {
    auto fs = std::make_shared<CrashFileSystem>();
    std::vector<KeyValue> rows;
    {
      auto store = Open("/sim/node", stop_after, fs);
      ASSERT_NE(store, nullptr);
      rows = WriteParent(*store);
      EXPECT_EQ(store->ApplySplit(kParent, MarkerAt(Key(77)), Descriptors()).code(),
                StatusCode::kAborted);
      fs->Crash();
    }
    auto store = Open("/sim/node", std::nullopt, fs);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->snapshot_recovery_stats().splits_resumed, 1u) << stop_after;
    ExpectSplit(*store, rows, 77);
  }
}

// Goal: keys the child held before the copy (those of an attempt that a
// crash interrupted after its ingest) do not outlive it: the child's keys
// are exactly the parent's keys >= the split key.
TEST(NodeStoreSplit, ChildKeysAreExactlyTheCopy) {
  TempDir dir;
  auto store = Open(dir.Sub("db"));
  const auto rows = WriteParent(*store);
  ASSERT_TRUE(store->Apply(kChild, 3, {Mutation::Put("zzz-stale", "x"), Mutation::Put(Key(150), "old")})
                  .ok());
  ASSERT_TRUE(store->ApplySplit(kParent, MarkerAt(Key(120)), Descriptors()).ok());
  ExpectSplit(*store, rows, 120);
  EXPECT_TRUE(SplitFiles(dir.Sub("db")).empty());
}

// Goal: a second split of the parent narrows it again, and its child
// inherits the parent's previous range end; a key outside the range, an
// old slot and a bad child are refused with nothing changed.
TEST(NodeStoreSplit, SecondSplitAndBadArguments) {
  TempDir dir;
  auto store = Open(dir.Sub("db"));
  const auto rows = WriteParent(*store);
  ASSERT_TRUE(store->ApplySplit(kParent, MarkerAt(Key(150)), {}).ok());
  EXPECT_EQ(store->ApplySplit(kParent, MarkerAt(Key(160), 11, 20), {}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store->ApplySplit(kParent, MarkerAt(Key(100), 11, kSplitSlot), {}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store->ApplySplit(kParent, MarkerAt("", 11, 20), {}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store->ApplySplit(kParent, MarkerAt(Key(100), kParent, 20), {}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store->ApplySplit(kParent, MarkerAt(Key(100), 0, 20), {}).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(store->ApplySplit(kParent, MarkerAt(Key(100), 11, 20), {}).ok());
  EXPECT_EQ(AllState(*store, kParent), std::vector<KeyValue>(rows.begin(), rows.begin() + 100));
  EXPECT_EQ(AllState(*store, 11), std::vector<KeyValue>(rows.begin() + 100, rows.begin() + 150));
  EXPECT_EQ(**store->RangeEnd(kParent), Key(100));
  EXPECT_EQ(**store->RangeEnd(11), Key(150));
  // RemoveGroup forgets the range end.
  ASSERT_TRUE(store->RemoveGroup(kParent).ok());
  EXPECT_FALSE(store->RangeEnd(kParent)->has_value());
}

}  // namespace
}  // namespace tessera::storage
