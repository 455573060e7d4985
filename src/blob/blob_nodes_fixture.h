// A test fixture of three real blob nodes (RpcServer + BlobService on
// loopback, one per AZ: az1..az3) and a BlobClient in az1 over them, for
// the blob client's tests and for the writers built on it.
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "blob/blob_client.h"
#include "blob/blob_service.h"
#include "blob/blob_test_util.h"
#include "common/metrics.h"
#include "common/metrics_test_util.h"
#include "rpc/channel_pool.h"
#include "rpc/fault_injector.h"
#include "rpc/server.h"

namespace tessera::blob::testing {

namespace asio = boost::asio;
using namespace std::chrono_literals;

inline const std::string kSecret = "blob-client-test-secret-0123456789";
constexpr uint32_t kRouterId = 201;
constexpr uint32_t kNodes = 3;

using metrics::testing::SeriesValue;

class BlobNodesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 4; ++i) threads_.emplace_back([this] { io_.run(); });
    std::vector<NodeRef> refs;
    for (uint32_t id = 1; id <= kNodes; ++id) {
      StartNode(id);
      refs.push_back({id, "az" + std::to_string(id)});
    }
    rpc::ChannelOptions defaults;
    defaults.identity = rpc::Identity{kRouterId, "router", kSecret};
    defaults.connect_timeout_ms = 1000;
    pool_ = std::make_unique<rpc::ChannelPool>(rpc::RpcContext{io_, client_registry_, client_faults_}, defaults);
    for (uint32_t id = 1; id <= kNodes; ++id) {
      ASSERT_TRUE(pool_->SetPeerAddress(id, "127.0.0.1", servers_[id - 1]->port()).ok());
    }
    auto map = BlobSlotMap::Build(refs);
    ASSERT_TRUE(map.ok());
    BlobClientOptions options;
    // Generous: 8 MiB puts and reads on a loaded machine under sanitizers.
    // Tests of slow nodes make their own client.
    options.read_timeout_ms = 30'000;
    options.put_timeout_ms = 30'000;
    options.delete_timeout_ms = 30'000;
    MakeClient(std::move(map).value(), options);
  }

  void TearDown() override {
    for (auto& s : servers_) {
      if (s) s->Stop();
    }
    for (auto& s : services_) {
      if (s) s->Stop();
    }
    pool_.reset();
    work_.reset();
    // Let closing channels finish their handlers (a connect cut off by
    // io_.stop() would leak its channel), then stop.
    for (int i = 0; i < 300 && !io_.stopped(); ++i) std::this_thread::sleep_for(10ms);
    io_.stop();
    for (auto& t : threads_) t.join();
    client_.reset();
    servers_.clear();
    services_.clear();
  }

  void StartNode(uint32_t id, BlobServiceOptions options = {},
                 size_t queue_bytes_max = limits::kRpcServerQueueBytesMax) {
    options.path = dir_.Sub("node" + std::to_string(id));
    auto service = BlobService::Open(node_registry_, options);
    ASSERT_TRUE(service.ok()) << service.status().ToString();
    rpc::ServerOptions server_options;
    server_options.identity = rpc::Identity{id, "node", kSecret};
    server_options.queue_bytes_max = queue_bytes_max;
    auto server = std::make_unique<rpc::RpcServer>(rpc::RpcContext{io_, node_registry_, node_faults_},
                                                   server_options);
    ASSERT_TRUE((*service)->RegisterHandlers(*server).ok());
    ASSERT_TRUE(server->Start().ok());
    if (services_.size() < id) {
      services_.resize(id);
      servers_.resize(id);
    }
    services_[id - 1] = std::move(service).value();
    servers_[id - 1] = std::move(server);
  }

  void MakeClient(BlobSlotMap map, BlobClientOptions options) {
    client_ = std::make_unique<BlobClient>(*pool_, std::move(map), "az1", client_registry_, options);
  }

  void StopNode(uint32_t id) { servers_[id - 1]->Stop(); }

  Status Put(const BlobId& id, std::string data) {
    std::promise<Status> p;
    client_->Put(id, "", std::move(data), [&p](Status s) { p.set_value(s); });
    return p.get_future().get();
  }

  Result<std::string> Read(const BlobId& id, uint64_t offset = 0, uint64_t length = UINT64_MAX) {
    std::promise<Result<std::string>> p;
    client_->Read(id, offset, length, [&p](Result<SharedBytes> r) {
      p.set_value(r.ok() ? Result<std::string>(std::string(r->view())) : Result<std::string>(r.status()));
    });
    return p.get_future().get();
  }

  Result<BlobClient::DeleteOutcome> Delete(const BlobId& id) {
    std::promise<Result<BlobClient::DeleteOutcome>> p;
    client_->Delete(id, [&p](Result<BlobClient::DeleteOutcome> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }

  // Waits until no operation is in flight (the third copy has answered).
  void WaitIdle() {
    for (int i = 0; i < 500 && client_->inflight() > 0; ++i) std::this_thread::sleep_for(10ms);
    ASSERT_EQ(client_->inflight(), 0u);
  }

  BlobStore& StoreOf(uint32_t node) { return services_[node - 1]->store(); }

  uint64_t ClientMetric(const std::string& series) const { return SeriesValue(client_registry_, series); }

  TempDir dir_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::vector<std::thread> threads_;
  metrics::Registry node_registry_;
  metrics::Registry client_registry_;
  rpc::FaultInjector node_faults_;
  rpc::FaultInjector client_faults_;
  std::vector<std::unique_ptr<BlobService>> services_;
  std::vector<std::unique_ptr<rpc::RpcServer>> servers_;
  std::unique_ptr<rpc::ChannelPool> pool_;
  std::unique_ptr<BlobClient> client_;
};

}  // namespace tessera::blob::testing
