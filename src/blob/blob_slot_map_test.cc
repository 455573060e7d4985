// Goal: the blob slot map puts each slot's replicas in distinct AZs (or on
// distinct nodes with fewer AZs), spreads slots evenly over nodes, and is
// the same whatever the order of the node list.
#include "blob/blob_slot_map.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "common/limits.h"

namespace tessera::blob {
namespace {

// `per_az[i]` nodes in AZ "az<i>", ids 1.. in order.
std::vector<NodeRef> Nodes(const std::vector<int>& per_az) {
  std::vector<NodeRef> nodes;
  uint32_t id = 1;
  for (size_t az = 0; az < per_az.size(); ++az) {
    for (int i = 0; i < per_az[az]; ++i) nodes.push_back({id++, "az" + std::to_string(az)});
  }
  return nodes;
}

BlobSlotMap BuildOrDie(std::vector<NodeRef> nodes) {
  auto map = BlobSlotMap::Build(std::move(nodes));
  EXPECT_TRUE(map.ok()) << map.status().ToString();
  return std::move(map).value();
}

// Slots held per node.
std::map<uint32_t, size_t> Load(const BlobSlotMap& map) {
  std::map<uint32_t, size_t> load;
  for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
    for (uint32_t node : map.ReplicasOf(slot)) ++load[node];
  }
  return load;
}

void ExpectEvenWithinAz(const BlobSlotMap& map) {
  std::map<std::string, std::pair<size_t, size_t>> min_max;  // per AZ
  for (const auto& [node, n] : Load(map)) {
    auto [it, inserted] = min_max.try_emplace(*map.AzOf(node), n, n);
    it->second.first = std::min(it->second.first, n);
    it->second.second = std::max(it->second.second, n);
  }
  for (const auto& [az, mm] : min_max) EXPECT_LE(mm.second - mm.first, 1u) << az;
}

TEST(BlobSlotMapTest, ThreeAzsOneReplicaPerAz) {
  const BlobSlotMap map = BuildOrDie(Nodes({4, 4, 4}));
  EXPECT_EQ(map.replicas_per_slot(), 3u);
  for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
    const auto& r = map.ReplicasOf(slot);
    ASSERT_EQ(r.size(), 3u);
    std::set<std::string> azs;
    for (uint32_t node : r) azs.insert(*map.AzOf(node));
    EXPECT_EQ(azs.size(), 3u) << slot;
  }
  ExpectEvenWithinAz(map);
  EXPECT_EQ(Load(map).size(), 12u);
}

TEST(BlobSlotMapTest, PairingsVaryAcrossRounds) {
  // Round robin alone would pair node 1 only with nodes 5 and 9.
  const BlobSlotMap map = BuildOrDie(Nodes({4, 4, 4}));
  std::set<uint32_t> partners_of_1;
  for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
    const auto& r = map.ReplicasOf(slot);
    if (std::find(r.begin(), r.end(), 1u) == r.end()) continue;
    for (uint32_t node : r) partners_of_1.insert(node);
  }
  EXPECT_GE(partners_of_1.size(), 9u);  // itself and all 8 nodes of the other AZs
}

TEST(BlobSlotMapTest, MoreThanThreeAzsRotate) {
  const BlobSlotMap map = BuildOrDie(Nodes({2, 2, 2, 2, 2}));
  std::map<std::string, size_t> az_use;
  for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
    std::set<std::string> azs;
    for (uint32_t node : map.ReplicasOf(slot)) azs.insert(*map.AzOf(node));
    EXPECT_EQ(azs.size(), 3u);
    for (const auto& az : azs) ++az_use[az];
  }
  ASSERT_EQ(az_use.size(), 5u);
  for (const auto& [az, n] : az_use) EXPECT_NEAR(static_cast<double>(n), 3.0 * limits::kBlobSlots / 5, 3) << az;
  ExpectEvenWithinAz(map);
}

TEST(BlobSlotMapTest, FewerAzsUseDistinctNodesEvenly) {
  for (const std::vector<int>& shape : {std::vector<int>{5}, {2, 2}, {3, 2}, {1, 1, 0}}) {
    std::vector<NodeRef> nodes = Nodes(shape);
    const BlobSlotMap map = BuildOrDie(nodes);
    const size_t want = std::min<size_t>(3, nodes.size());
    EXPECT_EQ(map.replicas_per_slot(), want);
    for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
      const auto& r = map.ReplicasOf(slot);
      EXPECT_EQ(std::set<uint32_t>(r.begin(), r.end()).size(), want);
    }
    size_t lo = SIZE_MAX, hi = 0;
    for (const auto& [node, n] : Load(map)) {
      lo = std::min(lo, n);
      hi = std::max(hi, n);
    }
    EXPECT_LE(hi - lo, 1u);
  }
}

TEST(BlobSlotMapTest, TwoEqualAzsEverySlotSpansBoth) {
  const BlobSlotMap map = BuildOrDie(Nodes({3, 3}));
  for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
    std::set<std::string> azs;
    for (uint32_t node : map.ReplicasOf(slot)) azs.insert(*map.AzOf(node));
    EXPECT_EQ(azs.size(), 2u);
  }
}

TEST(BlobSlotMapTest, IndependentOfInputOrder) {
  std::vector<NodeRef> nodes = Nodes({3, 4, 2, 3});
  const BlobSlotMap a = BuildOrDie(nodes);
  std::mt19937 rng(42);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(nodes.begin(), nodes.end(), rng);
    const BlobSlotMap b = BuildOrDie(nodes);
    for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
      ASSERT_EQ(a.ReplicasOf(slot), b.ReplicasOf(slot));
    }
  }
}

TEST(BlobSlotMapTest, SlotsOfMatchesReplicasOf) {
  const BlobSlotMap map = BuildOrDie(Nodes({2, 2, 2}));
  size_t total = 0;
  for (const NodeRef& node : map.nodes()) {
    for (uint32_t slot : map.SlotsOf(node.node_id)) {
      const auto& r = map.ReplicasOf(slot);
      EXPECT_NE(std::find(r.begin(), r.end(), node.node_id), r.end());
      ++total;
    }
  }
  EXPECT_EQ(total, 3u * limits::kBlobSlots);
  EXPECT_FALSE(map.AzOf(99).has_value());
}

// Placement decides where existing blobs live: the map a node list gives
// must never change. Pinned: a few slots and a digest of the whole map for
// 4 + 3 + 5 nodes in three AZs, and for 3 + 2 nodes in two.
uint64_t Digest(const BlobSlotMap& map) {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a over every replica id
  for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
    for (uint32_t node : map.ReplicasOf(slot)) {
      hash = (hash ^ node) * 1099511628211ull;
    }
  }
  return hash;
}

TEST(BlobSlotMapTest, PlacementIsPinned) {
  const BlobSlotMap three = BuildOrDie(Nodes({4, 3, 5}));
  EXPECT_EQ(three.ReplicasOf(0), (std::vector<uint32_t>{4, 6, 10}));
  EXPECT_EQ(three.ReplicasOf(1), (std::vector<uint32_t>{1, 7, 11}));
  EXPECT_EQ(three.ReplicasOf(777), (std::vector<uint32_t>{2, 6, 9}));
  EXPECT_EQ(Digest(three), 4546246178952633319ull);
  const BlobSlotMap two = BuildOrDie(Nodes({3, 2}));
  EXPECT_EQ(Digest(two), 748883155948090911ull);
}

TEST(BlobSlotMapTest, RejectsBadNodeLists) {
  EXPECT_EQ(BlobSlotMap::Build({}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(BlobSlotMap::Build({{0, "a"}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(BlobSlotMap::Build({{1, ""}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(BlobSlotMap::Build({{1, "a"}, {1, "b"}}).status().code(), StatusCode::kInvalidArgument);
}


TEST(BlobSlotMapTest, AssignmentsReplaceTheNamedSlotsOnly) {
  const BlobSlotMap base = BuildOrDie(Nodes({2, 2, 2}));  // 1,2 az0; 3,4 az1; 5,6 az2
  EXPECT_EQ(base.version(), 0u);
  pb::BlobSlotAssignments a;
  a.set_version(4);
  pb::BlobSlotReplicas* r = a.add_slots();
  r->set_slot(10);
  for (uint32_t n : {6u, 1u, 4u}) r->add_node_ids(n);
  auto moved = base.WithAssignments(a);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(moved->version(), 4u);
  EXPECT_EQ(moved->ReplicasOf(10), (std::vector<uint32_t>{1, 4, 6}));  // (az, id) order
  for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
    if (slot != 10) {
      ASSERT_EQ(moved->ReplicasOf(slot), base.ReplicasOf(slot)) << slot;
    }
  }
  // Refused: bad slot, unknown node, duplicate node, wrong count, twice.
  const std::vector<std::pair<uint32_t, std::vector<uint32_t>>> bad = {
      {limits::kBlobSlots, {1, 3, 5}}, {1, {1, 3, 99}}, {1, {1, 1, 5}}, {1, {1, 3}}};
  for (const auto& [slot, nodes] : bad) {
    pb::BlobSlotAssignments b;
    pb::BlobSlotReplicas* s = b.add_slots();
    s->set_slot(slot);
    for (uint32_t n : nodes) s->add_node_ids(n);
    EXPECT_EQ(base.WithAssignments(b).status().code(), StatusCode::kInvalidArgument) << slot;
  }
  pb::BlobSlotAssignments twice = a;
  *twice.add_slots() = a.slots(0);
  EXPECT_EQ(base.WithAssignments(twice).status().code(), StatusCode::kInvalidArgument);
}

TEST(BlobSlotMapTest, AddedNodesJoinTheMapAndOnlyAssignedSlotsNameThem) {
  const BlobSlotMap base = BuildOrDie(Nodes({2, 2, 2}));  // 1,2 az0; 3,4 az1; 5,6 az2
  pb::BlobSlotAssignments a;
  a.set_version(2);
  pb::AddedNode* added = a.add_added_nodes();
  added->set_id(7);
  added->mutable_spec()->set_az(base.AzOf(3).value());
  pb::BlobSlotReplicas* r = a.add_slots();
  r->set_slot(3);
  for (uint32_t n : {7u, 1u, 5u}) r->add_node_ids(n);
  auto grown = base.WithAssignments(a);
  ASSERT_TRUE(grown.ok()) << grown.status().ToString();
  EXPECT_EQ(grown->AzOf(7), base.AzOf(3));
  EXPECT_EQ(grown->ReplicasOf(3), (std::vector<uint32_t>{1, 7, 5}));  // (az, id) order
  EXPECT_EQ(grown->SlotsOf(7), (std::vector<uint32_t>{3}));
  for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
    if (slot != 3) {
      ASSERT_EQ(grown->ReplicasOf(slot), base.ReplicasOf(slot)) << slot;
    }
  }
  // Without it in added_nodes, a slot naming node 7 is refused; so is an
  // added node the map has already, or one without an AZ.
  pb::BlobSlotAssignments unknown = a;
  unknown.clear_added_nodes();
  EXPECT_EQ(base.WithAssignments(unknown).status().code(), StatusCode::kInvalidArgument);
  pb::BlobSlotAssignments clash = a;
  clash.mutable_added_nodes(0)->set_id(2);
  EXPECT_EQ(base.WithAssignments(clash).status().code(), StatusCode::kInvalidArgument);
  pb::BlobSlotAssignments no_az = a;
  no_az.mutable_added_nodes(0)->mutable_spec()->clear_az();
  EXPECT_EQ(base.WithAssignments(no_az).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::blob
