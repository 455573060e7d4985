// Nodes added beyond the layout: ids, fit and idempotence (added_nodes.h),
// the process table with them, and the operator's file.
#include "cluster/added_nodes.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cluster/layout.h"
#include "cluster/layout_test_util.h"
#include "cluster/process_table.h"

namespace tessera::cluster {
namespace {

pb::ClusterLayout Minimal() { return ParseLayout(testing::kMinimalLayoutText).value(); }

pb::NodeSpec Spec(const std::string& name, const std::string& az, uint32_t peer_port, uint32_t http_port) {
  pb::NodeSpec spec;
  spec.set_name(name);
  spec.set_az(az);
  spec.set_host("127.0.0.1");
  spec.set_peer_port(peer_port);
  spec.set_http_port(http_port);
  return spec;
}

TEST(AddedNodes, IdsContinueTheLayoutsAndAddingAgainIsIdempotent) {
  const pb::ClusterLayout layout = Minimal();  // nodes 1..3
  AddedNodeList added;
  auto first = NextAddedNode(layout, added, Spec("a2", "a", 2001, 2002));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->id(), 4u);
  *added.Add() = *first;
  auto second = NextAddedNode(layout, added, Spec("b2", "b", 2003, 2004));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->id(), 5u);
  auto again = NextAddedNode(layout, added, Spec("a2", "a", 2001, 2002));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->id(), 4u);
}

TEST(AddedNodes, RefusesWhatDoesNotFit) {
  const pb::ClusterLayout layout = Minimal();
  AddedNodeList added;
  *added.Add() = NextAddedNode(layout, added, Spec("a2", "a", 2001, 2002)).value();
  const struct {
    pb::NodeSpec spec;
    const char* why;
  } bad[] = {
      {Spec("a1", "a", 2005, 2006), "duplicate name a1"},           // a layout node's name
      {Spec("a2", "b", 2001, 2002), "was added already"},          // same name, other spec
      {Spec("x", "z", 2005, 2006), "unknown AZ 'z'"},
      {Spec("x", "a", 1203, 2006), "port 1203 used twice"},         // the router's S3 port
      {Spec("x", "a", 2001, 2006), "port 2001 used twice"},         // an added node's
      {Spec("", "a", 2005, 2006), "without a name"},
      {Spec("x", "a", 0, 2006), "invalid port"},
  };
  for (const auto& b : bad) {
    auto r = NextAddedNode(layout, added, b.spec);
    ASSERT_FALSE(r.ok()) << b.why;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(b.why), std::string::npos) << r.status().message();
  }
  pb::NodeSpec off_loopback = Spec("x", "a", 2005, 2006);
  off_loopback.set_host("10.0.0.1");
  EXPECT_FALSE(NextAddedNode(layout, added, off_loopback).ok());
}

TEST(AddedNodes, RefusesIdsThatDoNotContinueTheLayouts) {
  const pb::ClusterLayout layout = Minimal();
  AddedNodeList added;
  pb::AddedNode* gap = added.Add();
  gap->set_id(5);  // 4 is next
  *gap->mutable_spec() = Spec("a2", "a", 2001, 2002);
  EXPECT_EQ(WithAddedNodes(layout, added).status().code(), StatusCode::kInvalidArgument);
}

TEST(AddedNodes, TableHasThemAfterTheLayoutsNodesMarkedAdded) {
  const pb::ClusterLayout layout = Minimal();
  pb::AddedNodes nodes;
  *nodes.add_nodes() = NextAddedNode(layout, nodes.nodes(), Spec("c2", "c", 2001, 2002)).value();
  const ProcessTable table(layout, nodes);
  const auto added = table.ByName("c2");
  ASSERT_TRUE(added.has_value());
  EXPECT_EQ(added->id, 4u);
  EXPECT_EQ(added->role, ProcessRole::kNode);
  EXPECT_TRUE(added->added);
  EXPECT_EQ(table.OfRole(ProcessRole::kNode).size(), 4u);
  EXPECT_EQ(table.LayoutNodes().size(), 3u);
  for (const ProcessEntry& e : table.LayoutNodes()) EXPECT_FALSE(e.added);
}

TEST(AddedNodes, FileRoundTripsAndIsCheckedAgainstTheLayout) {
  const std::string dir = ::testing::TempDir() + "/added_nodes_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const pb::ClusterLayout layout = Minimal();
  auto none = LoadAddedNodes(dir);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->nodes_size(), 0);
  pb::AddedNodes nodes;
  *nodes.add_nodes() = NextAddedNode(layout, nodes.nodes(), Spec("c2", "c", 2001, 2002)).value();
  ASSERT_TRUE(SaveAddedNodes(dir, nodes).ok());
  auto table = TableWithAddedNodes(layout, dir);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_TRUE(table->ByName("c2").has_value());
  // A file that clashes with the layout (edited by hand) is refused with its name.
  nodes.mutable_nodes(0)->mutable_spec()->set_name("a1");
  ASSERT_TRUE(SaveAddedNodes(dir, nodes).ok());
  auto clash = TableWithAddedNodes(layout, dir);
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.status().message().find(kAddedNodesFile), std::string::npos);
  std::ofstream(dir + "/" + kAddedNodesFile) << "not { a valid";
  EXPECT_EQ(LoadAddedNodes(dir).status().code(), StatusCode::kInvalidArgument);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera::cluster
