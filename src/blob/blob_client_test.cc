// Goal: against three real blob nodes (RpcServer + BlobService on loopback,
// one per AZ), the BlobClient stores a blob on a quorum, survives one node
// down but not two, reads from the nearest copy and falls back when that
// copy is corrupt, down or slow, and serves exact ranges of an 8 MiB blob.
#include "blob/blob_client.h"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>

#include "blob/blob_file.h"
#include "blob/blob_service.h"
#include "blob/blob_test_util.h"
#include "rpc/fault_injector.h"
#include "rpc/server.h"

namespace tessera::blob {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using testing::TempDir;
using testing::TestData;

const std::string kSecret = "blob-client-test-secret-0123456789";
constexpr uint32_t kRouterId = 201;
constexpr uint32_t kNodes = 3;

// The value of one rendered series, e.g. `name{result="ok"}`; 0 if absent.
uint64_t SeriesValue(const metrics::Registry& registry, const std::string& series) {
  std::istringstream lines(registry.RenderText());
  std::string line;
  while (std::getline(lines, line)) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::stoull(line.substr(series.size() + 1));
    }
  }
  return 0;
}

class BlobClientTest : public ::testing::Test {
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

  void StartNode(uint32_t id, BlobServiceOptions options = {}) {
    options.path = dir_.Sub("node" + std::to_string(id));
    auto service = BlobService::Open(node_registry_, options);
    ASSERT_TRUE(service.ok()) << service.status().ToString();
    rpc::ServerOptions server_options;
    server_options.identity = rpc::Identity{id, "node", kSecret};
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
    client_->Read(id, offset, length, [&p](Result<std::string> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }

  Status Delete(const BlobId& id) {
    std::promise<Status> p;
    client_->Delete(id, [&p](Status s) { p.set_value(s); });
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

TEST_F(BlobClientTest, MaximalBlobRoundTripsWithRanges) {
  const BlobId id = client_->NextBlobId();
  const std::string data = TestData(limits::kBlobBytesMax, 7);
  const Status put = Put(id, data);
  ASSERT_TRUE(put.ok()) << put.ToString();
  WaitIdle();
  for (uint32_t node = 1; node <= kNodes; ++node) {
    auto stored = StoreOf(node).Read(id, 0, UINT64_MAX);
    ASSERT_TRUE(stored.ok()) << node << ": " << stored.status().ToString();
    EXPECT_TRUE(stored->data == data);
  }
  EXPECT_EQ(ClientMetric("tessera_blob_client_third_copy_total{result=\"ok\"}"), 1u);
  auto all = Read(id);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_TRUE(*all == data);
  const uint64_t block = file::kBlockBytes;
  for (const auto& [offset, length] : std::vector<std::pair<uint64_t, uint64_t>>{
           {0, 1}, {block - 3, 7}, {5 * block, 2 * block}, {data.size() - 10, 100}, {data.size(), 5}}) {
    auto r = Read(id, offset, length);
    ASSERT_TRUE(r.ok()) << offset << ": " << r.status().ToString();
    EXPECT_TRUE(*r == data.substr(offset, length)) << offset;
  }
  EXPECT_EQ(Read(id, data.size() + 1, 1).status().code(), StatusCode::kInvalidArgument);
  // Every read went to node 1, in the reader's AZ.
  EXPECT_EQ(StoreOf(1).stats().reads, 6u + 1u /* the check above */);
  EXPECT_EQ(StoreOf(2).stats().reads, 1u);
}

TEST_F(BlobClientTest, PutSucceedsWithOneNodeDown) {
  StopNode(3);
  const BlobId id = client_->NextBlobId();
  ASSERT_TRUE(Put(id, "survives one failure").ok());
  WaitIdle();
  EXPECT_EQ(ClientMetric("tessera_blob_client_third_copy_total{result=\"failed\"}"), 1u);
  auto r = Read(id);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "survives one failure");
}

TEST_F(BlobClientTest, PutFailsWithTwoNodesDown) {
  StopNode(2);
  StopNode(3);
  const Status s = Put(client_->NextBlobId(), "needs a quorum");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  WaitIdle();
  EXPECT_EQ(ClientMetric("tessera_blob_client_requests_total{code=\"Unavailable\",op=\"put\"}"), 1u);
}

TEST_F(BlobClientTest, ReadFallsBackWhenNearestCopyIsCorrupt) {
  const BlobId id = client_->NextBlobId();
  const std::string data = TestData(200'000, 3);
  ASSERT_TRUE(Put(id, data).ok());
  WaitIdle();
  {
    std::fstream f(StoreOf(1).PathOf(id), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(file::DataOffset(0, data.size()) + 100));
    f.put('\x7f' ^ data[100]);
  }
  auto r = Read(id);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(*r == data);
  EXPECT_EQ(StoreOf(1).stats().corruptions, 1u);
  EXPECT_EQ(ClientMetric("tessera_blob_client_read_fallbacks_total"), 1u);
  // A range that avoids the damaged block is still served by node 1.
  auto tail = Read(id, 150'000, 10);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(*tail, data.substr(150'000, 10));
  EXPECT_EQ(ClientMetric("tessera_blob_client_read_fallbacks_total"), 1u);
}

TEST_F(BlobClientTest, ReadFallsBackWhenNearestNodeIsDownOrSlow) {
  const BlobId id = client_->NextBlobId();
  ASSERT_TRUE(Put(id, "three copies").ok());
  WaitIdle();
  // Slow: requests to node 1 are delayed past the read timeout.
  BlobClientOptions options;
  options.read_timeout_ms = 500;
  MakeClient(client_->slot_map(), options);
  ASSERT_TRUE(client_faults_.SetRule(1, rpc::FaultRule{0, 3'000}).ok());
  auto slow = Read(id);
  ASSERT_TRUE(slow.ok()) << slow.status().ToString();
  EXPECT_EQ(*slow, "three copies");
  client_faults_.ClearAll();
  StopNode(1);
  auto down = Read(id);
  ASSERT_TRUE(down.ok()) << down.status().ToString();
  EXPECT_EQ(*down, "three copies");
  EXPECT_EQ(ClientMetric("tessera_blob_client_read_fallbacks_total"), 2u);
}

TEST_F(BlobClientTest, ReadOfMissingBlobIsNotFound) {
  EXPECT_EQ(Read(client_->NextBlobId()).status().code(), StatusCode::kNotFound);
  const BlobId id = client_->NextBlobId();
  ASSERT_TRUE(Put(id, "x").ok());
  WaitIdle();
  StopNode(2);
  StopNode(3);
  ASSERT_TRUE(StoreOf(1).Delete(id).ok());
  // Missing on node 1, unreachable elsewhere: not provably absent.
  EXPECT_EQ(Read(id).status().code(), StatusCode::kUnavailable);
}

TEST_F(BlobClientTest, PutOfOtherBytesUnderAnIdConflicts) {
  const BlobId id = client_->NextBlobId();
  ASSERT_TRUE(Put(id, "first").ok());
  EXPECT_TRUE(Put(id, "first").ok());  // idempotent retry
  EXPECT_EQ(Put(id, "second").code(), StatusCode::kConflict);
  WaitIdle();
}

TEST_F(BlobClientTest, DeleteRemovesEveryCopy) {
  const BlobId id = client_->NextBlobId();
  ASSERT_TRUE(Put(id, "garbage").ok());
  WaitIdle();
  EXPECT_TRUE(Delete(id).ok());
  for (uint32_t node = 1; node <= kNodes; ++node) {
    EXPECT_EQ(StoreOf(node).Read(id, 0, 1).status().code(), StatusCode::kNotFound);
  }
  EXPECT_EQ(Read(id).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Delete(id).ok());  // already gone everywhere
  StopNode(3);
  EXPECT_EQ(Delete(id).code(), StatusCode::kUnavailable);
}

TEST_F(BlobClientTest, ListNodeReturnsItsBlobs) {
  std::vector<BlobId> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(client_->NextBlobId());
    ASSERT_TRUE(Put(ids.back(), TestData(100 + i)).ok());
  }
  WaitIdle();
  std::sort(ids.begin(), ids.end());
  std::promise<Result<BlobClient::ListPage>> p;
  client_->ListNode(2, 0, std::nullopt, 3, [&p](Result<BlobClient::ListPage> r) { p.set_value(std::move(r)); });
  auto page = p.get_future().get();
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->entries.size(), 3u);
  EXPECT_TRUE(page->more);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(page->entries[i].first, ids[i]);
}

TEST_F(BlobClientTest, NextBlobIdTakesSlotsRoundRobin) {
  const BlobId first = client_->NextBlobId();
  for (uint32_t i = 1; i < 10; ++i) {
    const BlobId next = client_->NextBlobId();
    EXPECT_EQ(next.slot, (first.slot + i) % limits::kBlobSlots);
    EXPECT_NE(next.unique, first.unique);
  }
}

TEST_F(BlobClientTest, InflightBoundThrottles) {
  BlobClientOptions options;
  options.inflight_max = 1;
  MakeClient(client_->slot_map(), options);
  // Every request to every node is delayed: the first put stays in flight.
  for (uint32_t node = 1; node <= kNodes; ++node) {
    ASSERT_TRUE(client_faults_.SetRule(node, rpc::FaultRule{0, 300}).ok());
  }
  std::promise<Status> first;
  client_->Put(client_->NextBlobId(), "", "slow", [&first](Status s) { first.set_value(s); });
  EXPECT_EQ(Put(client_->NextBlobId(), "refused").code(), StatusCode::kThrottled);
  EXPECT_EQ(Read(client_->NextBlobId()).status().code(), StatusCode::kThrottled);
  EXPECT_TRUE(first.get_future().get().ok());
  client_faults_.ClearAll();
  WaitIdle();
  EXPECT_TRUE(Put(client_->NextBlobId(), "admitted").ok());
  WaitIdle();
}

// A disk whose fsyncs block while `blocking` is set.
struct Gate {
  std::mutex mu;  // guards blocking
  std::condition_variable cv;
  bool blocking = false;

  Status Pass() {
    std::unique_lock lock(mu);
    cv.wait(lock, [this] { return !blocking; });
    return Status::Ok();
  }
  void Set(bool block) {
    {
      std::lock_guard lock(mu);
      blocking = block;
    }
    cv.notify_all();
  }
};

TEST_F(BlobClientTest, FullNodeQueueAnswersThrottled) {
  // Node 1 restarts with one worker, a queue of one and a blocking disk:
  // of three concurrent puts at most two fit there; the puts still succeed
  // on nodes 2 and 3.
  services_[0]->Stop();
  servers_[0]->Stop();
  auto gate = std::make_shared<Gate>();
  BlobServiceOptions options;
  options.worker_threads = 1;
  options.queue_max = 1;
  options.store.before_sync = [gate] { return gate->Pass(); };
  StartNode(1, options);
  ASSERT_TRUE(pool_->SetPeerAddress(1, "127.0.0.1", servers_[0]->port()).ok());
  gate->Set(true);
  std::vector<std::promise<Status>> puts(3);
  for (auto& p : puts) client_->Put(client_->NextBlobId(), "", "queued", [&p](Status s) { p.set_value(s); });
  for (auto& p : puts) EXPECT_TRUE(p.get_future().get().ok());
  EXPECT_GE(SeriesValue(node_registry_, "tessera_blob_throttled_total"), 1u);
  EXPECT_GE(SeriesValue(node_registry_, "tessera_blob_errors_total{code=\"Throttled\",op=\"put\"}"), 1u);
  gate->Set(false);
  WaitIdle();
  EXPECT_GE(ClientMetric("tessera_blob_client_third_copy_total{result=\"failed\"}"), 1u);
}

}  // namespace
}  // namespace tessera::blob
