// Goal: scans that mostly step over obsolete memtable versions ask for a
// flush of the applied state, at most once per interval, and a flush makes
// the memtable small again; ordinary scans never ask.
#include "storage/obsolete_version_flush.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "storage/node_store.h"
#include "storage/storage_test_util.h"

namespace tessera::storage {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

ObsoleteVersionFlushOptions SmallOptions() {
  ObsoleteVersionFlushOptions options;
  options.steps_min = 1'000;
  options.steps_per_row_max = 4;
  options.interval_min = seconds(5);
  return options;
}

// Goal: a window closes once its scans took steps_min steps, and asks for
// a flush only when it took more than steps_per_row_max steps per row.
TEST(ObsoleteVersionFlush, JudgesWindowsOfScansByStepsPerRow) {
  ObsoleteVersionFlush policy(SmallOptions());
  const Clock::time_point t0 = Clock::now();
  EXPECT_FALSE(policy.Observe({999, 1}, t0)) << "a window below steps_min is not judged yet";
  EXPECT_FALSE(policy.Observe({3'005, 1'000}, t0)) << "4,004 steps for 1,001 rows: allowed";
  // Pages of a listing over overwritten keys: each alone is small.
  bool asked = false;
  int pages = 0;
  while (!asked && pages < 100) {
    asked = policy.Observe({150, 10}, t0);
    ++pages;
  }
  EXPECT_TRUE(asked);
  EXPECT_EQ(pages, 7) << "the window closes at the page that reaches steps_min";
  EXPECT_EQ(policy.flushes_requested(), 1u);
}

// Goal: a scan that found no row behind many obsolete entries counts as
// one row (the worst case), not as a division by zero.
TEST(ObsoleteVersionFlush, EmptyResultCountsAsOneRow) {
  ObsoleteVersionFlush policy(SmallOptions());
  EXPECT_TRUE(policy.Observe({1'000, 0}, Clock::now()));
}

// Goal: at most one request per interval, however many scans qualify.
TEST(ObsoleteVersionFlush, AsksAtMostOncePerInterval) {
  ObsoleteVersionFlush policy(SmallOptions());
  const Clock::time_point t0 = Clock::now();
  EXPECT_TRUE(policy.Observe({50'000, 10}, t0));
  EXPECT_FALSE(policy.Observe({50'000, 10}, t0 + seconds(4)));
  EXPECT_TRUE(policy.Observe({50'000, 10}, t0 + seconds(5)));
  EXPECT_EQ(policy.flushes_requested(), 2u);
}

// Goal: concurrent qualifying scans produce exactly one request.
TEST(ObsoleteVersionFlush, ConcurrentScansClaimOneRequest) {
  ObsoleteVersionFlush policy(SmallOptions());
  const Clock::time_point now = Clock::now();
  std::atomic<int> yes{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 100; ++j) yes += policy.Observe({50'000, 10}, now) ? 1 : 0;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(yes.load(), 1);
  EXPECT_EQ(policy.flushes_requested(), 1u);
}

std::unique_ptr<NodeStore> OpenWithPolicy(const std::string& path) {
  NodeStoreOptions options;
  options.path = path;
  options.state_write_buffer_bytes = 64 << 20;  // large: no flush by size here
  options.obsolete_version_flush = SmallOptions();
  options.obsolete_version_flush.interval_min = std::chrono::hours(1);
  return testing::OpenStoreWith(options);
}

std::string KeyOf(int i) {
  char key[16];
  std::snprintf(key, sizeof key, "k%05d", i);
  return key;
}

// Goal: on a real store, scanning keys written once never asks for a flush;
// after each key was overwritten many times, a scan asks once, RocksDB
// flushes the applied state (its memtable empties), and the scan's answer
// is unchanged by it.
TEST(ObsoleteVersionFlush, NodeStoreFlushesStateAfterScansOverOverwrittenKeys) {
  testing::TempDir dir;
  auto store = OpenWithPolicy(dir.path());
  ASSERT_NE(store, nullptr);
  constexpr int kKeys = 2'000;
  Slot slot = 0;
  std::vector<Mutation> once;
  for (int i = 0; i < kKeys; ++i) once.push_back(Mutation::Put(KeyOf(i), "v0"));
  ASSERT_TRUE(store->Apply(1, ++slot, once).ok());
  auto rows = store->Scan(1, "", "", kKeys);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->size(), static_cast<size_t>(kKeys));
  EXPECT_EQ(store->scan_flushes_requested(), 0u) << "one version per key is not obsolete work";

  for (int round = 1; round <= 20; ++round) {
    std::vector<Mutation> overwrite;
    for (int i = 0; i < kKeys; ++i) {
      overwrite.push_back(Mutation::Put(KeyOf(i), "v" + std::to_string(round)));
    }
    ASSERT_TRUE(store->Apply(1, ++slot, overwrite).ok());
  }
  const uint64_t entries_before = store->state_memtable_entries();
  EXPECT_GE(entries_before, uint64_t{21} * kKeys);

  rows = store->Scan(1, "", "", kKeys);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), static_cast<size_t>(kKeys));
  EXPECT_EQ((*rows)[0].value, "v20");
  EXPECT_EQ(store->scan_flushes_requested(), 1u);
  EXPECT_EQ(store->scan_flush_failures(), 0u);

  const Clock::time_point deadline = Clock::now() + seconds(20);
  while (store->state_memtable_entries() >= entries_before && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_LT(store->state_memtable_entries(), entries_before) << "the flush never ran";

  rows = store->Scan(1, "", "", kKeys);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), static_cast<size_t>(kKeys));
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_EQ((*rows)[i].key, KeyOf(i));
    ASSERT_EQ((*rows)[i].value, "v20");
  }
  EXPECT_EQ(store->scan_flushes_requested(), 1u) << "after the flush the scan is cheap again";
}

}  // namespace
}  // namespace tessera::storage
