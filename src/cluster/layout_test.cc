// Goal: cluster layouts are parsed, the shipped default is valid, and bad
// layouts are refused with a message naming the problem.
#include "cluster/layout.h"

#include <gtest/gtest.h>

#include "cluster/layout_test_util.h"

namespace tessera::cluster {
namespace {

constexpr const char* kMinimal = testing::kMinimalLayoutText;

TEST(Layout, ShippedDefaultIsValid) {
  auto layout = LoadLayout(std::string(TESSERA_SOURCE_DIR) + "/cluster/local.textproto");
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->nodes_size(), 6);
  EXPECT_EQ(layout->meta_size(), 3);
  EXPECT_NE(DescribeLayout(*layout).find("az2-n1"), std::string::npos);
}

TEST(Layout, ShippedLargeLayoutIsValid) {
  auto layout = LoadLayout(std::string(TESSERA_SOURCE_DIR) + "/cluster/large.textproto");
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->nodes_size(), 12);
  EXPECT_EQ(layout->routers_size(), 2);
}

TEST(Layout, MinimalIsValid) { EXPECT_TRUE(ParseLayout(kMinimal).ok()); }

void ExpectRefused(std::string text, const std::string& from, const std::string& to,
                   const std::string& message_part) {
  text.replace(text.find(from), from.size(), to);
  auto layout = ParseLayout(text);
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.status().message().find(message_part), std::string::npos)
      << layout.status().ToString();
}

// The addresses `experiment run --netns` maps hosts to (198.18.0.0/15)
// load; the neighbouring ranges do not.
TEST(Layout, NetnsRangeIsValid) {
  std::string text = kMinimal;
  const std::string from = "host: \"127.0.0.1\" peer_port: 1003";
  for (const char* host : {"198.18.0.16", "198.19.255.48"}) {
    std::string mapped = text;
    mapped.replace(mapped.find(from), from.size(),
                   "host: \"" + std::string(host) + "\" peer_port: 1003");
    EXPECT_TRUE(ParseLayout(mapped).ok()) << host;
  }
  ExpectRefused(kMinimal, from, "host: \"198.20.0.1\" peer_port: 1003", "not a loopback");
  ExpectRefused(kMinimal, from, "host: \"198.17.0.1\" peer_port: 1003", "not a loopback");
}

TEST(Layout, RefusesBadLayouts) {
  ExpectRefused(kMinimal, "peer_port: 1003", "peer_port: 1001", "used twice");
  ExpectRefused(kMinimal, "host: \"127.0.0.1\" peer_port: 1003", "host: \"10.0.0.1\" peer_port: 1003",
                "not a loopback");
  ExpectRefused(kMinimal, "name: \"b1\" az: \"b\"", "name: \"b1\" az: \"x\"", "unknown AZ");
  ExpectRefused(kMinimal, "name: \"mb\" az: \"b\"", "name: \"mb\" az: \"a\"", "exactly one metadata");
  ExpectRefused(kMinimal, "name: \"b1\"", "name: \"a1\"", "duplicate name");
  ExpectRefused(kMinimal, "azs: [\"a\", \"b\", \"c\"]", "azs: [\"a\", \"b\"]", "three distinct AZs");
  EXPECT_FALSE(ParseLayout("this is { not text format").ok());
}

}  // namespace
}  // namespace tessera::cluster
