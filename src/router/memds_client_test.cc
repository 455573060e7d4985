// MemdsClient against fake metadata replicas on loopback: lookups batch up
// under load and each gets its own answer; a dead replica is failed over
// and then skipped; with every replica down lookups fail clearly.
#include "router/memds_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <future>
#include <thread>

#include "router/router_test_util.h"
#include "rpc/fault_injector.h"

namespace tessera::router {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr char kSecret[] = "memds-client-test-secret-0123456789";
constexpr uint32_t kRouterId = 200;

uint16_t UnusedPort() {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();
}

// Partition of `key`: "a".."m" in group 1, the rest in group 2.
pb::PartitionDescriptor PartitionOf(const std::string& key) {
  pb::PartitionDescriptor d;
  const bool low = key < "m";
  d.set_group_id(low ? 1 : 2);
  d.set_start_key(low ? "" : "m");
  d.set_end_key(low ? "m" : "");
  return d;
}

class MemdsClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_.emplace(asio::make_work_guard(io_));
    for (int i = 0; i < 4; ++i) threads_.emplace_back([this] { io_.run(); });
    rpc::ChannelOptions defaults;
    defaults.identity = rpc::Identity{kRouterId, "router", kSecret};
    defaults.connect_timeout_ms = 500;
    pool_ = std::make_unique<rpc::ChannelPool>(rpc::RpcContext{io_, registry_, faults_}, defaults);
  }

  // The fake servers stop while the io threads run (RpcServer::Stop waits
  // for them); the client and the pool its lookups use go only after the
  // io threads stopped, as MemdsClient's contract asks.
  void TearDown() override {
    servers_.clear();
    work_.reset();
    io_.stop();
    for (std::thread& t : threads_) t.join();
    client_.reset();
    pool_.reset();
  }

  // A fake replica `id` answering each lookup after `delay` (per call).
  void StartMeta(uint32_t id, std::chrono::milliseconds delay) {
    auto handler = testing::LookupBatchHandler(
        [this](const pb::LookupRequest& lookup) -> Result<pb::PartitionDescriptor> {
          served_.fetch_add(1);
          if (lookup.table() != "kv") return Status::NotFound("no table " + lookup.table());
          return PartitionOf(lookup.key());
        });
    auto delayed = [handler, delay](const rpc::PeerInfo& peer, pb::Envelope& request,
                                    rpc::Responder responder) {
      std::this_thread::sleep_for(delay);
      handler(peer, request, std::move(responder));
    };
    servers_.push_back(testing::StartFakeServer(rpc::RpcContext{io_, server_registry_, faults_}, id,
                                                "meta", kSecret, {"meta.lookup_batch"}, delayed));
    ASSERT_TRUE(pool_->SetPeerAddress(id, "127.0.0.1", servers_.back()->port()).ok());
  }

  void AddDeadMeta(uint32_t id) { ASSERT_TRUE(pool_->SetPeerAddress(id, "127.0.0.1", UnusedPort()).ok()); }

  void MakeClient(std::vector<uint32_t> meta_ids, std::chrono::microseconds refresh_linger = 0us) {
    client_ = std::make_unique<MemdsClient>(io_, *pool_, std::move(meta_ids), 1'000, refresh_linger,
                                            registry_);
  }

  Result<pb::PartitionDescriptor> LookupNow(const std::string& table, const std::string& key) {
    std::promise<Result<pb::PartitionDescriptor>> answer;
    client_->Lookup(table, key, LookupPriority::kRequestWaits,
                    [&answer](Result<pb::PartitionDescriptor> r) { answer.set_value(std::move(r)); });
    return answer.get_future().get();
  }

  uint64_t Batches() const { return testing::SeriesValue(registry_, "tessera_router_memds_batches_total"); }

  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;
  metrics::Registry registry_;
  metrics::Registry server_registry_;
  rpc::FaultInjector faults_{kRouterId};
  std::unique_ptr<rpc::ChannelPool> pool_;
  std::vector<std::unique_ptr<rpc::RpcServer>> servers_;
  std::unique_ptr<MemdsClient> client_;
  std::atomic<int> served_{0};
};

TEST_F(MemdsClientTest, LookupsBatchUnderLoadAndEachGetsItsOwnAnswer) {
  StartMeta(101, 20ms);
  MakeClient({101});
  constexpr int kLookups = 2'000;
  std::vector<std::promise<Result<pb::PartitionDescriptor>>> answers(kLookups);
  for (int i = 0; i < kLookups; ++i) {
    const std::string table = i % 100 == 7 ? "missing" : "kv";
    const std::string key(1, static_cast<char>('a' + i % 26));
    client_->Lookup(table, key, LookupPriority::kRequestWaits, [&answers, i](Result<pb::PartitionDescriptor> r) {
      answers[static_cast<size_t>(i)].set_value(std::move(r));
    });
  }
  for (int i = 0; i < kLookups; ++i) {
    Result<pb::PartitionDescriptor> r = answers[static_cast<size_t>(i)].get_future().get();
    if (i % 100 == 7) {
      EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << i;
      continue;
    }
    ASSERT_TRUE(r.ok()) << i << ": " << r.status().ToString();
    EXPECT_EQ(r->group_id(), PartitionOf(std::string(1, static_cast<char>('a' + i % 26))).group_id()) << i;
  }
  // Every lookup reached the replica (the MemDS rule counts lookups), in
  // far fewer calls: at most 4 in flight while 2,000 arrive at once.
  EXPECT_EQ(served_.load(), kLookups);
  EXPECT_GE(Batches(), static_cast<uint64_t>(kLookups) / limits::kRouterMemdsBatchLookupsMax);
  EXPECT_LE(Batches(), 64u);
}

// Goal: refreshes (nobody waits for them) never leave on their own while a
// batch is in flight; a lookup a request waits for leaves at once and takes
// the waiting refreshes along. Every lookup is still answered.
TEST_F(MemdsClientTest, RefreshesRideWithTheNextBatch) {
  StartMeta(101, 200ms);
  MakeClient({101});
  std::vector<std::promise<Result<pb::PartitionDescriptor>>> answers(12);
  auto lookup = [&](size_t i, LookupPriority priority) {
    client_->Lookup("kv", "k", priority, [&answers, i](Result<pb::PartitionDescriptor> r) {
      answers[i].set_value(std::move(r));
    });
  };
  lookup(0, LookupPriority::kRefresh);  // nothing in flight: leaves at once
  EXPECT_EQ(Batches(), 1u);
  for (size_t i = 1; i <= 10; ++i) lookup(i, LookupPriority::kRefresh);
  EXPECT_EQ(Batches(), 1u) << "refreshes wait for the batch in flight";
  lookup(11, LookupPriority::kRequestWaits);
  EXPECT_EQ(Batches(), 2u) << "a waited-for lookup leaves at once, with the refreshes";
  for (auto& answer : answers) {
    Result<pb::PartitionDescriptor> r = answer.get_future().get();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  EXPECT_EQ(Batches(), 2u);
  EXPECT_EQ(served_.load(), 12);
}

// Goal: with a linger, refreshes at a quiet router (nothing in flight) wait
// for each other and leave together once the oldest has waited the linger;
// a waited-for lookup still leaves at once and takes them along.
TEST_F(MemdsClientTest, RefreshesLingerToShareOneCall) {
  StartMeta(101, 0ms);
  MakeClient({101}, 80ms);
  constexpr size_t kRefreshes = 8;
  std::vector<std::promise<Result<pb::PartitionDescriptor>>> answers(kRefreshes + 1);
  auto lookup = [&](size_t i, LookupPriority priority) {
    client_->Lookup("kv", "k", priority, [&answers, i](Result<pb::PartitionDescriptor> r) {
      answers[i].set_value(std::move(r));
    });
  };
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < kRefreshes; ++i) lookup(i, LookupPriority::kRefresh);
  EXPECT_EQ(Batches(), 0u) << "refreshes linger";
  for (size_t i = 0; i < kRefreshes; ++i) {
    Result<pb::PartitionDescriptor> r = answers[i].get_future().get();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, 80ms);
  EXPECT_EQ(Batches(), 1u) << "all refreshes shared one call";
  EXPECT_EQ(served_.load(), static_cast<int>(kRefreshes));

  lookup(kRefreshes, LookupPriority::kRefresh);
  Result<pb::PartitionDescriptor> miss = LookupNow("kv", "m");
  ASSERT_TRUE(miss.ok()) << miss.status().ToString();
  EXPECT_EQ(Batches(), 2u) << "the waited-for lookup took the new refresh along";
  ASSERT_TRUE(answers[kRefreshes].get_future().get().ok());
  EXPECT_EQ(served_.load(), static_cast<int>(kRefreshes) + 2);
}

TEST_F(MemdsClientTest, AnIdleClientSendsEachLookupAlone) {
  StartMeta(101, 0ms);
  MakeClient({101});
  for (int i = 0; i < 10; ++i) {
    Result<pb::PartitionDescriptor> r = LookupNow("kv", "z");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->group_id(), 2u);
  }
  EXPECT_EQ(Batches(), 10u);
}

TEST_F(MemdsClientTest, ADeadReplicaIsFailedOverThenSkipped) {
  AddDeadMeta(102);
  StartMeta(101, 0ms);
  MakeClient({102, 101});  // the first batch starts at the dead one
  for (int i = 0; i < 20; ++i) {
    Result<pb::PartitionDescriptor> r = LookupNow("kv", "b");
    ASSERT_TRUE(r.ok()) << i << ": " << r.status().ToString();
  }
  // One failed call to the dead replica, then it is skipped as first choice
  // (without that, every other batch would try it first: 30 calls).
  EXPECT_LE(Batches(), 22u);
  EXPECT_EQ(served_.load(), 20);
}

TEST_F(MemdsClientTest, EveryReplicaDownFailsEachLookupClearly) {
  AddDeadMeta(101);
  AddDeadMeta(102);
  MakeClient({101, 102});
  Result<pb::PartitionDescriptor> r = LookupNow("kv", "a");
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("metadata service unavailable"), std::string::npos)
      << r.status().ToString();
}

}  // namespace
}  // namespace tessera::router
