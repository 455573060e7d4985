// Goal: placement puts one replica per AZ on the least-loaded node of each
// AZ (ties: lowest id) and spreads a table's partitions across nodes.
#include "meta/placement.h"

#include <gtest/gtest.h>

namespace tessera::meta {
namespace {

const std::vector<NodeInfo> kNodes = {{1, "az1"}, {2, "az1"}, {3, "az2"},
                                      {4, "az2"}, {5, "az3"}, {6, "az3"}};
const std::vector<std::string> kAzs = {"az1", "az2", "az3"};

std::vector<uint32_t> Ids(const std::vector<pb::ReplicaPlacement>& placed) {
  std::vector<uint32_t> ids;
  for (const auto& r : placed) ids.push_back(r.node_id());
  return ids;
}

TEST(Placement, OnePerAzTiesByLowestId) {
  std::map<uint32_t, size_t> load;
  auto placed = PlaceReplicas(kNodes, kAzs, load);
  ASSERT_TRUE(placed.ok());
  EXPECT_EQ(Ids(*placed), (std::vector<uint32_t>{1, 3, 5}));
  for (size_t i = 0; i < kAzs.size(); ++i) EXPECT_EQ((*placed)[i].az(), kAzs[i]);
  EXPECT_EQ(load[1], 1u);
  EXPECT_EQ(load[2], 0u);
}

TEST(Placement, LeastLoadedWins) {
  std::map<uint32_t, size_t> load = {{1, 5}, {2, 3}, {3, 0}, {4, 0}, {5, 2}, {6, 9}};
  auto placed = PlaceReplicas(kNodes, kAzs, load);
  ASSERT_TRUE(placed.ok());
  EXPECT_EQ(Ids(*placed), (std::vector<uint32_t>{2, 3, 5}));
}

TEST(Placement, SuccessivePartitionsAlternate) {
  std::map<uint32_t, size_t> load;
  std::vector<std::vector<uint32_t>> seen;
  for (int i = 0; i < 4; ++i) seen.push_back(Ids(*PlaceReplicas(kNodes, kAzs, load)));
  EXPECT_EQ(seen[0], (std::vector<uint32_t>{1, 3, 5}));
  EXPECT_EQ(seen[1], (std::vector<uint32_t>{2, 4, 6}));
  EXPECT_EQ(seen[2], (std::vector<uint32_t>{1, 3, 5}));
  for (uint32_t id = 1; id <= 6; ++id) EXPECT_EQ(load[id], 2u);
}

TEST(Placement, AzWithoutNodesIsUnavailable) {
  std::map<uint32_t, size_t> load;
  auto placed = PlaceReplicas({{1, "az1"}, {3, "az2"}}, kAzs, load);
  ASSERT_FALSE(placed.ok());
  EXPECT_EQ(placed.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(placed.status().message().find("az3"), std::string::npos);
  EXPECT_TRUE(load.empty() || load[1] == 0);  // nothing counted on failure
}

}  // namespace
}  // namespace tessera::meta
