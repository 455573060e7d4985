// Goal: the autoadmin publishes the `_s3` partitions' keys as their leaders
// report them, every partition or none, at most once per interval, and
// again the next round after a round that could not.
#include "autoadmin/placement_publisher.h"

#include <gtest/gtest.h>

namespace tessera::autoadmin {
namespace {

void AddGroup(ClusterView& v, uint64_t id, const std::string& table, uint32_t leader, uint64_t keys) {
  GroupView& g = v.groups[id];
  g.descriptor.set_group_id(id);
  g.descriptor.set_table(table);
  g.leader = leader;
  g.state_keys = keys;
}

ClusterView S3View() {
  ClusterView v;
  AddGroup(v, 1002, "_s3", 1, 500);
  AddGroup(v, 1001, "_s3", 2, 0);
  AddGroup(v, 1000, "kv", 3, 9'999);
  return v;
}

TEST(PlacementPublisher, PublishesEveryS3PartitionsKeysByGroup) {
  const auto request = PlacementWeightsOf(S3View());
  ASSERT_TRUE(request.has_value());
  ASSERT_EQ(request->partitions_size(), 2);
  EXPECT_EQ(request->partitions(0).group_id(), 1001u);
  EXPECT_EQ(request->partitions(0).keys(), 0u);
  EXPECT_EQ(request->partitions(1).group_id(), 1002u);
  EXPECT_EQ(request->partitions(1).keys(), 500u);
  EXPECT_EQ(request->autoadmin_epoch(), 0u);
}

TEST(PlacementPublisher, NothingWithoutEveryLeaderOrWithoutS3) {
  ClusterView v = S3View();
  v.groups[1001].leader = 0;
  EXPECT_FALSE(PlacementWeightsOf(v).has_value());
  ClusterView kv_only;
  AddGroup(kv_only, 1000, "kv", 1, 5);
  EXPECT_FALSE(PlacementWeightsOf(kv_only).has_value());
}

TEST(PlacementPublisher, OncePerIntervalAndAgainAfterAFailedRound) {
  PlacementPublisher publisher(60'000);
  const ClusterView v = S3View();
  ASSERT_TRUE(publisher.Due(v, 1'000).has_value());  // never published: due
  // The call failed (not Published): due again next round.
  ASSERT_TRUE(publisher.Due(v, 2'000).has_value());
  publisher.Published(2'000);
  EXPECT_FALSE(publisher.Due(v, 61'999).has_value());
  EXPECT_TRUE(publisher.Due(v, 62'000).has_value());
}

}  // namespace
}  // namespace tessera::autoadmin
