// Goal: a NodeServer serves the blob RPCs from a blob store beside its
// RocksDB directory, and its disk fault knobs fail blob fsyncs too: three
// in-process nodes (one per AZ) behind a router-side BlobClient.
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <future>
#include <thread>

#include "blob/blob_client.h"
#include "cluster/cluster_client.h"
#include "cluster/rpc_access.h"
#include "node/node_server.h"
#include "rpc/channel_pool.h"
#include "rpc/fault_injector.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::node {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

const std::string kSecret = "node-blob-test-secret-0123456789";

class NodeBlobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tessera-nb-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    for (int i = 0; i < 4; ++i) threads_.emplace_back([this] { io_.run(); });
    std::vector<blob::NodeRef> refs;
    for (uint32_t id = 1; id <= 3; ++id) {
      NodeServerOptions options;
      options.node_id = id;
      options.name = "node" + std::to_string(id);
      options.az = "az" + std::to_string(id);
      options.cluster_secret = kSecret;
      std::filesystem::create_directories(dir_ + "/" + options.name);  // as `tessera node` does
      options.store_path = dir_ + "/" + options.name + "/rocksdb";
      auto server = NodeServer::Start(io_, registry_, faults_, options);
      ASSERT_TRUE(server.ok()) << server.status().ToString();
      nodes_.push_back(std::move(server).value());
      refs.push_back({id, options.az});
    }
    rpc::ChannelOptions defaults;
    defaults.identity = rpc::Identity{201, "router", kSecret};
    pool_ = std::make_unique<rpc::ChannelPool>(rpc::RpcContext{io_, registry_, router_faults_}, defaults);
    // Fault injection is the operator's (cluster::NodeAccessPolicy).
    defaults.identity = rpc::Identity{cluster::kCliPeerId, std::string(cluster::kCliRole), kSecret};
    operator_pool_ =
        std::make_unique<rpc::ChannelPool>(rpc::RpcContext{io_, registry_, router_faults_}, defaults);
    for (uint32_t id = 1; id <= 3; ++id) {
      ASSERT_TRUE(pool_->SetPeerAddress(id, "127.0.0.1", nodes_[id - 1]->rpc_port()).ok());
      ASSERT_TRUE(operator_pool_->SetPeerAddress(id, "127.0.0.1", nodes_[id - 1]->rpc_port()).ok());
    }
    auto map = blob::BlobSlotMap::Build(refs);
    ASSERT_TRUE(map.ok());
    client_ = std::make_unique<blob::BlobClient>(*pool_, std::move(map).value(), "az1", registry_);
  }

  void TearDown() override {
    for (auto& n : nodes_) n->Stop();
    pool_.reset();
    operator_pool_.reset();
    work_.reset();
    for (int i = 0; i < 300 && !io_.stopped(); ++i) std::this_thread::sleep_for(10ms);
    io_.stop();
    for (auto& t : threads_) t.join();
    client_.reset();
    nodes_.clear();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  Status Put(const blob::BlobId& id, std::string data) {
    std::promise<Status> p;
    client_->Put(id, "", std::move(data), [&p](Status s) { p.set_value(s); });
    return p.get_future().get();
  }

  // admin.faults on node `id`: fail every synced write, or stop failing.
  void FailWrites(uint32_t id, bool fail) {
    pb::FaultRules rules;
    rules.set_fail_writes(fail);
    std::promise<Result<std::string>> p;
    auto channel = operator_pool_->Get(id);
    ASSERT_TRUE(channel.ok());
    ASSERT_TRUE((*channel)
                    ->Call("admin.faults", rules.SerializeAsString(), 5s,
                           [&p](Result<std::string> r) { p.set_value(std::move(r)); })
                    .ok());
    ASSERT_TRUE(p.get_future().get().ok());
  }

  std::string dir_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::vector<std::thread> threads_;
  metrics::Registry registry_;
  rpc::FaultInjector faults_;
  rpc::FaultInjector router_faults_;
  std::vector<std::unique_ptr<NodeServer>> nodes_;
  std::unique_ptr<rpc::ChannelPool> pool_;           // as a router
  std::unique_ptr<rpc::ChannelPool> operator_pool_;  // as the operator
  std::unique_ptr<blob::BlobClient> client_;
};

TEST_F(NodeBlobTest, BlobsLiveBesideTheRocksDbDirectory) {
  const blob::BlobId id = client_->NextBlobId();
  ASSERT_TRUE(Put(id, "object bytes").ok());
  std::promise<Result<SharedBytes>> read;
  client_->Read(id, 7, 100, [&read](Result<SharedBytes> r) { read.set_value(std::move(r)); });
  auto r = read.get_future().get();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->view(), "bytes");
  for (int i = 0; i < 200 && client_->inflight() > 0; ++i) std::this_thread::sleep_for(10ms);
  const std::string name = id.ToString() + ".blob";
  for (uint32_t node = 1; node <= 3; ++node) {
    const std::string blobs = dir_ + "/node" + std::to_string(node) + "/blobs";
    EXPECT_TRUE(std::filesystem::exists(blobs + "/" + name.substr(2, 2) + "/" + name)) << blobs;
  }
  EXPECT_NE(registry_.RenderText().find("tessera_blob_puts_total 3"), std::string::npos);
}

TEST_F(NodeBlobTest, FailWritesFaultFailsBlobPuts) {
  FailWrites(2, true);
  FailWrites(3, true);
  const Status failed = Put(client_->NextBlobId(), "not durable");
  EXPECT_EQ(failed.code(), StatusCode::kUnavailable) << failed.ToString();
  EXPECT_NE(failed.message().find("IOError"), std::string::npos) << failed.message();
  FailWrites(3, false);
  EXPECT_TRUE(Put(client_->NextBlobId(), "durable on 1 and 3").ok());
}

}  // namespace
}  // namespace tessera::node
