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
#include "blob/blob_nodes_fixture.h"
#include "blob/blob_test_util.h"
#include "blob/read_response.h"
#include "rpc/fault_injector.h"
#include "rpc/server.h"

namespace tessera::blob {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using testing::TempDir;
using testing::TestData;

using testing::kNodes;
using testing::SeriesValue;
using BlobClientTest = testing::BlobNodesTest;

TEST_F(BlobClientTest, MaximalBlobRoundTripsWithRanges) {
  const BlobId id = client_->NextBlobId();
  const std::string data = TestData(limits::kBlobBytesMax, 7);
  const Status put = Put(id, data);
  ASSERT_TRUE(put.ok()) << put.ToString();
  WaitIdle();
  for (uint32_t node = 1; node <= kNodes; ++node) {
    auto stored = StoreOf(node).Read(id, 0, UINT64_MAX);
    ASSERT_TRUE(stored.ok()) << node << ": " << stored.status().ToString();
    EXPECT_TRUE(stored->data.view() == data);
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
    f.seekp(static_cast<std::streamoff>(file::DataOffset(file::kVersion, 0, data.size()) + 100));
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

// Goal: a reply whose frame is intact but whose data fails the response's
// crc32c is refused and the next replica read, for a small reply and for a
// large one (whose data CRC the client derives from the frame's checksum
// instead of reading the data again).
TEST_F(BlobClientTest, ReadRefusesDataThatFailsTheResponseCrc) {
  rpc::RpcServer liar(rpc::RpcContext{io_, node_registry_, node_faults_},
                      rpc::ServerOptions{.identity = rpc::Identity{1, "node", testing::kSecret}});
  ASSERT_TRUE(liar
                  .RegisterHandler("blob.read",
                                   [this](const rpc::PeerInfo&, const pb::Envelope& request,
                                          rpc::Responder responder) {
                                     pb::BlobReadRequest read;
                                     ASSERT_TRUE(read.ParseFromString(request.payload()));
                                     auto id = BlobId::Parse(read.blob_id());
                                     ASSERT_TRUE(id.ok());
                                     auto copy = StoreOf(1).Read(*id, read.offset(), read.length());
                                     ASSERT_TRUE(copy.ok());
                                     const uint32_t true_crc = copy->crc32c;
                                     copy->crc32c ^= 1;  // the response lies; the frame holds
                                     rpc::SplitPayload reply = EncodeReadResponse(std::move(copy).value());
                                     reply.tail_crc32c = true_crc;
                                     responder.Reply(std::move(reply));
                                   })
                  .ok());
  std::vector<std::pair<BlobId, std::string>> blobs;
  for (size_t size : {size_t{1000}, size_t{3} << 20}) {
    blobs.emplace_back(client_->NextBlobId(), TestData(size, size));
    ASSERT_TRUE(Put(blobs.back().first, blobs.back().second).ok());
  }
  WaitIdle();
  ASSERT_TRUE(liar.Start().ok());
  ASSERT_TRUE(pool_->SetPeerAddress(1, "127.0.0.1", liar.port()).ok());
  size_t fallbacks = 0;
  for (const auto& [id, data] : blobs) {
    const size_t size = data.size();
    auto r = Read(id);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(*r == data) << size;
    EXPECT_EQ(ClientMetric("tessera_blob_client_read_fallbacks_total"), ++fallbacks) << size;
  }
  liar.Stop();
}

TEST_F(BlobClientTest, ReadFallsBackWhenNearestNodeIsDownOrSlow) {
  const BlobId id = client_->NextBlobId();
  ASSERT_TRUE(Put(id, "three copies").ok());
  WaitIdle();
  // Slow: requests to node 1 are delayed past the read timeout.
  BlobClientOptions options;
  options.read_timeout_ms = 500;
  MakeClient(*client_->slot_map(), options);
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

// Goal: a delete removes every copy and says how many it removed; a
// replica that is down, or that the client has no channel to, fails the
// delete (a GC record stays) instead of counting as "already deleted".
TEST_F(BlobClientTest, DeleteRemovesEveryCopy) {
  const BlobId id = client_->NextBlobId();
  ASSERT_TRUE(Put(id, "garbage").ok());
  WaitIdle();
  ASSERT_TRUE(StoreOf(2).Delete(id).ok());  // one replica lost its copy already
  auto first = Delete(id);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->copies_removed, 2u);
  EXPECT_EQ(first->copies_absent, 1u);
  for (uint32_t node = 1; node <= kNodes; ++node) {
    EXPECT_EQ(StoreOf(node).Read(id, 0, 1).status().code(), StatusCode::kNotFound);
  }
  EXPECT_EQ(Read(id).status().code(), StatusCode::kNotFound);
  auto again = Delete(id);  // already gone everywhere
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->copies_removed, 0u);
  EXPECT_EQ(again->copies_absent, kNodes);
  StopNode(3);
  EXPECT_EQ(Delete(id).status().code(), StatusCode::kUnavailable);
}

// Goal: a replica the client's pool has no address for (a node's own id in
// a pool built without it) fails a delete with Unavailable and leaves the
// other replicas' answers counted; its copy is not taken for deleted.
TEST_F(BlobClientTest, DeleteWithoutAChannelToAReplicaFails) {
  const BlobId id = client_->NextBlobId();
  ASSERT_TRUE(Put(id, "kept on node 2").ok());
  WaitIdle();
  pool_->RemovePeer(2);
  auto deleted = Delete(id);
  EXPECT_EQ(deleted.status().code(), StatusCode::kUnavailable) << deleted.status().ToString();
  EXPECT_TRUE(StoreOf(2).Read(id, 0, UINT64_MAX).ok());
  // Reads do not take the missing channel for a missing copy either.
  auto read = Read(id);
  EXPECT_EQ(read.status().code(), StatusCode::kUnavailable) << read.status().ToString();
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
  MakeClient(*client_->slot_map(), options);
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

// Goal: read-ahead for many GETs never asks one node for more than it
// queues. Node 1 (the nearest copy) restarts queueing at most 8 MiB of
// replies per connection and the client asks it for at most 3 MiB at once
// (the node frees a reply's bytes when its write completes, which may be
// after the client has the reply and asked again: hence the margin, as in
// limits.h); 64 concurrent 1 MiB reads (64 MiB asked at once, and twice
// the node's blob queue) are all served by node 1 without a slow-peer
// close, a Throttled answer or a fallback.
TEST_F(BlobClientTest, ConcurrentReadsStayWithinWhatTheNearestNodeQueues) {
  const BlobId id = client_->NextBlobId();
  const std::string data = TestData(limits::kBlobBytesMax, 11);
  ASSERT_TRUE(Put(id, data).ok());
  WaitIdle();
  services_[0]->Stop();
  servers_[0]->Stop();
  StartNode(1, {}, 8 << 20);
  ASSERT_TRUE(pool_->SetPeerAddress(1, "127.0.0.1", servers_[0]->port()).ok());
  BlobClientOptions options;
  options.read_timeout_ms = 30'000;
  options.node_read_bytes_max = 3 << 20;
  MakeClient(*client_->slot_map(), options);

  constexpr size_t kReads = 64;
  constexpr uint64_t kPiece = 1 << 20;
  std::vector<std::promise<Result<std::string>>> reads(kReads);
  for (size_t i = 0; i < kReads; ++i) {
    const uint64_t offset = (i % 8) * kPiece;
    client_->Read(
        id, offset, kPiece,
        [&p = reads[i]](Result<SharedBytes> r) {
          p.set_value(r.ok() ? Result<std::string>(std::string(r->view())) : Result<std::string>(r.status()));
        },
        i % 4 == 0 ? ReadPriority::kClientWaiting : ReadPriority::kReadAhead);
  }
  for (size_t i = 0; i < kReads; ++i) {
    auto r = reads[i].get_future().get();
    ASSERT_TRUE(r.ok()) << i << ": " << r.status().ToString();
    EXPECT_TRUE(*r == data.substr((i % 8) * kPiece, kPiece)) << i;
  }
  EXPECT_EQ(SeriesValue(node_registry_, "tessera_rpc_slow_peer_closes_total{side=\"server\"}"), 0u);
  EXPECT_EQ(SeriesValue(node_registry_, "tessera_blob_throttled_total"), 0u);
  EXPECT_EQ(ClientMetric("tessera_blob_client_read_fallbacks_total"), 0u);
  EXPECT_EQ(ClientMetric("tessera_blob_client_requests_total{code=\"OK\",op=\"read\"}"), kReads);
  EXPECT_GE(ClientMetric("tessera_blob_client_read_wait_seconds_count"), kReads);
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
