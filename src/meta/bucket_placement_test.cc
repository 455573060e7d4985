// Goal: new buckets land in partitions with probability proportional to
// 1/(1+keys+buckets) / (1+node excess), keys as the autoadmin published
// them while fresh and complete (else bucket counts alone), inside the
// partition's whole-bucket id range, never on an id in use; repeated
// placement evens out the partitions; a seed replays exactly.
#include "meta/bucket_placement.h"

#include <gtest/gtest.h>

#include <set>

#include "meta/registry_keys.h"

namespace tessera::meta {
namespace {

// The S3 table of `n` even partitions, replicas (1,3,5) / (2,4,6) alternating.
std::vector<pb::PartitionDescriptor> EvenTable(uint32_t n) {
  const auto points = S3TableSplitPoints(n);
  std::vector<pb::PartitionDescriptor> table;
  for (uint32_t i = 0; i < n; ++i) {
    pb::PartitionDescriptor p;
    p.set_table("_s3");
    p.set_start_key(i == 0 ? "" : points[i - 1]);
    p.set_end_key(i + 1 < n ? points[i] : "");
    for (uint32_t node : {1u, 3u, 5u}) p.add_replicas()->set_node_id(node + i % 2);
    p.set_group_id(1000 + i);
    table.push_back(p);
  }
  return table;
}

size_t IndexOf(const std::vector<BucketPartition>& parts, uint64_t id) {
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].first_id <= id && id <= parts[i].last_id) return i;
  }
  ADD_FAILURE() << "id " << id << " in no partition";
  return 0;
}

TEST(BucketPlacement, PartitionsOfCountBucketsPerRange) {
  const auto parts = BucketPartitionsOf(EvenTable(4), {1, 2, 1ull << 62, UINT64_MAX});
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0].first_id, 1u);
  EXPECT_EQ(parts[0].last_id, (1ull << 62) - 1);
  EXPECT_EQ(parts[3].last_id, UINT64_MAX);
  EXPECT_EQ(parts[0].buckets, 2u);
  EXPECT_EQ(parts[1].buckets, 1u);
  EXPECT_EQ(parts[2].buckets, 0u);
  EXPECT_EQ(parts[3].buckets, 1u);
  EXPECT_EQ(parts[1].nodes, (std::vector<uint32_t>{2, 4, 6}));
}

TEST(BucketPlacement, WeightsFavourFewerBucketsAndLessLoadedNodes) {
  std::vector<BucketPartition> parts(4);
  for (auto& p : parts) p.nodes = {1, 2, 3};
  parts[1].buckets = 1;
  parts[2].buckets = 3;
  auto w = PlacementWeights(parts);
  EXPECT_DOUBLE_EQ(w[0], 1.0);
  EXPECT_DOUBLE_EQ(w[1], 0.5);
  EXPECT_DOUBLE_EQ(w[2], 0.25);
  EXPECT_DOUBLE_EQ(w[3], 1.0);
  // Node 9 hosts two partitions where every other node hosts one: excess 1
  // for both of its partitions, whatever their bucket counts.
  parts[0].nodes = {9, 2, 3};
  parts[1].nodes = {4, 5, 6};
  parts[2].nodes = {7, 8, 10};
  parts[3].nodes = {9, 11, 12};
  w = PlacementWeights(parts);
  EXPECT_DOUBLE_EQ(w[0], 0.5);
  EXPECT_DOUBLE_EQ(w[1], 0.5);
  EXPECT_DOUBLE_EQ(w[2], 0.25);
  EXPECT_DOUBLE_EQ(w[3], 0.5);
}

TEST(BucketPlacement, DistributionFollowsTheWeights) {
  auto parts = BucketPartitionsOf(EvenTable(4), {});
  parts[1].buckets = 1;  // weight 1/2
  parts[2].buckets = 3;  // weight 1/4
  std::mt19937_64 rng(42);
  std::vector<int> hits(4, 0);
  constexpr int kDraws = 40'000;
  for (int i = 0; i < kDraws; ++i) {
    auto id = PlaceBucket(parts, [](uint64_t) { return false; }, rng);
    ASSERT_TRUE(id.ok());
    ++hits[IndexOf(parts, *id)];
  }
  const double total = 1 + 0.5 + 0.25 + 1;
  const double expected[] = {1 / total, 0.5 / total, 0.25 / total, 1 / total};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(hits[i] / double(kDraws), expected[i], 0.01) << "partition " << i;
  }
}

TEST(BucketPlacement, RepeatedPlacementEvensOutPartitions) {
  const auto table = EvenTable(8);
  std::vector<uint64_t> ids;
  std::set<uint64_t> used;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 800; ++i) {
    auto parts = BucketPartitionsOf(table, ids);
    auto id = PlaceBucket(parts, [&](uint64_t v) { return used.count(v) > 0; }, rng);
    ASSERT_TRUE(id.ok());
    ASSERT_TRUE(used.insert(*id).second);
    ids.push_back(*id);
  }
  for (const BucketPartition& p : BucketPartitionsOf(table, ids)) {
    EXPECT_GE(p.buckets, 80u);
    EXPECT_LE(p.buckets, 120u);
  }
}

TEST(BucketPlacement, SkipsIdsInUseAndGivesUp) {
  std::vector<BucketPartition> parts(1);
  parts[0].first_id = 10;
  parts[0].last_id = 11;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 50; ++i) {
    auto id = PlaceBucket(parts, [](uint64_t v) { return v == 10; }, rng);
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(*id, 11u);
  }
  auto none = PlaceBucket(parts, [](uint64_t) { return true; }, rng);
  EXPECT_EQ(none.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(PlaceBucket({}, [](uint64_t) { return false; }, rng).status().code(),
            StatusCode::kUnavailable);
}

TEST(BucketPlacement, SeedReplaysExactly) {
  const auto parts = BucketPartitionsOf(EvenTable(8), {});
  std::mt19937_64 a(123), b(123);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(*PlaceBucket(parts, [](uint64_t) { return false; }, a),
              *PlaceBucket(parts, [](uint64_t) { return false; }, b));
  }
}

pb::PlacementWeights Published(uint64_t written_unix_ms, const std::vector<uint64_t>& keys) {
  pb::PlacementWeights w;
  w.set_written_unix_ms(written_unix_ms);
  for (size_t i = 0; i < keys.size(); ++i) {
    pb::PartitionKeys* p = w.add_partitions();
    p->set_group_id(1000 + i);
    p->set_keys(keys[i]);
  }
  return w;
}

TEST(BucketPlacement, PublishedKeysAreUsedOnlyFreshAndComplete) {
  auto parts = BucketPartitionsOf(EvenTable(4), {});
  ASSERT_EQ(parts[2].group_id, 1002u);
  const auto fresh = Published(100'000, {5, 0, 7, 9});
  EXPECT_TRUE(UsePublishedKeys(fresh, 100'000 + 60'000, 60'000, parts));
  EXPECT_EQ(parts[0].keys, 5u);
  EXPECT_EQ(parts[3].keys, 9u);
  // A record from a meta leader whose clock ran ahead is fresh.
  parts = BucketPartitionsOf(EvenTable(4), {});
  EXPECT_TRUE(UsePublishedKeys(fresh, 90'000, 60'000, parts));
  EXPECT_EQ(parts[2].keys, 7u);
  // Too old, never written, or a partition (a split's child) not named:
  // nothing is set, bucket counts decide.
  for (const auto& [record, now] : std::vector<std::pair<pb::PlacementWeights, uint64_t>>{
           {fresh, 100'000 + 60'001}, {pb::PlacementWeights(), 1}, {Published(100'000, {5, 0, 7}), 100'000}}) {
    parts = BucketPartitionsOf(EvenTable(4), {});
    EXPECT_FALSE(UsePublishedKeys(record, now, 60'000, parts));
    for (const BucketPartition& p : parts) EXPECT_EQ(p.keys, 0u);
  }
}

// The rule: emptier partitions are more likely to receive new
// buckets. One partition holding 2,000 keys, one 200, two none.
TEST(BucketPlacement, KeysBiasPlacementTowardsEmptierPartitions) {
  auto parts = BucketPartitionsOf(EvenTable(4), {});
  ASSERT_TRUE(UsePublishedKeys(Published(1, {2'000, 200, 0, 0}), 1, 1'000, parts));
  const auto w = PlacementWeights(parts);
  EXPECT_DOUBLE_EQ(w[0], 1.0 / 2'001);
  EXPECT_DOUBLE_EQ(w[1], 1.0 / 201);
  EXPECT_DOUBLE_EQ(w[2], 1.0);
  std::mt19937_64 rng(2026);
  std::vector<int> hits(4, 0);
  for (int i = 0; i < 10'000; ++i) {
    auto id = PlaceBucket(parts, [](uint64_t) { return false; }, rng);
    ASSERT_TRUE(id.ok());
    ++hits[IndexOf(parts, *id)];
  }
  EXPECT_LT(hits[0], 20);             // expected about 2.5
  EXPECT_LT(hits[1], 60);             // about 25
  EXPECT_GT(hits[2], 4'700);          // about 4,986 each
  EXPECT_GT(hits[3], 4'700);
  EXPECT_LT(hits[0], hits[1]);
}

// Buckets placed since the last publication count as keys, so a burst of
// new (empty) buckets spreads over the empty partitions instead of piling
// into one; with no keys at all the weights are the bucket counts' alone.
TEST(BucketPlacement, NewBucketsSpreadBetweenPublications) {
  const auto table = EvenTable(4);
  const auto published = Published(1, {5'000, 0, 0, 0});
  std::vector<uint64_t> ids;
  std::set<uint64_t> used;
  std::mt19937_64 rng(9);
  for (int i = 0; i < 300; ++i) {
    auto parts = BucketPartitionsOf(table, ids);
    ASSERT_TRUE(UsePublishedKeys(published, 1, 1'000, parts));
    auto id = PlaceBucket(parts, [&](uint64_t v) { return used.count(v) > 0; }, rng);
    ASSERT_TRUE(id.ok());
    used.insert(*id);
    ids.push_back(*id);
  }
  const auto parts = BucketPartitionsOf(table, ids);
  EXPECT_LE(parts[0].buckets, 3u);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_GE(parts[i].buckets, 80u) << i;
    EXPECT_LE(parts[i].buckets, 120u) << i;
  }
}

}  // namespace
}  // namespace tessera::meta
