// Goal: the --netns address mapping is the documented deterministic one,
// the mapped layout is valid and keeps everything but the hosts, and the
// ip/tc commands (build, classify, netem, cut, teardown) and the drop
// program are exactly what the kernel is given; bad settings and names are
// refused.
#include "experiment/netns_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "cluster/layout.h"
#include "experiment/experiment_test_util.h"

namespace tessera::experiment {
namespace {

using Commands = std::vector<NetnsCommand>;

bool Has(const Commands& commands, const NetnsCommand& wanted) {
  return std::find(commands.begin(), commands.end(), wanted) != commands.end();
}

TEST(NetnsPlanTest, MapsEachAzToItsOwnAddressInTheRunsSubnet) {
  auto plan = PlanNetns(TestLayout(), 4242, 300);  // 300 = 256 + 44: 198.19.44.0/24
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->subnet, "198.19.44.0/24");
  EXPECT_EQ(plan->host_address, "198.19.44.1");
  EXPECT_EQ(plan->host_interface, "tsn4242");
  EXPECT_EQ(plan->bridge_ns, "tessera-4242-br");
  ASSERT_EQ(plan->azs.size(), 3u);
  EXPECT_EQ(plan->azs[0].ns, "tessera-4242-az1");
  EXPECT_EQ(plan->azs[0].addresses, std::vector<std::string>{"198.19.44.16"});
  EXPECT_EQ(plan->azs[1].addresses, std::vector<std::string>{"198.19.44.32"});
  EXPECT_EQ(plan->azs[2].addresses, std::vector<std::string>{"198.19.44.48"});
  EXPECT_EQ(plan->Namespaces(), (std::vector<std::string>{"tessera-4242-az1", "tessera-4242-az2",
                                                           "tessera-4242-az3", "tessera-4242-br"}));
}

TEST(NetnsPlanTest, DistinctHostsOfAnAzGetConsecutiveAddresses) {
  pb::ClusterLayout layout = TestLayout();
  layout.mutable_nodes(1)->set_host("127.0.0.2");  // az2-n1
  auto plan = PlanNetns(layout, 7, 0);
  ASSERT_TRUE(plan.ok());
  // az2: the node's 127.0.0.2 first (nodes come first), then meta's 127.0.0.1.
  EXPECT_EQ(plan->azs[1].hosts, (std::vector<std::string>{"127.0.0.2", "127.0.0.1"}));
  EXPECT_EQ(plan->azs[1].addresses, (std::vector<std::string>{"198.18.0.32", "198.18.0.33"}));
  const pb::ClusterLayout mapped = MapHosts(layout, *plan);
  EXPECT_EQ(mapped.nodes(1).host(), "198.18.0.32");
  EXPECT_EQ(mapped.meta(1).host(), "198.18.0.33");
}

TEST(NetnsPlanTest, MappedLayoutIsValidAndKeepsPortsAndNames) {
  auto plan = PlanNetns(TestLayout(), 99, 5);
  ASSERT_TRUE(plan.ok());
  const pb::ClusterLayout mapped = MapHosts(TestLayout(), *plan);
  EXPECT_TRUE(cluster::ValidateLayout(mapped).ok());
  EXPECT_EQ(mapped.routers(0).host(), "198.18.5.16");  // router-1 is in az1
  EXPECT_EQ(mapped.meta(2).host(), "198.18.5.48");
  pb::ClusterLayout hosts_back = mapped;
  for (auto& n : *hosts_back.mutable_nodes()) n.set_host("127.0.0.1");
  for (auto& m : *hosts_back.mutable_meta()) m.set_host("127.0.0.1");
  for (auto& r : *hosts_back.mutable_routers()) r.set_host("127.0.0.1");
  EXPECT_EQ(hosts_back.SerializeAsString(), TestLayout().SerializeAsString());
}

TEST(NetnsPlanTest, RefusesWhatTheMappingCannotHold) {
  pb::ClusterLayout bad_name = TestLayout();
  bad_name.set_azs(0, "az 1");
  EXPECT_EQ(PlanNetns(bad_name, 1, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanNetns(TestLayout(), 1, kNetnsSubnetsMax).status().code(),
            StatusCode::kInvalidArgument);
  pb::ClusterLayout many_hosts = TestLayout();
  for (int i = 0; i < 17; ++i) {
    auto* n = many_hosts.add_nodes();
    n->set_name("az1-x" + std::to_string(i));
    n->set_az("az1");
    n->set_host("127.0.1." + std::to_string(i));
  }
  EXPECT_EQ(PlanNetns(many_hosts, 1, 0).status().code(), StatusCode::kInvalidArgument);
}

TEST(NetnsPlanTest, BuildCommandsWireEveryAzToTheBridgeAndTheHost) {
  auto plan = PlanNetns(TestLayout(), 12, 1);
  ASSERT_TRUE(plan.ok());
  const Commands c = BuildCommands(*plan);
  EXPECT_EQ(c.front(), (NetnsCommand{"ip", "netns", "add", "tessera-12-br"}));
  EXPECT_TRUE(Has(c, {"ip", "-n", "tessera-12-br", "link", "add", "az1", "type", "veth", "peer",
                      "name", "eth0", "netns", "tessera-12-az2"}));
  EXPECT_TRUE(Has(c, {"ip", "-n", "tessera-12-az3", "addr", "add", "198.18.1.48/24", "dev", "eth0"}));
  EXPECT_TRUE(Has(c, {"ip", "link", "add", "tsn12", "type", "veth", "peer", "name", "host", "netns",
                      "tessera-12-br"}));
  EXPECT_TRUE(Has(c, {"ip", "addr", "add", "198.18.1.1/24", "dev", "tsn12"}));
  // Only one command touches the root namespace's addresses: its own veth.
  for (const NetnsCommand& command : c) {
    if (command[1] == "addr") {
      EXPECT_EQ(command.back(), "tsn12");
    }
  }
  const Commands down = TeardownCommands(*plan);
  EXPECT_EQ(down.front(), (NetnsCommand{"ip", "link", "del", "tsn12"}));
  EXPECT_EQ(down.back(), (NetnsCommand{"ip", "netns", "del", "tessera-12-br"}));
  EXPECT_EQ(down.size(), 5u);
}

TEST(NetnsPlanTest, OnlyInterAzTrafficGoesThroughNetem) {
  auto plan = PlanNetns(TestLayout(), 12, 1);
  ASSERT_TRUE(plan.ok());
  const Commands c = ClassifyCommands(*plan);
  const NetnsCommand to_az2 = {"tc", "-n", "tessera-12-az1", "filter", "add", "dev", "eth0",
                               "parent", "1:", "protocol", "ip", "prio", "2", "u32", "match", "ip",
                               "dst", "198.18.1.32/32", "flowid", "1:2"};
  EXPECT_TRUE(Has(c, to_az2));
  NetnsCommand to_self = to_az2;
  to_self[17] = "198.18.1.16/32";  // az1's own address: stays in class 1:1
  EXPECT_FALSE(Has(c, to_self));
  NetnsCommand to_host = to_az2;
  to_host[17] = "198.18.1.1/32";   // the root namespace: not delayed
  EXPECT_FALSE(Has(c, to_host));
  EXPECT_EQ(std::count_if(c.begin(), c.end(), [](const NetnsCommand& x) { return x[3] == "filter"; }),
            6);  // 3 AZs x 2 others

  const Commands netem = NetemCommands(*plan, NetnsShaping{});
  ASSERT_EQ(netem.size(), 3u);
  EXPECT_EQ(netem[0], (NetnsCommand{"tc", "-n", "tessera-12-az1", "qdisc", "add", "dev", "eth0",
                                    "parent", "1:2", "handle", "20:", "netem", "delay", "1.000ms",
                                    "0.200ms"}));
  const Commands lossy = NetemCommands(*plan, NetnsShaping{5, 0, 1.5});
  EXPECT_EQ(std::vector<std::string>(lossy[1].begin() + 12, lossy[1].end()),
            (std::vector<std::string>{"delay", "5.000ms", "loss", "1.500%"}));
  EXPECT_TRUE(NetemCommands(*plan, NetnsShaping{0, 0, 0}).empty());
}

TEST(NetnsPlanTest, WithoutNetemOnlyInterAzTrafficIsQueuedToTheShaper) {
  auto plan = PlanNetns(TestLayout(), 12, 1);
  ASSERT_TRUE(plan.ok());
  const Commands c = QueueShapingCommands(*plan);
  const NetnsCommand to_az2 = {"ip", "netns", "exec", "tessera-12-az1", "iptables", "-w", "-t",
                               "mangle", "-A", "POSTROUTING", "-o", "eth0", "-d",
                               "198.18.1.32/32", "-j", "NFQUEUE", "--queue-num", "0",
                               "--queue-bypass"};
  EXPECT_TRUE(Has(c, to_az2));
  NetnsCommand to_self = to_az2;
  to_self[13] = "198.18.1.16/32";  // az1's own address: not queued
  EXPECT_FALSE(Has(c, to_self));
  NetnsCommand to_host = to_az2;
  to_host[13] = "198.18.1.1/32";   // the root namespace: not queued
  EXPECT_FALSE(Has(c, to_host));
  EXPECT_EQ(c.size(), 6u);  // 3 AZs x 2 others
}

TEST(NetnsPlanTest, CutIsOneDropFilterPerAz) {
  auto plan = PlanNetns(TestLayout(), 12, 1);
  ASSERT_TRUE(plan.ok());
  const NetnsCommand cut = CutCommand(plan->azs[0], {"198.18.1.32", "198.18.1.48"});
  EXPECT_EQ(cut, (NetnsCommand{"tc", "-n", "tessera-12-az1", "filter", "replace", "dev", "eth0",
                               "parent", "1:", "protocol", "all", "prio", "1", "handle", "1", "bpf",
                               "bytecode", DropProgram({"198.18.1.32", "198.18.1.48"}), "da"}));
  EXPECT_EQ(CutCommand(plan->azs[0], {}), ClearCutCommand(plan->azs[0]));
  EXPECT_EQ(ClearCutCommand(plan->azs[0]),
            (NetnsCommand{"tc", "-n", "tessera-12-az1", "filter", "del", "dev", "eth0", "parent",
                          "1:", "prio", "1"}));
}

TEST(NetnsPlanTest, DropProgramShootsOnlyIpv4PacketsToTheCutAddresses) {
  // 198.18.201.33 = 0xC612C921 = 3323119905.
  EXPECT_EQ(DropProgram({"198.18.201.33"}),
            "6,40 0 0 12,21 0 2 2048,32 0 0 30,21 1 0 3323119905,6 0 0 4294967295,6 0 0 2");
  // Two addresses: each jeq jumps over the rest to the final "ret #2".
  EXPECT_EQ(DropProgram({"198.18.0.32", "198.18.0.48"}),
            "7,40 0 0 12,21 0 3 2048,32 0 0 30,21 2 0 3323068448,21 1 0 3323068464,"
            "6 0 0 4294967295,6 0 0 2");
}

TEST(NetnsPlanTest, ReadsTheDropCountOfTheRootQdisc) {
  const std::string out =
      "qdisc htb 1: root refcnt 3 r2q 100000 default 0x1 direct_packets_stat 1 direct_qlen 1000\n"
      " Sent 558 bytes 7 pkt (dropped 17, overlimits 0 requeues 0) \n"
      "qdisc netem 20: parent 1:2 limit 1000 delay 1ms\n"
      " Sent 0 bytes 0 pkt (dropped 3, overlimits 0 requeues 0) \n";
  EXPECT_EQ(ParseDroppedPackets(out), 17u);
  EXPECT_EQ(ParseDroppedPackets("qdisc noqueue 0: root\n"), std::nullopt);
}

TEST(NetnsPlanTest, RecognisesTheNamesOfARun) {
  EXPECT_EQ(RunPidOfNamespace("tessera-123-az1"), 123);
  EXPECT_EQ(RunPidOfNamespace("tessera-123-br"), 123);
  EXPECT_EQ(RunPidOfNamespace("tessera-abc-br"), std::nullopt);
  EXPECT_EQ(RunPidOfNamespace("tessera-123"), std::nullopt);
  EXPECT_EQ(RunPidOfNamespace("other-123-az1"), std::nullopt);
  EXPECT_EQ(RunPidOfInterface("tsn123"), 123);
  EXPECT_EQ(RunPidOfInterface("tsn123x"), std::nullopt);
  EXPECT_EQ(RunPidOfInterface("eth0"), std::nullopt);
}

TEST(NetnsPlanTest, ASubnetUnderAMachineRouteIsInUse) {
  const std::string routes =
      "default via 192.0.2.1 dev eth0\n"
      "198.18.7.0/24 dev tsn5 proto kernel scope link src 198.18.7.1\n"
      "local 198.19.0.9 dev x table local proto kernel scope host src 198.19.0.9\n"
      "198.18.128.0/20 dev vpn0\n";
  EXPECT_TRUE(SubnetInUse(7, routes));
  EXPECT_FALSE(SubnetInUse(8, routes));
  EXPECT_TRUE(SubnetInUse(256, routes));        // 198.19.0.0/24 holds 198.19.0.9
  EXPECT_TRUE(SubnetInUse(128 + 15, routes));   // inside 198.18.128.0/20
  EXPECT_FALSE(SubnetInUse(128 + 16, routes));
  EXPECT_FALSE(SubnetInUse(0, "default via 10.0.0.1 dev eth0\n"));
}

TEST(NetnsPlanTest, SettingsDefaultsAndBounds) {
  NetnsShaping d = EffectiveShaping(pb::NetnsNetwork());
  EXPECT_EQ(d.delay_ms, 1.0);
  EXPECT_EQ(d.jitter_ms, 0.2);
  EXPECT_EQ(d.loss_percent, 0.0);
  pb::NetnsNetwork n;
  n.set_delay_ms(3);
  EXPECT_EQ(EffectiveShaping(n).jitter_ms, 0.0);  // the default jitter goes with the default delay
  EXPECT_TRUE(ValidateNetnsNetwork(n).ok());
  n.set_jitter_ms(4);
  EXPECT_EQ(ValidateNetnsNetwork(n).code(), StatusCode::kInvalidArgument);
  n.set_jitter_ms(1);
  n.set_loss_percent(101);
  EXPECT_EQ(ValidateNetnsNetwork(n).code(), StatusCode::kInvalidArgument);
  n.set_loss_percent(0);
  n.set_delay_ms(-1);
  EXPECT_EQ(ValidateNetnsNetwork(n).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::experiment
