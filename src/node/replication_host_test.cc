// Goal: ReplicationHost creates groups idempotently, refuses bad
// descriptors, drops (and counts) messages for groups it does not host, and
// re-hosts its groups from their stored descriptors after a reopen.
#include "node/replication_host.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <thread>

#include "common/metrics.h"

namespace tessera::node {
namespace {

pb::PartitionDescriptor Descriptor(uint64_t group, std::vector<uint32_t> nodes) {
  pb::PartitionDescriptor d;
  d.set_table("t");
  d.set_group_id(group);
  for (uint32_t n : nodes) d.add_replicas()->set_node_id(n);
  return d;
}

class ReplicationHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tessera-rh-XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `body` against a host opened on dir_, with io threads, then closes
  // it in the documented order.
  void WithHost(const std::function<void(ReplicationHost&)>& body) {
    boost::asio::io_context io;
    auto work = boost::asio::make_work_guard(io);
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) threads.emplace_back([&io] { io.run(); });
    ReplicationHostOptions options;
    options.self_id = 1;
    options.store.path = dir_ + "/rocksdb";
    options.send_batch = [](uint32_t, std::string) { return Status::Ok(); };
    auto host = ReplicationHost::Open(io, registry_, options);
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    body(**host);
    (*host)->Stop();
    work.reset();
    io.stop();
    for (auto& t : threads) t.join();
  }

  std::string dir_;
  metrics::Registry registry_;
};

TEST_F(ReplicationHostTest, CreatesIdempotentlyAndRestoresAfterReopen) {
  WithHost([](ReplicationHost& host) {
    EXPECT_TRUE(host.CreateGroup(Descriptor(7, {1, 2, 3})).ok());
    const auto first = host.Find(7);
    ASSERT_NE(first, nullptr);
    EXPECT_TRUE(host.CreateGroup(Descriptor(7, {1, 2, 3})).ok());
    EXPECT_EQ(host.Find(7), first);
    EXPECT_TRUE(host.CreateGroup(Descriptor(9, {1})).ok());
    EXPECT_EQ(host.Groups().size(), 2u);

    EXPECT_EQ(host.CreateGroup(Descriptor(0, {1})).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(host.CreateGroup(Descriptor(8, {2, 3})).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(host.CreateGroup(Descriptor(8, {1, 1})).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(host.CreateGroup(Descriptor(8, {})).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(host.Find(8), nullptr);
  });
  WithHost([this](ReplicationHost& host) {
    const std::vector<HostedGroup> groups = host.Groups();
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups[0].descriptor.group_id(), 7u);
    EXPECT_EQ(groups[0].descriptor.replicas_size(), 3);
    EXPECT_EQ(groups[1].descriptor.group_id(), 9u);

    pb::ConsensusBatch batch;
    pb::Message* unknown = batch.add_messages();
    unknown->set_group_id(42);
    unknown->set_to(1);
    host.DeliverBatch(batch);
    EXPECT_NE(registry_.RenderText().find("tessera_consensus_unknown_group_total 1\n"),
              std::string::npos);
  });
}

// The descriptor keys' bytes on disk: "group/" and the group id big-endian,
// so group 0x0102030405060708 is found where earlier versions stored it.
TEST(DescriptorKey, GroupIdIsEightBytesBigEndian) {
  EXPECT_EQ(DescriptorKey(0x0102030405060708), std::string("group/\x01\x02\x03\x04\x05\x06\x07\x08", 14));
  EXPECT_EQ(DescriptorKey(1), std::string("group/\0\0\0\0\0\0\0\x01", 14));
  EXPECT_LT(DescriptorKey(255), DescriptorKey(256));  // byte order is numeric order
}

}  // namespace
}  // namespace tessera::node
