// Goal: a streamed snapshot is staged chunk by chunk, invisibly to reads,
// and installed in bounded batches; a crash after the install marker or in
// the middle of the copy is finished by reopening the store with exactly
// the staged state; a staging without a marker is dropped at open; a
// manifest that does not match the staging is refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "storage/node_store.h"
#include "storage/snapshot_staging.h"
#include "storage/storage_test_util.h"

namespace tessera::storage {
namespace {

using testing::MakeEntries;
using testing::MakeHardState;
using testing::MakeMembership;
using testing::TempDir;

constexpr GroupId kGroup = 7;
constexpr uint64_t kSnapshotId = 0xABCDEF;

std::unique_ptr<NodeStore> Open(const std::string& path,
                                std::optional<size_t> stop_after_batches = std::nullopt) {
  NodeStoreOptions options;
  options.path = path;
  options.write_buffer_bytes = 4 << 20;
  options.snapshot_install_batch_bytes = 1 << 10;  // many batches
  options.fault_install_stop_after_batches = stop_after_batches;
  return testing::OpenStoreWith(options);
}

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "key%06d", i);
  return buf;
}

// `chunks` chunks of `per_chunk` pairs of ~100 bytes, keys in order.
std::vector<std::vector<KeyValue>> MakeChunks(int chunks, int per_chunk, const std::string& tag) {
  std::vector<std::vector<KeyValue>> out(chunks);
  for (int c = 0; c < chunks; ++c) {
    for (int i = 0; i < per_chunk; ++i) {
      const int n = c * per_chunk + i;
      out[c].push_back({Key(n), tag + std::string(90, 'a' + n % 26)});
    }
  }
  return out;
}

// Stages every chunk and returns the manifest a sender would compute.
pb::SnapshotManifest StageAll(NodeStore& store, const std::vector<std::vector<KeyValue>>& chunks,
                              uint64_t id = kSnapshotId) {
  pb::SnapshotManifest manifest;
  manifest.set_snapshot_id(id);
  for (size_t seq = 0; seq < chunks.size(); ++seq) {
    auto staged = store.StageSnapshotChunk(kGroup, id, seq, chunks[seq]);
    EXPECT_TRUE(staged.ok()) << staged.status().ToString();
    for (const KeyValue& kv : chunks[seq]) AddPairToManifest(kv.key, kv.value, &manifest);
  }
  manifest.set_chunk_count(chunks.size());
  return manifest;
}

std::vector<KeyValue> AllState(NodeStore& store) {
  auto snapshot = store.OpenSnapshot(kGroup);
  EXPECT_TRUE(snapshot.ok());
  std::vector<KeyValue> out;
  for (;;) {
    auto next = (*snapshot)->Next();
    EXPECT_TRUE(next.ok());
    if (!next.ok() || !next->has_value()) return out;
    out.push_back(**next);
  }
}

std::vector<KeyValue> Flatten(const std::vector<std::vector<KeyValue>>& chunks) {
  std::vector<KeyValue> out;
  for (const auto& c : chunks) out.insert(out.end(), c.begin(), c.end());
  return out;
}

pb::SnapshotMeta MetaAt(Slot last_slot) {
  pb::SnapshotMeta meta;
  meta.set_last_slot(last_slot);
  *meta.mutable_membership() = MakeMembership({1, 2, 3});
  return meta;
}

// A group with old state ("old" keys) and log entries 1..10.
void WriteOldState(NodeStore& store) {
  ASSERT_TRUE(store.WriteLog(testing::LogWriteFor(kGroup)
                                 .HardState(MakeHardState(3, 1, 10))
                                 .Entries(MakeEntries(1, 10, 3)))
                  .ok());
  ASSERT_TRUE(store.Apply(kGroup, 10, {Mutation::Put("old-a", "1"), Mutation::Put(Key(5), "x")}).ok());
}

void ExpectInstalled(NodeStore& store, const std::vector<KeyValue>& expected, Slot last_slot) {
  EXPECT_EQ(AllState(store), expected);
  EXPECT_EQ(*store.AppliedIndex(kGroup), last_slot);
  auto recovered = store.RecoverGroup(kGroup);
  ASSERT_TRUE(recovered.ok());
  EXPECT_EQ(recovered->log_base.log_start(), last_slot + 1);
  EXPECT_EQ(store.StagedSnapshot(kGroup).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(*store.InstallPending(kGroup));
}

// Goal: multi-chunk staging is invisible to reads; install replaces the state.
TEST(NodeStoreSnapshot, MultiChunkStagingThenInstall) {
  TempDir dir;
  auto store = Open(dir.Sub("db"));
  WriteOldState(*store);
  const auto chunks = MakeChunks(5, 40, "v");
  const pb::SnapshotManifest manifest = StageAll(*store, chunks);
  // Staged pairs are not state: reads still see the old state.
  EXPECT_EQ(store->Get(kGroup, Key(5)).value(), "x");
  EXPECT_EQ(store->Get(kGroup, Key(6)).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(AllState(*store).size(), 2u);
  auto staged = store->StagedSnapshot(kGroup);
  ASSERT_TRUE(staged.ok());
  EXPECT_EQ(staged->chunk_count(), 5u);
  EXPECT_EQ(staged->pair_count(), 200u);
  ASSERT_TRUE(store->InstallStagedSnapshot(kGroup, manifest, MetaAt(50)).ok());
  ExpectInstalled(*store, Flatten(chunks), 50);
  EXPECT_EQ(store->Get(kGroup, "old-a").status().code(), StatusCode::kNotFound);
}

// Goal: duplicates are idempotent, gaps and foreign chunks are refused, and a
// new transfer's chunk 0 replaces the staging.
TEST(NodeStoreSnapshot, ChunkSequencing) {
  TempDir dir;
  auto store = Open(dir.Sub("db"));
  const auto chunks = MakeChunks(3, 4, "v");
  ASSERT_TRUE(store->StageSnapshotChunk(kGroup, kSnapshotId, 0, chunks[0]).ok());
  auto dup = store->StageSnapshotChunk(kGroup, kSnapshotId, 0, chunks[0]);
  ASSERT_TRUE(dup.ok());
  EXPECT_EQ(dup->chunk_count(), 1u);
  EXPECT_EQ(store->StageSnapshotChunk(kGroup, kSnapshotId, 2, chunks[2]).status().code(),
            StatusCode::kConflict);
  EXPECT_EQ(store->StageSnapshotChunk(kGroup, kSnapshotId + 1, 1, chunks[1]).status().code(),
            StatusCode::kConflict);
  // Out of key order against what is staged.
  EXPECT_EQ(store->StageSnapshotChunk(kGroup, kSnapshotId, 1, chunks[0]).status().code(),
            StatusCode::kInvalidArgument);
  const auto other = MakeChunks(2, 4, "w");
  const pb::SnapshotManifest manifest = StageAll(*store, other, kSnapshotId + 1);
  ASSERT_TRUE(store->InstallStagedSnapshot(kGroup, manifest, MetaAt(9)).ok());
  ExpectInstalled(*store, Flatten(other), 9);
}

// Goal: a manifest that does not match the staging is refused, nothing changed.
TEST(NodeStoreSnapshot, MismatchedManifestIsRefused) {
  TempDir dir;
  auto store = Open(dir.Sub("db"));
  WriteOldState(*store);
  const auto chunks = MakeChunks(3, 10, "v");
  const pb::SnapshotManifest manifest = StageAll(*store, chunks);
  for (int field = 0; field < 4; ++field) {
    pb::SnapshotManifest bad = manifest;
    if (field == 0) bad.set_snapshot_id(manifest.snapshot_id() + 1);
    if (field == 1) bad.set_chunk_count(manifest.chunk_count() + 1);
    if (field == 2) bad.set_pair_count(manifest.pair_count() - 1);
    if (field == 3) bad.set_checksum(manifest.checksum() ^ 1);
    EXPECT_EQ(store->InstallStagedSnapshot(kGroup, bad, MetaAt(50)).code(),
              StatusCode::kInvalidArgument)
        << field;
  }
  EXPECT_EQ(*store->AppliedIndex(kGroup), 10u);
  EXPECT_EQ(store->Get(kGroup, "old-a").value(), "1");
  EXPECT_FALSE(*store->InstallPending(kGroup));
  // Nothing staged at all.
  TempDir other;
  auto empty = Open(other.Sub("db"));
  EXPECT_EQ(empty->InstallStagedSnapshot(kGroup, manifest, MetaAt(50)).code(),
            StatusCode::kInvalidArgument);
}

// Goal: a crash right after the marker, or after some copy batches, is
// finished at reopen with exactly the staged state.
TEST(NodeStoreSnapshot, CrashDuringInstallIsFinishedAtOpen) {
  for (size_t stop_after : {size_t{0}, size_t{1}, size_t{7}}) {
    TempDir dir;
    const auto chunks = MakeChunks(6, 30, "v");
    {
      auto store = Open(dir.Sub("db"), stop_after);
      WriteOldState(*store);
      const pb::SnapshotManifest manifest = StageAll(*store, chunks);
      EXPECT_EQ(store->InstallStagedSnapshot(kGroup, manifest, MetaAt(77)).code(),
                StatusCode::kAborted);
      EXPECT_TRUE(*store->InstallPending(kGroup));
      // The unfinished install blocks new staging and dropping.
      EXPECT_EQ(store->DropStagedSnapshot(kGroup).code(), StatusCode::kConflict);
    }
    auto store = Open(dir.Sub("db"));
    EXPECT_EQ(store->snapshot_recovery_stats().installs_resumed, 1u) << stop_after;
    ExpectInstalled(*store, Flatten(chunks), 77);
  }
}

// Goal: a staging without a marker (an interrupted transfer) is dropped at open.
TEST(NodeStoreSnapshot, StagingWithoutMarkerIsDroppedAtOpen) {
  TempDir dir;
  const auto chunks = MakeChunks(2, 10, "v");
  {
    auto store = Open(dir.Sub("db"));
    WriteOldState(*store);
    StageAll(*store, chunks);
  }
  auto store = Open(dir.Sub("db"));
  EXPECT_EQ(store->snapshot_recovery_stats().stagings_dropped, 1u);
  EXPECT_EQ(store->StagedSnapshot(kGroup).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*store->AppliedIndex(kGroup), 10u);
  EXPECT_EQ(AllState(*store).size(), 2u);
  // The transfer cannot continue: its staging is gone.
  EXPECT_EQ(store->StageSnapshotChunk(kGroup, kSnapshotId, 2, chunks[1]).status().code(),
            StatusCode::kConflict);
}

// Goal: a staged pair corrupted on disk under an install marker keeps the
// store from opening (Corruption), instead of installing wrong state.
TEST(NodeStoreSnapshot, CorruptStagedPairUnderMarkerIsCorruption) {
  TempDir dir;
  {
    auto store = Open(dir.Sub("db"), size_t{0});
    const pb::SnapshotManifest manifest = StageAll(*store, MakeChunks(2, 5, "v"));
    EXPECT_EQ(store->InstallStagedSnapshot(kGroup, manifest, MetaAt(5)).code(),
              StatusCode::kAborted);
  }
  {
    testing::RawDb raw(dir.Sub("db"));
    raw.Put(raw.state(), StagedKey(kGroup, Key(3)), "garbage");
  }
  NodeStoreOptions options;
  options.path = dir.Sub("db");
  auto reopened = NodeStore::Open(options);
  ASSERT_FALSE(reopened.ok());
  EXPECT_EQ(reopened.status().code(), StatusCode::kCorruption);
}

// Goal: RemoveGroup deletes staging and marker records too.
TEST(NodeStoreSnapshot, RemoveGroupDropsStaging) {
  TempDir dir;
  auto store = Open(dir.Sub("db"));
  StageAll(*store, MakeChunks(2, 3, "v"));
  ASSERT_TRUE(store->RemoveGroup(kGroup).ok());
  EXPECT_EQ(store->StagedSnapshot(kGroup).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tessera::storage

namespace tessera::storage {
namespace {

// Goal: the range end a manifest carries is stored with the installed state
// (also when a crash interrupts the install), reported by the snapshot, and
// a manifest without one drops a stored range end; an empty one is refused.
TEST(NodeStoreSnapshot, InstallStoresTheManifestsRangeEnd) {
  for (size_t stop_after : {size_t{0}, size_t{2}}) {
    TempDir dir;
    const auto chunks = MakeChunks(3, 20, "v");
    {
      auto store = Open(dir.Sub("db"), stop_after);
      WriteOldState(*store);
      pb::SnapshotManifest manifest = StageAll(*store, chunks);
      manifest.mutable_range_end()->set_end_key(Key(60));
      EXPECT_EQ(store->InstallStagedSnapshot(kGroup, manifest, MetaAt(40)).code(),
                StatusCode::kAborted);
      EXPECT_FALSE(store->RangeEnd(kGroup)->has_value());  // not before the state
    }
    auto store = Open(dir.Sub("db"));
    ExpectInstalled(*store, Flatten(chunks), 40);
    EXPECT_EQ(**store->RangeEnd(kGroup), Key(60)) << stop_after;
    auto snapshot = store->OpenSnapshot(kGroup);
    ASSERT_TRUE(snapshot.ok());
    EXPECT_EQ((*snapshot)->range_end(), std::optional<std::string>(Key(60)));
    snapshot->reset();

    // A manifest without a range end drops the stored one: the range end
    // follows the installed state.
    pb::SnapshotManifest wide = StageAll(*store, chunks, kSnapshotId + 1);
    ASSERT_TRUE(store->InstallStagedSnapshot(kGroup, wide, MetaAt(90)).ok());
    EXPECT_FALSE(store->RangeEnd(kGroup)->has_value());

    pb::SnapshotManifest empty_end = StageAll(*store, chunks, kSnapshotId + 2);
    empty_end.mutable_range_end();
    EXPECT_EQ(store->InstallStagedSnapshot(kGroup, empty_end, MetaAt(95)).code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(*store->AppliedIndex(kGroup), 90u);
  }
}

}  // namespace
}  // namespace tessera::storage
