// Goal: new buckets land in partitions with probability proportional to
// 1/(1+buckets) / (1+node excess), inside the partition's whole-bucket id
// range, never on an id in use; repeated placement evens out the partitions;
// a seed replays exactly.
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

}  // namespace
}  // namespace tessera::meta
