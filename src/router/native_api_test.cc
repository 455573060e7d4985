// Goal: through the native KV API on a RouterService in process (fake meta
// and node RpcServers on loopback stand in for the cluster), KvClient puts,
// gets, compares-and-sets, deletes, scans across partition boundaries and
// applies atomic batches; pipelined requests are answered by id; bad
// credentials, malformed and oversized frames get clear errors and close
// only their own connection; unknown tables and partitions without a
// leader fail clearly instead of hanging.
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "client/kv_api_wire.h"
#include "common/check.h"
#include "http/stream_test_client.h"
#include "pki/certificates.h"
#include "router/router_service.h"
#include "router/router_test_util.h"
#include "rpc/fault_injector.h"
#include "rpc/frame.h"
#include "rpc/server.h"
#include "tessera/kv_client.h"

namespace tessera::router {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

const std::string kSecret = "native-test-cluster-secret-0123456789";
const Credential kCredential{"alice", "0123456789abcdef0123456789abcdef"};
// May only read table "kv".
Credential Reader() {
  auto grant = KvGrant::Parse("r:kv");
  TESSERA_CHECK(grant.ok());
  return Credential{"reader", "reader-secret-0123456789abcdef", *grant};
}
constexpr uint32_t kMetaId = 101;
constexpr uint32_t kRouterId = 201;

// Table "kv" in two partitions split at "m", both led by node 1 of 1..3.
// Guarded by mu.
struct FakeCluster {
  std::mutex mu;
  std::map<uint64_t, std::map<std::string, pb::KvRecord>> data{{1, {}}, {2, {}}};
  std::map<uint64_t, uint32_t> leader{{1, 1}, {2, 1}};  // 0: no leader anywhere
  uint64_t slot = 0;
  int writes = 0;  // kv.write calls that reached a leader

  static uint64_t GroupOf(const std::string& key) { return key < "m" ? 1 : 2; }

  static pb::PartitionDescriptor Descriptor(uint64_t group) {
    pb::PartitionDescriptor p;
    p.set_table("kv");
    p.set_start_key(group == 1 ? "" : "m");
    p.set_end_key(group == 1 ? "m" : "");
    p.set_group_id(group);
    p.set_epoch(1);
    p.set_leader_hint(1);
    for (uint32_t node : {1u, 2u, 3u}) p.add_replicas()->set_node_id(node);
    return p;
  }

  Result<std::string> Scan(std::map<std::string, pb::KvRecord>& d, const pb::KvScanRequest& scan) {
    pb::KvScanResponse response;
    for (auto it = d.lower_bound(scan.start_key());
         it != d.end() && (scan.end_key().empty() || it->first < scan.end_key()); ++it) {
      if (response.items_size() == static_cast<int>(scan.limit())) {
        response.set_resume_key(it->first);
        break;
      }
      pb::KvItem* item = response.add_items();
      item->set_key(it->first);
      item->set_value(it->second.value());
      item->set_version(it->second.version());
    }
    return response.SerializeAsString();
  }

  Result<std::string> Write(std::map<std::string, pb::KvRecord>& d, const pb::KvBatch& batch) {
    ++writes;
    pb::KvWriteResponse response;
    for (int i = 0; i < batch.conditions_size(); ++i) {
      const pb::KvCondition& c = batch.conditions(i);
      const auto it = d.find(c.key());
      const bool holds = c.has_absent()    ? it == d.end()
                         : c.has_present() ? it != d.end()
                                           : it != d.end() && it->second.version() == c.version();
      if (!holds) {
        response.mutable_result()->set_failed_condition(static_cast<uint32_t>(i));
        return response.SerializeAsString();
      }
    }
    const uint64_t version = ++slot;
    for (const pb::KvWrite& w : batch.writes()) {
      if (w.delete_()) {
        d.erase(w.key());
      } else {
        d[w.key()].set_value(w.value());
        d[w.key()].set_version(version);
      }
    }
    response.mutable_result()->set_applied(true);
    response.mutable_result()->set_version(version);
    return response.SerializeAsString();
  }

  Result<std::string> Serve(uint32_t self, const pb::Envelope& request) {
    std::lock_guard lock(mu);
    pb::KvGetRequest get;
    pb::KvScanRequest scan;
    pb::KvWriteRequest write;
    uint64_t group = 0;
    if (request.method() == "kv.get" && get.ParseFromString(request.payload())) group = get.group_id();
    if (request.method() == "kv.scan" && scan.ParseFromString(request.payload())) group = scan.group_id();
    if (request.method() == "kv.write" && write.ParseFromString(request.payload())) group = write.group_id();
    if (!data.contains(group)) return Status::NotFound("no such group");
    if (leader[group] != self) return Status::NotLeader(leader[group]);
    auto& d = data[group];
    if (request.method() == "kv.scan") return Scan(d, scan);
    if (request.method() == "kv.write") return Write(d, write.batch());
    pb::KvGetResponse response;
    if (const auto it = d.find(get.key()); it != d.end()) {
      response.set_found(true);
      response.set_value(it->second.value());
      response.set_version(it->second.version());
    }
    return response.SerializeAsString();
  }
};

// A client speaking raw frames, for what KvClient never sends.
class RawClient {
 public:
  explicit RawClient(uint16_t port) : socket_(io_), decoder_(limits::kNativeResponseFrameBytesMax) {
    socket_.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }

  void SendBytes(const std::string& bytes) { asio::write(socket_, asio::buffer(bytes)); }
  void Send(const pb::KvApiClientFrame& frame) {
    SendBytes(*kvapi::EncodeFrame(frame, limits::kNativeResponseFrameBytesMax));
  }
  // The next frame, or nullopt at the end of the stream.
  std::optional<pb::KvApiServerFrame> Next() {
    std::string_view payload;
    while (decoder_.Next(&payload) == rpc::FrameDecoder::Outcome::kNeedMore) {
      std::span<char> space = decoder_.Prepare(4096);
      boost::system::error_code error;
      const size_t n = socket_.read_some(asio::buffer(space.data(), space.size()), error);
      if (error) return std::nullopt;
      decoder_.Commit(n);
    }
    pb::KvApiServerFrame frame;
    EXPECT_TRUE(frame.ParseFromArray(payload.data(), static_cast<int>(payload.size())));
    return frame;
  }
  // Reads the Challenge and authenticates as `credential`.
  void Handshake(const Credential& credential) {
    std::optional<pb::KvApiServerFrame> challenge = Next();
    ASSERT_TRUE(challenge && challenge->has_challenge());
    pb::KvApiClientFrame hello;
    const std::string nonce = kvapi::RandomNonce();
    hello.mutable_hello()->set_protocol_version(1);
    hello.mutable_hello()->set_access_key(credential.access_key);
    hello.mutable_hello()->set_client_nonce(nonce);
    hello.mutable_hello()->set_proof(kvapi::HelloProof(credential.secret_key, challenge->challenge().server_nonce(),
                                                       nonce, credential.access_key));
    Send(hello);
    std::optional<pb::KvApiServerFrame> welcome = Next();
    ASSERT_TRUE(welcome && welcome->has_welcome());
    ASSERT_EQ(welcome->welcome().code(), 0u) << welcome->welcome().message();
  }

 private:
  asio::io_context io_;
  asio::ip::tcp::socket socket_;
  rpc::FrameDecoder decoder_;
};

class NativeApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 4; ++i) threads_.emplace_back([this] { io_.run(); });
    std::vector<cluster::ProcessEntry> processes;
    for (uint32_t node : {1u, 2u, 3u}) {
      auto server = StartServer(node, "node", {"kv.get", "kv.scan", "kv.write"},
                                [this, node](const rpc::PeerInfo&, const pb::Envelope& request,
                                             rpc::Responder responder) {
                                  Result<std::string> reply = cluster_.Serve(node, request);
                                  if (reply.ok()) return responder.Reply(std::move(*reply));
                                  responder.Fail(reply.status());
                                });
      processes.push_back(Entry(node, cluster::ProcessRole::kNode, server->port()));
      servers_.push_back(std::move(server));
    }
    auto meta = StartServer(kMetaId, "meta", {"meta.lookup_batch"},
                            testing::LookupBatchHandler([](const pb::LookupRequest& lookup)
                                                   -> Result<pb::PartitionDescriptor> {
                              if (lookup.table() != "kv") return Status::NotFound("no table " + lookup.table());
                              return FakeCluster::Descriptor(FakeCluster::GroupOf(lookup.key()));
                            }));
    processes.push_back(Entry(kMetaId, cluster::ProcessRole::kMeta, meta->port()));
    servers_.push_back(std::move(meta));
    processes_ = processes;
    router_ = StartRouter(kRouterId, registry_);
    ASSERT_NE(router_, nullptr);
    client_ = Connect(kCredential);
    ASSERT_NE(client_, nullptr);
  }

  // A router (process id `id`) over the fake cluster, started.
  // `tls`: also serve both KV APIs over TLS with these files.
  std::unique_ptr<RouterService> StartRouter(uint32_t id, metrics::Registry& registry,
                                             const http::TlsFiles* tls = nullptr) {
    RouterServiceOptions options;
    if (tls != nullptr) {
      options.http_tls_port = 0;
      options.native_tls_port = 0;
      options.tls_files = *tls;
    }
    options.self = Entry(id, cluster::ProcessRole::kRouter, 0);
    options.processes = processes_;
    options.cluster_secret = kSecret;
    options.kv.request_deadline_ms = 1'500;
    options.kv.rpc_timeout_ms = 500;
    options.kv.backoff_initial_ms = 8;
    options.kv.backoff_max_ms = 100;
    options.memds_timeout_ms = 500;
    CredentialStore store;
    EXPECT_TRUE(store.Add(kCredential).ok());
    EXPECT_TRUE(store.Add(Reader()).ok());
    auto router = std::make_unique<RouterService>(rpc::RpcContext{io_, registry, faults_}, std::move(store),
                                                  options);
    const Status started = router->Start();
    EXPECT_TRUE(started.ok()) << started.ToString();
    EXPECT_NE(router->native_port(), 0);
    return started.ok() ? std::move(router) : nullptr;
  }

  // Another router over the same fake cluster, with its own registry. The
  // fixture owns both: a router is destroyed only after the io threads
  // have stopped, so no handler of it can run on a freed object.
  RouterService* StartExtraRouter(const http::TlsFiles* tls = nullptr) {
    extra_registries_.push_back(std::make_unique<metrics::Registry>());
    const uint32_t id = kRouterId + 1 + static_cast<uint32_t>(extra_routers_.size());
    std::unique_ptr<RouterService> router = StartRouter(id, *extra_registries_.back(), tls);
    if (router == nullptr) return nullptr;
    extra_routers_.push_back(std::move(router));
    return extra_routers_.back().get();
  }

  void TearDown() override {
    client_.reset();
    if (router_) router_->Stop();
    for (auto& r : extra_routers_) r->Stop();
    for (auto& s : servers_) s->Stop();
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
    router_.reset();
    extra_routers_.clear();
    servers_.clear();
  }

  std::unique_ptr<KvClient> Connect(const Credential& credential) {
    KvResult<std::unique_ptr<KvClient>> client =
        KvClient::Connect("127.0.0.1", router_->native_port(), credential.access_key, credential.secret_key);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(*client) : nullptr;
  }

  static cluster::ProcessEntry Entry(uint32_t id, cluster::ProcessRole role, uint16_t port) {
    return testing::LoopbackEntry(id, role, port);
  }

  std::unique_ptr<rpc::RpcServer> StartServer(uint32_t id, const std::string& role,
                                              const std::vector<std::string>& methods, rpc::Handler handler) {
    return testing::StartFakeServer(rpc::RpcContext{io_, server_registry_, server_faults_}, id, role,
                                    kSecret, methods, std::move(handler));
  }

  uint64_t Counter(const std::string& series) { return testing::SeriesValue(registry_, series); }

  // The client still works (the router kept serving).
  void ExpectServing() {
    std::unique_ptr<KvClient> fresh = Connect(kCredential);
    ASSERT_NE(fresh, nullptr);
    EXPECT_TRUE(fresh->Put("kv", "alive", "yes").ok());
    EXPECT_TRUE(client_->Get("kv", "alive").ok());
  }

  metrics::Registry registry_;
  metrics::Registry server_registry_;
  rpc::FaultInjector faults_{1};
  rpc::FaultInjector server_faults_{2};
  FakeCluster cluster_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::vector<std::thread> threads_;
  std::vector<std::unique_ptr<rpc::RpcServer>> servers_;
  std::vector<cluster::ProcessEntry> processes_;  // the fake cluster's nodes and meta
  std::unique_ptr<RouterService> router_;
  std::vector<std::unique_ptr<metrics::Registry>> extra_registries_;  // outlive extra_routers_
  std::vector<std::unique_ptr<RouterService>> extra_routers_;
  std::unique_ptr<KvClient> client_;
};

TEST_F(NativeApiTest, PutGetConditionalPutAndDelete) {
  const std::string key("a b/\0\xff", 6);
  KvResult<uint64_t> v1 = client_->Put("kv", key, "v1");
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  KvResult<std::optional<KvValue>> got = client_->Get("kv", key);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->value, "v1");
  EXPECT_EQ((*got)->version, *v1);
  EXPECT_TRUE(client_->Get("kv", key, KvConsistency::kEventual).ok());

  EXPECT_EQ(client_->PutIf("kv", key, "x", KvCondition::Kind::kAbsent).status().code(), KvCode::kConflict);
  EXPECT_EQ(client_->PutIf("kv", key, "x", KvCondition::Kind::kVersion, *v1 + 100).status().code(),
            KvCode::kConflict);
  KvResult<uint64_t> v2 = client_->PutIf("kv", key, "v2", KvCondition::Kind::kVersion, *v1);
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_GT(*v2, *v1);
  EXPECT_TRUE(client_->PutIf("kv", "fresh", "f", KvCondition::Kind::kAbsent).ok());
  EXPECT_EQ(client_->PutIf("kv", "nothing", "x", KvCondition::Kind::kPresent).status().code(), KvCode::kConflict);

  EXPECT_EQ(client_->Delete("kv", key, KvCondition::Version(key, *v1)).status().code(), KvCode::kConflict);
  EXPECT_TRUE(client_->Delete("kv", key, KvCondition::Version(key, *v2)).ok());
  got = client_->Get("kv", key);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
  EXPECT_TRUE(client_->Delete("kv", "never-there").ok());
  EXPECT_GE(Counter("tessera_router_requests_total{code=\"OK\",op=\"put\"}"), 3u);
}

// Goal: a connection reaches only what its credential's grant allows:
// internal tables never (PermissionDenied, for reads, writes, scans and
// batches), and a read-only credential's writes are refused while its reads
// of its table work.
TEST_F(NativeApiTest, GrantsLimitTablesAndAccess) {
  EXPECT_EQ(client_->Get("_s3", "k").status().code(), KvCode::kPermissionDenied);
  EXPECT_EQ(client_->Put("_s3", "k", "v").status().code(), KvCode::kPermissionDenied);
  EXPECT_EQ(client_->Scan("_s3", "", "", 10).status().code(), KvCode::kPermissionDenied);
  ASSERT_TRUE(client_->Put("kv", "k", "v").ok());
  std::unique_ptr<KvClient> reader = Connect(Reader());
  ASSERT_NE(reader, nullptr);
  KvResult<std::optional<KvValue>> got = reader->Get("kv", "k");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->value, "v");
  KvResult<uint64_t> put = reader->Put("kv", "k", "w");
  EXPECT_EQ(put.status().code(), KvCode::kPermissionDenied) << put.status().ToString();
  EXPECT_NE(put.status().message().find("only read"), std::string::npos) << put.status().ToString();
  EXPECT_EQ(reader->Delete("kv", "k").status().code(), KvCode::kPermissionDenied);
  EXPECT_EQ(reader->Get("other", "k").status().code(), KvCode::kPermissionDenied);
  EXPECT_EQ((*client_->Get("kv", "k"))->value, "v");  // nothing was written
}

TEST_F(NativeApiTest, ScanPagesAcrossPartitionBoundaries) {
  std::vector<std::string> keys;
  for (char c = 'a'; c <= 'z'; ++c) {
    keys.push_back(std::string(1, c));
    ASSERT_TRUE(client_->Put("kv", keys.back(), "v" + keys.back()).ok());
  }
  std::vector<std::string> seen;
  std::string start;
  for (int pages = 0; pages < 20; ++pages) {
    KvResult<KvScanPage> page = client_->Scan("kv", start, "", 5);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    EXPECT_LE(page->items.size(), 5u);
    for (const KvItem& item : page->items) {
      seen.push_back(item.key);
      EXPECT_EQ(item.value, "v" + item.key);
    }
    if (!page->next) break;
    start = *page->next;
  }
  EXPECT_EQ(seen, keys);
  KvResult<KvScanPage> bounded = client_->Scan("kv", "k", "p", 100);
  ASSERT_TRUE(bounded.ok());
  ASSERT_EQ(bounded->items.size(), 5u);  // k l m n o: across the split at "m"
  EXPECT_EQ(bounded->items.front().key, "k");
  EXPECT_EQ(bounded->items.back().key, "o");
  EXPECT_FALSE(bounded->next.has_value());
  EXPECT_EQ(client_->Scan("kv", "", "", 0).status().code(), KvCode::kInvalidArgument);
}

TEST_F(NativeApiTest, BatchesAreAllOrNothingWithinOnePartition) {
  ASSERT_TRUE(client_->Put("kv", "c", "old").ok());
  KvBatch batch;
  batch.conditions.push_back(KvCondition::Absent("b"));
  batch.writes = {{"a", "1", false}, {"b", "2", false}, {"c", "", true}};
  KvResult<uint64_t> version = client_->Batch("kv", batch);
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  for (const std::string key : {"a", "b"}) {
    KvResult<std::optional<KvValue>> got = client_->Get("kv", key);
    ASSERT_TRUE(got.ok() && got->has_value());
    EXPECT_EQ((*got)->version, *version);  // one version for the whole batch
  }
  EXPECT_FALSE(client_->Get("kv", "c")->has_value());

  // The condition fails now: nothing of the batch happens.
  batch.writes = {{"a", "changed", false}, {"d", "new", false}};
  KvResult<uint64_t> refused = client_->Batch("kv", batch);
  EXPECT_EQ(refused.status().code(), KvCode::kConflict);
  EXPECT_EQ(client_->Get("kv", "a").value()->value, "1");
  EXPECT_FALSE(client_->Get("kv", "d")->has_value());

  // Keys in two partitions: refused before any node sees it.
  int writes_before = 0;
  {
    std::lock_guard lock(cluster_.mu);
    writes_before = cluster_.writes;
  }
  KvBatch spanning;
  spanning.writes = {{"a", "x", false}, {"z", "x", false}};
  KvResult<uint64_t> span = client_->Batch("kv", spanning);
  EXPECT_EQ(span.status().code(), KvCode::kInvalidArgument);
  EXPECT_NE(span.status().message().find("partition"), std::string::npos);
  std::lock_guard lock(cluster_.mu);
  EXPECT_EQ(cluster_.writes, writes_before);
  EXPECT_FALSE(cluster_.data[2].contains("z"));
}

TEST_F(NativeApiTest, UnknownTableAndMissingLeaderFailClearly) {
  KvResult<std::optional<KvValue>> got = client_->Get("no-such-table", "k");
  EXPECT_EQ(got.status().code(), KvCode::kNotFound) << got.status().ToString();
  EXPECT_EQ(client_->Put("no-such-table", "k", "v").status().code(), KvCode::kNotFound);
  {
    std::lock_guard lock(cluster_.mu);
    cluster_.leader[2] = 0;
  }
  KvResult<uint64_t> put = client_->Put("kv", "zz", "v");  // bounded by the router's deadline
  EXPECT_EQ(put.status().code(), KvCode::kUnavailable) << put.status().ToString();
  EXPECT_TRUE(client_->Put("kv", "aa", "v").ok());  // the other partition still works
}

TEST_F(NativeApiTest, PipelinedRequestsAreAnsweredById) {
  constexpr int kRequests = 200;
  std::vector<std::future<KvResult<KvReply>>> puts;
  for (int i = 0; i < kRequests; ++i) {
    KvRequest r;
    r.op = KvRequest::Op::kPut;
    r.table = "kv";
    r.key = (i % 2 ? "a" : "q") + std::to_string(i);
    r.value = "value" + std::to_string(i);
    puts.push_back(client_->Submit(std::move(r)));
  }
  for (auto& f : puts) ASSERT_TRUE(f.get().ok());
  std::mutex mu;
  std::map<std::string, std::string> answers;
  std::promise<void> all_done;
  int remaining = kRequests;
  for (int i = 0; i < kRequests; ++i) {
    KvRequest r;
    r.op = KvRequest::Op::kGet;
    r.table = "kv";
    r.key = (i % 2 ? "a" : "q") + std::to_string(i);
    client_->Submit(r, [&, key = r.key](KvResult<KvReply> reply) {
      std::lock_guard lock(mu);
      answers[key] = reply.ok() && reply->value ? reply->value->value : reply.status().ToString();
      if (--remaining == 0) all_done.set_value();
    });
  }
  ASSERT_EQ(all_done.get_future().wait_for(20s), std::future_status::ready);
  for (int i = 0; i < kRequests; ++i) {
    EXPECT_EQ(answers[(i % 2 ? "a" : "q") + std::to_string(i)], "value" + std::to_string(i));
  }
  EXPECT_GE(Counter("tessera_router_native_requests_total"), 2u * kRequests);
}

TEST_F(NativeApiTest, BadCredentialsAreRefusedAndTheRouterKeepsServing) {
  KvResult<std::unique_ptr<KvClient>> wrong_secret = KvClient::Connect(
      "127.0.0.1", router_->native_port(), kCredential.access_key, "not-the-secret-0123456789");
  EXPECT_EQ(wrong_secret.status().code(), KvCode::kPermissionDenied) << wrong_secret.status().ToString();
  KvResult<std::unique_ptr<KvClient>> unknown =
      KvClient::Connect("127.0.0.1", router_->native_port(), "mallory", kCredential.secret_key);
  EXPECT_EQ(unknown.status().code(), KvCode::kPermissionDenied);
  EXPECT_EQ(Counter("tessera_router_native_auth_failures_total{reason=\"bad_proof\"}"), 1u);
  EXPECT_EQ(Counter("tessera_router_native_auth_failures_total{reason=\"unknown_key\"}"), 1u);

  // A request before the Hello: Unauthenticated, then closed.
  RawClient raw(router_->native_port());
  ASSERT_TRUE(raw.Next()->has_challenge());
  pb::KvApiClientFrame request;
  request.mutable_request()->set_request_id(1);
  request.mutable_request()->set_table("kv");
  request.mutable_request()->mutable_get()->set_key("a");
  raw.Send(request);
  std::optional<pb::KvApiServerFrame> refused = raw.Next();
  ASSERT_TRUE(refused && refused->has_welcome());
  EXPECT_EQ(refused->welcome().code(), static_cast<uint32_t>(KvCode::kUnauthenticated));
  EXPECT_FALSE(raw.Next().has_value());  // closed
  ExpectServing();
}

TEST_F(NativeApiTest, MalformedAndOversizedFramesCloseOnlyTheirConnection) {
  // Oversized before the handshake: judged on the header alone.
  {
    RawClient raw(router_->native_port());
    ASSERT_TRUE(raw.Next()->has_challenge());
    raw.SendBytes(std::string("\x00\x01\x00\x00\x00\x00\x00\x00", 8));  // 64 KiB > handshake limit
    std::optional<pb::KvApiServerFrame> error = raw.Next();
    ASSERT_TRUE(error && error->has_response());
    EXPECT_EQ(error->response().request_id(), 0u);
    EXPECT_EQ(error->response().code(), static_cast<uint32_t>(KvCode::kInvalidArgument));
    EXPECT_NE(error->response().message().find("too large"), std::string::npos);
    EXPECT_FALSE(raw.Next().has_value());
  }
  // Oversized after the handshake, then a bad checksum, then garbage.
  {
    RawClient raw(router_->native_port());
    raw.Handshake(kCredential);
    raw.SendBytes(std::string("\x7f\x00\x00\x00\x00\x00\x00\x00", 8));
    std::optional<pb::KvApiServerFrame> error = raw.Next();
    ASSERT_TRUE(error && error->has_response());
    EXPECT_NE(error->response().message().find("too large"), std::string::npos);
    EXPECT_FALSE(raw.Next().has_value());
  }
  {
    RawClient raw(router_->native_port());
    raw.Handshake(kCredential);
    raw.SendBytes(std::string("\x00\x00\x00\x03\x12\x34\x56\x78xyz", 11));
    std::optional<pb::KvApiServerFrame> error = raw.Next();
    ASSERT_TRUE(error && error->has_response());
    EXPECT_NE(error->response().message().find("checksum"), std::string::npos);
  }
  {
    RawClient raw(router_->native_port());
    raw.Handshake(kCredential);
    pb::KvApiClientFrame request;
    request.mutable_request()->set_request_id(0);  // reserved
    raw.Send(request);
    std::optional<pb::KvApiServerFrame> error = raw.Next();
    ASSERT_TRUE(error && error->has_response());
    EXPECT_EQ(error->response().code(), static_cast<uint32_t>(KvCode::kInvalidArgument));
  }
  EXPECT_EQ(Counter("tessera_router_native_malformed_frames_total{reason=\"too_large\"}"), 2u);
  EXPECT_EQ(Counter("tessera_router_native_malformed_frames_total{reason=\"bad_checksum\"}"), 1u);
  ExpectServing();
}

TEST_F(NativeApiTest, ClientSideLimitsAndLostConnections) {
  KvRequest oversized;
  oversized.op = KvRequest::Op::kPut;
  oversized.table = "kv";
  oversized.key = "big";
  oversized.value.assign(limits::kStateValueBytesMax + 1, 'x');
  EXPECT_EQ(client_->Submit(std::move(oversized)).get().status().code(), KvCode::kInvalidArgument);
  EXPECT_TRUE(client_->connected());
  router_->Stop();
  KvResult<std::optional<KvValue>> got = client_->Get("kv", "a");
  EXPECT_TRUE(got.status().code() == KvCode::kIOError || got.status().code() == KvCode::kAborted)
      << got.status().ToString();
  EXPECT_FALSE(client_->connected());
  // The next call tries to reconnect and fails (no router); calls during
  // the backoff that follows fail at once, naming the failure.
  got = client_->Get("kv", "a");
  EXPECT_EQ(got.status().code(), KvCode::kIOError) << got.status().ToString();
  const auto start = std::chrono::steady_clock::now();
  got = client_->Get("kv", "a");
  EXPECT_EQ(got.status().code(), KvCode::kIOError);
  EXPECT_NE(got.status().message().find("next attempt in"), std::string::npos) << got.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_EQ(client_->reconnects(), 0u);
}

TEST_F(NativeApiTest, ClientReconnectsToAnotherRouterWhenItsRouterGoesAway) {
  RouterService* second = StartExtraRouter();
  ASSERT_NE(second, nullptr);
  KvResult<std::unique_ptr<KvClient>> connected =
      KvClient::Connect({{"127.0.0.1", router_->native_port()}, {"127.0.0.1", second->native_port()}},
                        kCredential.access_key, kCredential.secret_key);
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  std::unique_ptr<KvClient> client = std::move(*connected);
  ASSERT_TRUE(client->Put("kv", "before", "1").ok());
  EXPECT_EQ(KvClient::Connect(std::vector<KvEndpoint>{}, kCredential.access_key, kCredential.secret_key)
                .status()
                .code(),
            KvCode::kInvalidArgument);

  router_->Stop();
  // In-flight or next call: kIOError for the loss, then the client moves to
  // the second router; every acknowledged write reads back through it.
  int failures = 0;
  KvResult<uint64_t> put = client->Put("kv", "after", "2");
  for (int attempt = 0; !put.ok() && attempt < 50; ++attempt) {
    EXPECT_EQ(put.status().code(), KvCode::kIOError) << put.status().ToString();
    ++failures;
    std::this_thread::sleep_for(20ms);
    put = client->Put("kv", "after", "2");
  }
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_LE(failures, 2);
  EXPECT_TRUE(client->connected());
  EXPECT_EQ(client->reconnects(), 1u);
  for (const char* key : {"before", "after"}) {
    KvResult<std::optional<KvValue>> got = client->Get("kv", key);
    ASSERT_TRUE(got.ok() && got->has_value()) << key;
  }
  EXPECT_GE(testing::SeriesValue(*extra_registries_.back(), "tessera_router_requests_total{code=\"OK\",op=\"put\"}"),
            1u);
}

TEST_F(NativeApiTest, SilentClientIsClosedAfterTheHandshakeTimeout) {
  RawClient raw(router_->native_port());
  ASSERT_TRUE(raw.Next()->has_challenge());
  std::optional<pb::KvApiServerFrame> refused = raw.Next();  // after kNativeHandshakeTimeoutMs
  ASSERT_TRUE(refused && refused->has_welcome());
  EXPECT_EQ(refused->welcome().code(), static_cast<uint32_t>(KvCode::kUnauthenticated));
  EXPECT_FALSE(raw.Next().has_value());
  EXPECT_EQ(Counter("tessera_router_native_auth_failures_total{reason=\"handshake_timeout\"}"), 1u);
}

// The HTTP API shares the router: signed requests are its second
// credential form (docs/formats/credentials.md).
TEST_F(NativeApiTest, HttpApiAcceptsSignedRequests) {
  auto handle = [this](const std::string& method, const std::string& target, const std::string& body,
                       std::optional<std::string> authorization) {
    http::Request request;
    request.method = method;
    request.target = target;
    request.path = target.substr(0, target.find('?'));
    if (target.find('?') != std::string::npos) request.query = target.substr(target.find('?') + 1);
    if (authorization) request.headers.emplace_back("Authorization", *authorization);
    request.body = body;
    std::promise<http::Response> promise;
    std::future<http::Response> future = promise.get_future();
    router_->api().Handle(std::move(request), [&promise](http::Response r) { promise.set_value(std::move(r)); });
    EXPECT_EQ(future.wait_for(10s), std::future_status::ready);
    return future.get();
  };
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const std::string path = "/kv/kv/signed%20key";
  const std::string put_auth = SignRequest(kCredential, SignedParts{"PUT", path, "", "value"}, now);
  EXPECT_EQ(handle("PUT", path, "value", put_auth).status, 200u);
  const std::string get_auth = SignRequest(kCredential, SignedParts{"GET", path, "consistency=strong", ""}, now);
  http::Response got = handle("GET", path + "?consistency=strong", "", get_auth);
  EXPECT_EQ(got.status, 200u);
  EXPECT_EQ(got.body, "value");
  EXPECT_EQ(handle("PUT", path, "other", put_auth).status, 403u);  // body not the signed one
  EXPECT_EQ(handle("GET", path + "?consistency=eventual", "", get_auth).status, 403u);
  const std::string stale = SignRequest(kCredential, SignedParts{"GET", path, "", ""}, now - 3600);
  EXPECT_EQ(handle("GET", path, "", stale).status, 403u);
  EXPECT_EQ(handle("GET", path, "", std::nullopt).status, 401u);
  EXPECT_EQ(handle("GET", path, "", "TK1-HMAC-SHA256").status, 403u);
  EXPECT_EQ(Counter("tessera_router_auth_failures_total{reason=\"refused\"}"), 4u);
  EXPECT_EQ(client_->Get("kv", "signed key").value()->value, "value");  // the same data natively
}

// Goal: a router's TLS listeners serve both KV APIs beside the plain ones:
// a client trusting the HTTPS CA works over TLS (the certificate verified
// for 127.0.0.1), and a client of another CA, a plain client on the TLS
// port and a TLS client on the plain port are all refused.
TEST_F(NativeApiTest, TlsListenersServeBothKvApisBesideThePlainOnes) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tessera_kv_tls_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto make_ca = [&](const std::string& stem) {
    const pki::KeyPairFiles ca{(dir / (stem + ".pem")).string(), (dir / (stem + ".key")).string()};
    EXPECT_TRUE(pki::GenerateAuthority(ca, stem, 2).ok());
    return ca;
  };
  const pki::KeyPairFiles ca = make_ca("ca");
  const pki::KeyPairFiles other_ca = make_ca("other-ca");
  pki::CertificateSpec spec;
  spec.common_name = "localhost";
  spec.dns_names = {"localhost"};
  spec.ip_addresses = {"127.0.0.1"};
  const http::TlsFiles files{(dir / "cert.pem").string(), (dir / "key.pem").string()};
  ASSERT_TRUE(pki::Issue(ca, {files.cert_pem_path, files.key_pem_path}, spec, 2).ok());
  RouterService* router = StartExtraRouter(&files);
  ASSERT_NE(router, nullptr);
  ASSERT_NE(router->native_tls_port(), 0);
  ASSERT_NE(router->http_tls_port(), 0);

  KvClientOptions tls;
  tls.tls_ca_file = ca.cert_path;
  tls.connect_timeout_ms = 2'000;
  auto client = KvClient::Connect("127.0.0.1", router->native_tls_port(), kCredential.access_key,
                                  kCredential.secret_key, tls);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ASSERT_TRUE((*client)->Put("kv", "over-tls", "sealed").ok());
  KvResult<std::optional<KvValue>> got = (*client)->Get("kv", "over-tls");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->value, "sealed");

  KvClientOptions foreign = tls;
  foreign.tls_ca_file = other_ca.cert_path;
  EXPECT_FALSE(KvClient::Connect("127.0.0.1", router->native_tls_port(), kCredential.access_key,
                                 kCredential.secret_key, foreign)
                   .ok());
  KvClientOptions plain;
  plain.connect_timeout_ms = 1'000;
  EXPECT_FALSE(KvClient::Connect("127.0.0.1", router->native_tls_port(), kCredential.access_key,
                                 kCredential.secret_key, plain)
                   .ok());
  EXPECT_FALSE(KvClient::Connect("127.0.0.1", router->native_port(), kCredential.access_key,
                                 kCredential.secret_key, tls)
                   .ok());
  foreign.tls_ca_file = (dir / "missing.pem").string();
  EXPECT_EQ(KvClient::Connect("127.0.0.1", router->native_tls_port(), kCredential.access_key,
                              kCredential.secret_key, foreign)
                .status()
                .code(),
            KvCode::kInvalidArgument);

  // The HTTP API over TLS (the certificate verified for localhost).
  http::testing::TestClient https(router->http_tls_port(), /*tls=*/true, ca.cert_path);
  ASSERT_FALSE(https.Connect());
  ASSERT_FALSE(https.Write("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  auto health = https.Read();
  ASSERT_TRUE(health);
  EXPECT_EQ(health->result_int(), 200u);
  http::testing::TestClient untrusting(router->http_tls_port(), /*tls=*/true, other_ca.cert_path);
  EXPECT_TRUE(untrusting.Connect());

  client->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera::router
