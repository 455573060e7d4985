// Goal: applied state and its applied index are written atomically and
// survive restart, point reads and range scans stay within a group and in
// key order, snapshots are consistent while writes go on, and snapshot
// install replaces state, applied index and log in one step.
#include <gtest/gtest.h>
#include <rocksdb/env.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/options_util.h>

#include <atomic>
#include <thread>
#include <vector>

#include "storage/column_families.h"
#include "storage/node_store.h"
#include "storage/storage_test_util.h"

namespace tessera::storage {
namespace {

using namespace std::string_literals;
using testing::EntriesEq;
using testing::LogWriteFor;
using testing::MakeEntries;
using testing::MakeHardState;
using testing::MakeMembership;
using testing::OpenStore;
using testing::ProtoEq;
using testing::TempDir;

std::vector<KeyValue> ReadAll(GroupSnapshot& snapshot) {
  std::vector<KeyValue> out;
  for (;;) {
    Result<std::optional<KeyValue>> next = snapshot.Next();
    EXPECT_TRUE(next.ok()) << next.status().ToString();
    if (!next.ok() || !next->has_value()) return out;
    out.push_back(**next);
  }
}

// Goal: Apply writes mutations with the applied index, refuses stale indexes, and survives restart.
TEST(NodeStoreState, ApplyWritesStateWithAppliedIndexAndSurvivesRestart) {
  TempDir dir;
  {
    auto store = OpenStore(dir.path());
    EXPECT_EQ(*store->AppliedIndex(1), 0u);
    ASSERT_TRUE(store->Apply(1, 3, {Mutation::Put("a", "1"), Mutation::Put("b", "2")}).ok());
    ASSERT_TRUE(
        store
            ->Apply(1, 4, {Mutation::Delete("a"), Mutation::Put("b", "3"), Mutation::Put("b", "4")})
            .ok());
    // A stale or repeated index is refused and changes nothing.
    EXPECT_EQ(store->Apply(1, 4, {Mutation::Put("c", "x")}).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(store->Apply(1, 2, {Mutation::Put("c", "x")}).code(), StatusCode::kInvalidArgument);
    // Oversized keys are refused before anything is written.
    EXPECT_EQ(store
                  ->Apply(1, 9,
                          {Mutation::Put("c", "x"),
                           Mutation::Put(std::string(limits::kStateKeyBytesMax + 1, 'k'), "")})
                  .code(),
              StatusCode::kInvalidArgument);
    ASSERT_TRUE(store->WriteLog(LogWriteFor(1)).ok());  // a synced write makes Apply durable
  }
  auto store = OpenStore(dir.path());
  EXPECT_EQ(*store->AppliedIndex(1), 4u);
  EXPECT_EQ(store->Get(1, "a").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*store->Get(1, "b"), "4");
  EXPECT_EQ(store->Get(1, "c").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store->RecoverGroup(1)->applied_index, 4u);
}

// Goal: A concurrent reader never sees an applied index without exactly its state.
TEST(NodeStoreState, SnapshotsAlwaysSeeStateMatchingTheirAppliedIndex) {
  // Each apply i sets "count" = i and adds key "k<i>": a reader that saw the
  // index without its state (or the reverse) would notice.
  TempDir dir;
  auto store = OpenStore(dir.path());
  constexpr Slot kApplies = 300;
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop.load()) {
      auto snapshot = store->OpenSnapshot(7);
      ASSERT_TRUE(snapshot.ok());
      const Slot applied = (*snapshot)->applied_index();
      std::vector<KeyValue> data = ReadAll(**snapshot);
      if (applied == 0) {
        EXPECT_TRUE(data.empty());
        continue;
      }
      ASSERT_EQ(data.size(), applied + 1);  // "count" and k1..k<applied>
      EXPECT_EQ(data.front(), (KeyValue{"count", std::to_string(applied)}));
    }
  });
  for (Slot i = 1; i <= kApplies; ++i) {
    ASSERT_TRUE(store
                    ->Apply(7, i,
                            {Mutation::Put("count", std::to_string(i)),
                             Mutation::Put("k" + std::to_string(i), "v")})
                    .ok());
  }
  stop = true;
  reader.join();
}

// Goal: A snapshot keeps yielding its instant's state while new applies land.
TEST(NodeStoreState, SnapshotIsFrozenWhileWritesContinue) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  ASSERT_TRUE(store->Apply(2, 5, {Mutation::Put("x", "old"), Mutation::Put("y", "old")}).ok());
  ASSERT_TRUE(store->Apply(3, 1, {Mutation::Put("other", "group")}).ok());
  auto snapshot = store->OpenSnapshot(2);
  ASSERT_TRUE(snapshot.ok());
  ASSERT_TRUE(store->Apply(2, 6, {Mutation::Delete("x"), Mutation::Put("z", "new")}).ok());
  EXPECT_EQ((*snapshot)->applied_index(), 5u);
  EXPECT_EQ((*snapshot)->group_id(), 2u);
  EXPECT_EQ(ReadAll(**snapshot), (std::vector<KeyValue>{{"x", "old"}, {"y", "old"}}));
}

// Goal: Scan returns one group's keys in byte order within [start, end) and the limit.
TEST(NodeStoreState, ScanIsOrderedBoundedAndGroupScoped) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  const std::vector<std::string> keys = {""s, "a"s, "a\0"s, "ab"s, "b"s, "\xff"s, "\xff\xff"s};
  std::vector<Mutation> puts;
  for (const auto& k : keys) puts.push_back(Mutation::Put(k, "v" + k));
  ASSERT_TRUE(store->Apply(10, 1, puts).ok());
  ASSERT_TRUE(store->Apply(9, 1, {Mutation::Put("a", "neighbour")}).ok());
  ASSERT_TRUE(store->Apply(11, 1, {Mutation::Put("", "neighbour")}).ok());

  auto scan_keys = [&](std::string_view start, std::string_view end, size_t limit) {
    Result<std::vector<KeyValue>> r = store->Scan(10, start, end, limit);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::vector<std::string> out;
    if (r.ok())
      for (const auto& kv : *r) out.push_back(kv.key);
    return out;
  };
  EXPECT_EQ(scan_keys("", "", 100), keys);
  EXPECT_EQ(scan_keys("a", "b", 100), (std::vector<std::string>{"a", "a\0"s, "ab"}));
  EXPECT_EQ(scan_keys("a\x01", "", 2), (std::vector<std::string>{"ab", "b"}));
  EXPECT_EQ(scan_keys("\xff", "", 100), (std::vector<std::string>{"\xff", "\xff\xff"}));
  EXPECT_TRUE(scan_keys("b", "a", 100).empty());
  EXPECT_EQ(store->Scan(10, "", "", 100)->at(3).value, "vab");
  EXPECT_EQ(store->Scan(10, "", "", 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Scan(10, "", "", limits::kScanItemsMax + 1).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(*store->Get(9, "a"), "neighbour");
  EXPECT_EQ(*store->Get(10, "a"), "va");
}

// Goal: a scan's value filter leaves refused rows' values unread but keeps the rows and the limit.
TEST(NodeStoreState, ScanValueFilterSkipsValuesNotRows) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  ASSERT_TRUE(store->Apply(10, 1, {Mutation::Put("a", "va"), Mutation::Put("a-data", std::string(4096, 'x')),
                                   Mutation::Put("b", "vb"), Mutation::Put("b-data", "yy")})
                  .ok());
  const ValueFilter no_data = [](std::string_view key) { return !key.ends_with("-data"); };
  Result<std::vector<KeyValue>> rows = store->Scan(10, "", "", 100, no_data);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (std::vector<KeyValue>{{"a", "va"}, {"a-data", ""}, {"b", "vb"}, {"b-data", ""}}));
  rows = store->Scan(10, "", "", 3, no_data);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 3u);
  EXPECT_EQ(rows->back(), (KeyValue{"b", "vb"}));
}

// Goal: a visit ends at the row its visitor declines to go past.
TEST(NodeStoreState, VisitStopsWhenTheVisitorSaysSo) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  ASSERT_TRUE(store->Apply(10, 1, {Mutation::Put("a", "1"), Mutation::Put("b", "2"),
                                   Mutation::Put("c", "3")})
                  .ok());
  std::vector<std::string> seen;
  ASSERT_TRUE(store
                  ->Visit(10, "", "", 100, {},
                          [&seen](std::string_view key, std::string_view value) {
                            seen.push_back(std::string(key) + "=" + std::string(value));
                            return key < "b";
                          })
                  .ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"a=1", "b=2"}));
}

// Goal: InstallSnapshot replaces state, applied index and log in one step and keeps the hard state.
TEST(NodeStoreState, InstallSnapshotReplacesStateAndLogAtomically) {
  TempDir dir;
  const pb::HardState hard_state = MakeHardState(8, 2, 9);
  {
    auto store = OpenStore(dir.path());
    ASSERT_TRUE(
        store->WriteLog(LogWriteFor(4).HardState(hard_state).Entries(MakeEntries(1, 12, 8))).ok());
    ASSERT_TRUE(
        store->Apply(4, 9, {Mutation::Put("stale", "1"), Mutation::Put("kept", "old")}).ok());
    ASSERT_TRUE(store->WriteLog(LogWriteFor(5).Entries(MakeEntries(1, 2, 1))).ok());
    ASSERT_TRUE(store->Apply(5, 2, {Mutation::Put("stale", "other group")}).ok());

    pb::SnapshotMeta meta;
    meta.set_last_slot(20);
    *meta.mutable_membership() = MakeMembership({1, 2, 3});
    ASSERT_TRUE(store->InstallSnapshot(4, meta, {{"kept", "new"}, {"more", "x"}}).ok());
    // The log continues after the snapshot.
    ASSERT_TRUE(store->WriteLog(LogWriteFor(4).Entries(MakeEntries(21, 22, 9))).ok());
  }
  auto store = OpenStore(dir.path());
  Result<consensus::RecoveredState> state = store->RecoverGroup(4);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_TRUE(ProtoEq(state->hard_state, hard_state));  // promises are never forgotten
  EXPECT_EQ(state->log_base.log_start(), 21u);
  EXPECT_TRUE(ProtoEq(state->log_base.base_membership(), MakeMembership({1, 2, 3})));
  EXPECT_TRUE(EntriesEq(state->entries, MakeEntries(21, 22, 9)));
  EXPECT_EQ(state->applied_index, 20u);
  EXPECT_EQ(*store->Scan(4, "", "", 10), (std::vector<KeyValue>{{"kept", "new"}, {"more", "x"}}));
  // Group 5 is untouched.
  EXPECT_EQ(*store->Get(5, "stale"), "other group");
  EXPECT_EQ(store->RecoverGroup(5)->entries.size(), 2u);
}

// Goal: InstallSnapshot keeps accepted entries above the snapshot (an acceptor never forgets them).
TEST(NodeStoreState, InstallSnapshotKeepsEntriesAboveIt) {
  TempDir dir;
  {
    auto store = OpenStore(dir.path());
    ASSERT_TRUE(store->WriteLog(LogWriteFor(4).Entries(MakeEntries(1, 12, 8))).ok());
    pb::SnapshotMeta meta;
    meta.set_last_slot(10);
    *meta.mutable_membership() = MakeMembership({1, 2, 3});
    ASSERT_TRUE(store->InstallSnapshot(4, meta, {{"k", "v"}}).ok());
  }
  auto store = OpenStore(dir.path());
  Result<consensus::RecoveredState> state = store->RecoverGroup(4);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->log_base.log_start(), 11u);
  EXPECT_TRUE(EntriesEq(state->entries, MakeEntries(11, 12, 8)));
  EXPECT_EQ(state->applied_index, 10u);
}

// Goal: the applied state's column family is opened with its own small
// memtables, merged four per flush, with Bloom filters in memtables and
// tables (D34), the log's keeps the large one; read
// back from the OPTIONS file RocksDB persisted, i.e. what it really used.
TEST(NodeStoreState, StateFamilyHasSmallMergedMemtablesAndBloomFilters) {
  TempDir dir;
  NodeStoreOptions options;
  options.path = dir.path();
  options.write_buffer_bytes = 32 << 20;
  options.state_write_buffer_bytes = 3 << 20;
  { ASSERT_NE(testing::OpenStoreWith(options), nullptr); }
  rocksdb::DBOptions db_options;
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  rocksdb::ConfigOptions config;
  config.env = rocksdb::Env::Default();
  ASSERT_TRUE(rocksdb::LoadLatestOptions(config, dir.path(), &db_options, &families).ok());
  bool saw_state = false;
  bool saw_log = false;
  for (const rocksdb::ColumnFamilyDescriptor& family : families) {
    const auto* table = family.options.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
    ASSERT_NE(table, nullptr) << family.name;
    if (family.name == kStateColumnFamily) {
      saw_state = true;
      EXPECT_EQ(family.options.write_buffer_size, size_t{3} << 20);
      EXPECT_EQ(family.options.min_write_buffer_number_to_merge, 4);
      EXPECT_EQ(family.options.max_write_buffer_number, 8);
      EXPECT_TRUE(family.options.memtable_whole_key_filtering);
      EXPECT_GT(family.options.memtable_prefix_bloom_size_ratio, 0.0);
      ASSERT_NE(table->filter_policy, nullptr);
      std::unique_ptr<const rocksdb::FilterPolicy> bloom(rocksdb::NewBloomFilterPolicy(10));
      EXPECT_STREQ(table->filter_policy->Name(), bloom->Name());
    } else if (family.name == kLogColumnFamily) {
      saw_log = true;
      EXPECT_EQ(family.options.write_buffer_size, size_t{32} << 20);
    }
  }
  EXPECT_TRUE(saw_state);
  EXPECT_TRUE(saw_log);
}

// Goal: a group's live key estimate follows its own keys, in memtables and
// in table files alike (small write buffers force flushes), and never
// counts another group's keys.
TEST(NodeStoreState, ApproximateStateKeysCountsTheGroupsKeysOnly) {
  TempDir dir;
  NodeStoreOptions options;
  options.path = dir.path();
  options.state_write_buffer_bytes = 64 << 10;
  auto store = testing::OpenStoreWith(options);
  ASSERT_NE(store, nullptr);
  auto fill = [&](GroupId group, int keys) {
    Slot slot = 1;
    for (int i = 0; i < keys; i += 100) {
      std::vector<Mutation> batch;
      for (int k = i; k < std::min(keys, i + 100); ++k) {
        batch.push_back(Mutation::Put("key" + std::to_string(100'000 + k), std::string(100, 'v')));
      }
      ASSERT_TRUE(store->Apply(group, slot++, batch).ok());
    }
  };
  fill(7, 4'000);
  fill(8, 300);
  auto in = [&](GroupId group, uint64_t low, uint64_t high) {
    auto keys = store->ApproximateStateKeys(group);
    ASSERT_TRUE(keys.ok()) << keys.status().ToString();
    EXPECT_GE(*keys, low) << "group " << group;
    EXPECT_LE(*keys, high) << "group " << group;
  };
  in(7, 2'800, 5'200);
  in(8, 150, 600);
  in(9, 0, 0);
  // Reopened: the memtables are flushed or replayed; the figures stand.
  store.reset();
  store = testing::OpenStoreWith(options);
  ASSERT_NE(store, nullptr);
  in(7, 2'800, 5'200);
  in(8, 150, 600);
  in(9, 0, 0);
}

}  // namespace
}  // namespace tessera::storage
