// Goal: through the real HTTP API, the router routes KV operations to the
// partition leader found via MemDS, follows NotLeader redirects, retries
// with backoff, answers 503 (not a hang) when a partition has no leader,
// and scans across partition boundaries in key order. Fake meta and node
// RpcServers on loopback stand in for the cluster.
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "common/check.h"
#include "router/http_client.h"
#include "router/router_service.h"
#include "router/router_test_util.h"
#include "router/uri.h"
#include "rpc/fault_injector.h"
#include "rpc/server.h"

namespace tessera::router {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const std::string kSecret = "router-test-cluster-secret-0123456789";
const Credential kCredential{"alice", "0123456789abcdef0123456789abcdef"};
// May only read table "kv".
Credential Reader() {
  auto grant = KvGrant::Parse("r:kv");
  TESSERA_CHECK(grant.ok());
  return Credential{"reader", "reader-secret-0123456789abcdef", *grant};
}
constexpr uint32_t kMetaId = 101;
constexpr uint32_t kDeadMetaId = 102;
constexpr uint32_t kRouterId = 201;
constexpr uint32_t kDeadNodeId = 4;  // in the layout, never listening

// The cluster the fake servers share: two partitions of table "kv", split
// at "m", both on nodes 1-3. Guarded by mu.
struct FakeCluster {
  struct Group {
    uint32_t leader = 1;       // 0: no leader (every replica says NotLeader, no hint)
    uint32_t meta_hint = 1;    // what MemDS believes
    std::map<std::string, pb::KvRecord> data;
  };
  std::mutex mu;
  std::map<uint64_t, Group> groups{{1, {}}, {2, {}}};
  uint64_t slot = 0;
  int throttle_next = 0;                 // answer this many node calls with Throttled
  std::optional<Status> fail_next;       // answer the next node call with this
  std::map<uint32_t, int> calls_per_node;
  std::set<uint32_t> paused;             // nodes that take calls and never answer
  std::vector<rpc::Responder> unanswered;  // the calls paused nodes took
  int lookups = 0;
  // SplitGroup2: group 2 split at this key into group 3; meta's map shows
  // it only once meta_knows_split.
  std::string split_key;
  bool meta_knows_split = false;
  int wrong_partition_answers = 0;

  // The group meta names for `key`.
  uint64_t GroupOf(const std::string& key) const {
    if (key < "m") return 1;
    return !split_key.empty() && meta_knows_split && key >= split_key ? 3 : 2;
  }
  // A group's range [first, second) (empty second: unbounded), as the
  // nodes hold it or as meta's map shows it.
  std::pair<std::string, std::string> RangeOf(uint64_t group, bool as_meta) const {
    const bool split = !split_key.empty() && (!as_meta || meta_knows_split);
    if (group == 1) return {"", "m"};
    if (group == 2) return {"m", split ? split_key : ""};
    return {split_key, ""};
  }
  bool InRange(uint64_t group, const std::string& key) const {
    const auto [start, end] = RangeOf(group, false);
    return key >= start && (end.empty() || key < end);
  }
  // Moves group 2's keys >= `key` into a new group 3 (same leader).
  void SplitGroup2(const std::string& key) {
    split_key = key;
    Group& child = groups[3];
    child.leader = groups[2].leader;
    child.meta_hint = groups[2].meta_hint;
    auto from = groups[2].data.lower_bound(key);
    child.data.insert(from, groups[2].data.end());
    groups[2].data.erase(from, groups[2].data.end());
  }

  pb::PartitionDescriptor Descriptor(uint64_t group) {
    pb::PartitionDescriptor p;
    p.set_table("kv");
    const auto [start, end] = RangeOf(group, true);
    p.set_start_key(start);
    p.set_end_key(end);
    p.set_group_id(group);
    p.set_epoch(1);
    p.set_leader_hint(groups[group].meta_hint);
    for (uint32_t node : {1u, 2u, 3u}) {
      pb::ReplicaPlacement* r = p.add_replicas();
      r->set_node_id(node);
      r->set_az("az" + std::to_string(node));
    }
    return p;
  }
};

// Serves kv.* as node `self` of `cluster`.
Status ServeNode(FakeCluster& c, uint32_t self, const pb::Envelope& request, std::string* reply) {
  std::lock_guard lock(c.mu);
  ++c.calls_per_node[self];
  if (c.throttle_next > 0) {
    --c.throttle_next;
    return Status::Throttled("fake node busy");
  }
  if (c.fail_next) {
    const Status failure = *c.fail_next;
    c.fail_next.reset();
    return failure;
  }
  uint64_t group_id = 0;
  pb::KvGetRequest get;
  pb::KvScanRequest scan;
  pb::KvWriteRequest write;
  if (request.method() == "kv.get" && get.ParseFromString(request.payload())) group_id = get.group_id();
  if (request.method() == "kv.scan" && scan.ParseFromString(request.payload())) group_id = scan.group_id();
  if (request.method() == "kv.write" && write.ParseFromString(request.payload())) group_id = write.group_id();
  auto group_it = c.groups.find(group_id);
  if (group_it == c.groups.end()) return Status::NotFound("no such group");
  FakeCluster::Group& g = group_it->second;
  if (g.leader != self) return Status::NotLeader(g.leader);
  // The node's range check (node/partition_range.h).
  bool in_range = true;
  if (request.method() == "kv.get") in_range = c.InRange(group_id, get.key());
  if (request.method() == "kv.scan") {
    const std::string end = c.RangeOf(group_id, false).second;
    in_range = c.InRange(group_id, scan.start_key()) &&
               (end.empty() || (!scan.end_key().empty() && scan.end_key() <= end));
  }
  for (const pb::KvWrite& w : write.batch().writes()) in_range = in_range && c.InRange(group_id, w.key());
  if (!in_range) {
    ++c.wrong_partition_answers;
    return Status::WrongPartition("fake node: key outside group " + std::to_string(group_id));
  }
  if (request.method() == "kv.get") {
    pb::KvGetResponse response;
    if (auto it = g.data.find(get.key()); it != g.data.end()) {
      response.set_found(true);
      response.set_value(it->second.value());
      response.set_version(it->second.version());
    }
    *reply = response.SerializeAsString();
  } else if (request.method() == "kv.scan") {
    pb::KvScanResponse response;
    for (auto it = g.data.lower_bound(scan.start_key());
         it != g.data.end() && (scan.end_key().empty() || it->first < scan.end_key()); ++it) {
      if (response.items_size() == static_cast<int>(scan.limit())) {
        response.set_resume_key(it->first);
        break;
      }
      pb::KvItem* item = response.add_items();
      item->set_key(it->first);
      item->set_value(it->second.value());
      item->set_version(it->second.version());
    }
    *reply = response.SerializeAsString();
  } else {
    pb::KvWriteResponse response;
    bool applied = true;
    for (const pb::KvCondition& cond : write.batch().conditions()) {
      auto it = g.data.find(cond.key());
      if (cond.has_absent() && it != g.data.end()) applied = false;
      if (cond.has_present() && it == g.data.end()) applied = false;
      if (cond.has_version() && (it == g.data.end() || it->second.version() != cond.version())) applied = false;
    }
    response.mutable_result()->set_applied(applied);
    if (applied) {
      const uint64_t version = ++c.slot;
      for (const pb::KvWrite& w : write.batch().writes()) {
        if (w.delete_()) {
          g.data.erase(w.key());
        } else {
          g.data[w.key()].set_value(w.value());
          g.data[w.key()].set_version(version);
        }
      }
      response.mutable_result()->set_version(version);
    }
    *reply = response.SerializeAsString();
  }
  return Status::Ok();
}

uint16_t UnusedPort() {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();
}

// How requests reach the router: over HTTP (the real API), or straight
// into its handler (isolates routing from the HTTP transport).
enum class Transport { kHttp, kDirect };

class RouterRoutingTest : public ::testing::TestWithParam<Transport> {
 protected:
  void SetUp() override {
    for (int i = 0; i < 4; ++i) threads_.emplace_back([this] { io_.run(); });
    std::vector<cluster::ProcessEntry> processes;
    for (uint32_t node : {1u, 2u, 3u}) {
      auto server = StartServer(node, "node", [this, node](const rpc::PeerInfo&, const pb::Envelope& request,
                                                           rpc::Responder responder) {
        {
          std::lock_guard lock(cluster_.mu);
          if (cluster_.paused.contains(node)) {
            ++cluster_.calls_per_node[node];
            cluster_.unanswered.push_back(std::move(responder));
            return;
          }
        }
        std::string reply;
        const Status status = ServeNode(cluster_, node, request, &reply);
        if (status.ok()) return responder.Reply(std::move(reply));
        responder.Fail(status);
      }, {"kv.get", "kv.scan", "kv.write"});
      processes.push_back(Entry(node, cluster::ProcessRole::kNode, server->port()));
      servers_.push_back(std::move(server));
    }
    auto meta = StartServer(kMetaId, "meta", testing::LookupBatchHandler(
        [this](const pb::LookupRequest& lookup) -> Result<pb::PartitionDescriptor> {
          if (lookup.table() != "kv") return Status::NotFound("no table " + lookup.table());
          std::lock_guard lock(cluster_.mu);
          ++cluster_.lookups;
          return cluster_.Descriptor(cluster_.GroupOf(lookup.key()));
        }), {"meta.lookup_batch"});
    processes.push_back(Entry(kMetaId, cluster::ProcessRole::kMeta, meta->port()));
    servers_.push_back(std::move(meta));
    // A meta replica that is down: lookups that start there fail over.
    processes.push_back(Entry(kDeadMetaId, cluster::ProcessRole::kMeta, UnusedPort()));
    // A node that is down: nothing places replicas there unless a test does.
    processes.push_back(Entry(kDeadNodeId, cluster::ProcessRole::kNode, UnusedPort()));

    RouterServiceOptions options;
    options.self = Entry(kRouterId, cluster::ProcessRole::kRouter, 0);
    options.processes = processes;
    options.cluster_secret = kSecret;
    options.kv.request_deadline_ms = 1'500;
    options.kv.rpc_timeout_ms = 500;
    options.kv.backoff_initial_ms = 8;
    options.kv.backoff_max_ms = 1'000;
    options.kv.leader_search_backoff_max_ms = 20;
    options.memds_timeout_ms = 500;
    CredentialStore store;
    ASSERT_TRUE(store.Add(kCredential).ok());
    ASSERT_TRUE(store.Add(Reader()).ok());
    router_ = std::make_unique<RouterService>(rpc::RpcContext{io_, registry_, faults_}, std::move(store),
                                              options);
    const Status started = router_->Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    client_ = std::make_unique<HttpClient>("127.0.0.1", router_->http_port(), 10s);
  }

  void TearDown() override {
    client_.reset();
    if (router_) router_->Stop();
    for (auto& s : servers_) s->Stop();
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
    router_.reset();
    servers_.clear();
  }

  static cluster::ProcessEntry Entry(uint32_t id, cluster::ProcessRole role, uint16_t port) {
    return testing::LoopbackEntry(id, role, port);
  }

  std::unique_ptr<rpc::RpcServer> StartServer(uint32_t id, const std::string& role, rpc::Handler handler,
                                              const std::vector<std::string>& methods) {
    return testing::StartFakeServer(rpc::RpcContext{io_, server_registry_, server_faults_}, id, role,
                                    kSecret, methods, std::move(handler));
  }

  std::vector<std::pair<std::string, std::string>> Auth() const {
    return {{"Authorization", "Bearer " + IssueToken(kCredential, Now() + 3600)}};
  }
  static int64_t Now() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  HttpReply Do(const std::string& method, const std::string& target, const std::string& body = "",
               std::vector<std::pair<std::string, std::string>> extra = {}) {
    auto headers = Auth();
    headers.insert(headers.end(), extra.begin(), extra.end());
    return Send(method, target, headers, body);
  }

  HttpReply Send(const std::string& method, const std::string& target,
                 const std::vector<std::pair<std::string, std::string>>& headers = {},
                 const std::string& body = "") {
    if (GetParam() == Transport::kHttp) {
      Result<HttpReply> reply = client_->Request(method, target, headers, body);
      EXPECT_TRUE(reply.ok()) << reply.status().ToString();
      return reply.ok() ? *reply : HttpReply{};
    }
    http::Request request;
    request.method = method;
    request.target = target;
    request.path = target.substr(0, target.find('?'));
    if (target.find('?') != std::string::npos) request.query = target.substr(target.find('?') + 1);
    request.headers = headers;
    request.body = body;
    auto promise = std::make_shared<std::promise<http::Response>>();
    std::future<http::Response> future = promise->get_future();
    router_->api().Handle(std::move(request), [promise](http::Response r) { promise->set_value(std::move(r)); });
    EXPECT_EQ(future.wait_for(10s), std::future_status::ready);
    http::Response response = future.get();
    HttpReply reply;
    reply.status = response.status;
    reply.headers = response.headers;
    reply.body = response.body;
    return reply;
  }

  // `labels`: one `name="value"` pair, or empty.
  uint64_t Counter(const std::string& name, const std::string& label = "") {
    return testing::SeriesValue(registry_, label.empty() ? name : name + "{" + label + "}");
  }

  // Declared first so they outlive the io threads' handlers.
  metrics::Registry registry_;
  metrics::Registry server_registry_;
  rpc::FaultInjector faults_{1};
  rpc::FaultInjector server_faults_{2};
  FakeCluster cluster_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::vector<std::thread> threads_;
  std::vector<std::unique_ptr<rpc::RpcServer>> servers_;
  std::unique_ptr<RouterService> router_;
  std::unique_ptr<HttpClient> client_;
};

TEST_P(RouterRoutingTest, PutGetDeleteWithConditionsAndEncodedKeys) {
  const std::string key = "a b/c\xff";
  const std::string target = "/kv/kv/" + PercentEncode(key);
  HttpReply put = Do("PUT", target, "v1");
  ASSERT_EQ(put.status, 200u) << put.body;
  const std::string v1 = put.Header("X-Tessera-Version");
  HttpReply get = Do("GET", target);
  EXPECT_EQ(get.status, 200u);
  EXPECT_EQ(get.body, "v1");
  EXPECT_EQ(get.Header("ETag"), "\"" + v1 + "\"");
  EXPECT_EQ(Do("GET", target + "?consistency=eventual").body, "v1");
  EXPECT_EQ(Do("GET", target + "?consistency=bogus").status, 400u);
  EXPECT_EQ(Do("PUT", target, "v2", {{"If-None-Match", "*"}}).status, 412u);
  EXPECT_EQ(Do("PUT", target, "v2", {{"If-Match", "999"}}).status, 412u);
  EXPECT_EQ(Do("PUT", target, R"({"value":"v\u00e9"})", {{"If-Match", "\"" + v1 + "\""},
                                                         {"Content-Type", "application/json"}})
                .status,
            200u);
  EXPECT_EQ(Do("GET", target).body, "v\xc3\xa9");
  EXPECT_EQ(Do("PUT", target, "{oops", {{"Content-Type", "application/json"}}).status, 400u);
  EXPECT_EQ(Do("DELETE", target).status, 200u);
  HttpReply gone = Do("GET", target);
  EXPECT_EQ(gone.status, 404u);
  EXPECT_NE(gone.body.find("\"error\""), std::string::npos);
  EXPECT_EQ(Do("GET", "/kv/kv/bad%zz").status, 400u);
  EXPECT_EQ(Do("GET", "/kv/nosuchtable/k").status, 404u);
  EXPECT_EQ(Send("GET", "/health").status, 200u);
  HttpReply metrics = Send("GET", "/metrics");
  EXPECT_NE(metrics.body.find("tessera_router_requests_total{code=\"OK\",op=\"put\"}"), std::string::npos)
      << metrics.body.substr(0, 2000);
}

TEST_P(RouterRoutingTest, TokensAreRequiredAndChecked) {
  HttpReply none = Send("GET", "/kv/kv/a");
  EXPECT_EQ(none.status, 401u);
  EXPECT_NE(none.body.find("\"error\""), std::string::npos);
  auto with = [&](const std::string& token) {
    return Send("GET", "/kv/kv/a", {{"Authorization", "Bearer " + token}}).status;
  };
  EXPECT_EQ(with(IssueToken(kCredential, Now() - 1)), 403u) << "expired";
  EXPECT_EQ(with(IssueToken({"alice", "wrong-secret-wrong-secret-000"}, Now() + 60)), 403u);
  EXPECT_EQ(with("garbage"), 403u);
  EXPECT_EQ(with(IssueToken(kCredential, Now() + 60)), 404u) << "valid token, absent key";
}

// Goal: a request reaches only the tables its credential's grant allows,
// with the access it allows: a read-only credential cannot write, a
// token narrowed to reads cannot write though its credential could, and no
// credential reaches an internal table such as `_s3` through the KV API
// (403 PermissionDenied; nothing is sent to a node).
TEST_P(RouterRoutingTest, GrantsLimitTablesAndAccess) {
  auto with = [&](const std::string& method, const std::string& target, const std::string& token) {
    return Send(method, target, {{"Authorization", "Bearer " + token}}, method == "PUT" ? "v" : "");
  };
  const std::string full = IssueToken(kCredential, Now() + 60);
  for (const char* method : {"GET", "PUT", "DELETE"}) {
    HttpReply internal = with(method, "/kv/_s3/k", full);
    EXPECT_EQ(internal.status, 403u) << method;
    EXPECT_NE(internal.body.find("PermissionDenied"), std::string::npos) << internal.body;
    EXPECT_NE(internal.body.find("internal"), std::string::npos) << internal.body;
  }
  EXPECT_EQ(with("GET", "/kv/_s3?limit=10", full).status, 403u) << "scan";

  const std::string reader = IssueToken(Reader(), Now() + 60);
  EXPECT_EQ(with("GET", "/kv/kv/a", reader).status, 404u) << "allowed read of an absent key";
  EXPECT_EQ(with("PUT", "/kv/kv/a", reader).status, 403u);
  EXPECT_EQ(with("DELETE", "/kv/kv/a", reader).status, 403u);
  EXPECT_EQ(with("GET", "/kv/other/a", reader).status, 403u);

  auto read_only = KvGrant::Parse("r:*");
  ASSERT_TRUE(read_only.ok());
  const std::string narrowed = IssueToken(kCredential, Now() + 60, *read_only);
  EXPECT_EQ(with("GET", "/kv/kv/a", narrowed).status, 404u);
  EXPECT_EQ(with("PUT", "/kv/kv/a", narrowed).status, 403u);
  EXPECT_EQ(with("PUT", "/kv/kv/a", full).status, 200u);

  // A signed request carries its credential's grant.
  const std::string signed_put = SignRequest(Reader(), SignedParts{"PUT", "/kv/kv/b", "", "v"}, Now());
  EXPECT_EQ(Send("PUT", "/kv/kv/b", {{"Authorization", signed_put}}, "v").status, 403u);
  {
    HttpReply metrics = Send("GET", "/metrics");
    EXPECT_NE(metrics.body.find("tessera_router_auth_failures_total{reason=\"denied\"} 9"),
              std::string::npos)
        << metrics.body.substr(0, 3000);
  }
}

TEST_P(RouterRoutingTest, FollowsNotLeaderRedirect) {
  {
    std::lock_guard lock(cluster_.mu);
    cluster_.groups[1].leader = 2;  // MemDS still believes node 1 leads
  }
  ASSERT_EQ(Do("PUT", "/kv/kv/apple", "red").status, 200u);
  EXPECT_EQ(Do("GET", "/kv/kv/apple").body, "red");
  std::lock_guard lock(cluster_.mu);
  EXPECT_GE(cluster_.calls_per_node[1], 1) << "the stale hint was tried";
  EXPECT_GE(cluster_.calls_per_node[2], 2) << "the redirect reached the leader";
  EXPECT_GE(Counter("tessera_router_retries_total", "op=\"put\""), 1u);
}

TEST_P(RouterRoutingTest, RetriesThrottledWithBackoff) {
  {
    std::lock_guard lock(cluster_.mu);
    cluster_.throttle_next = 3;
  }
  const auto start = Clock::now();
  ASSERT_EQ(Do("PUT", "/kv/kv/k1", "v").status, 200u) << "Throttled proves the write did not happen";
  const auto elapsed = Clock::now() - start;
  EXPECT_EQ(Counter("tessera_router_retries_total", "op=\"put\""), 3u);
  // Backoffs 8, 16, 32 ms times a factor in [0.5, 1): at least 28 ms.
  EXPECT_GE(elapsed, 28ms);
  {
    std::lock_guard lock(cluster_.mu);
    cluster_.throttle_next = 2;
  }
  EXPECT_EQ(Do("GET", "/kv/kv/k1").body, "v");
  EXPECT_EQ(Counter("tessera_router_retries_total", "op=\"get\""), 2u);
}

// ThroughputExceeded is the table's verdict: answered to the client at once
// (429, its code named), neither retried nor sent to another replica, and
// the write is not applied.
TEST_P(RouterRoutingTest, ThroughputExceededIsAnsweredNotRetried) {
  {
    std::lock_guard lock(cluster_.mu);
    cluster_.fail_next = Status::ThroughputExceeded("write capacity of partition 1 exceeded");
    cluster_.calls_per_node.clear();
  }
  const HttpReply put = Do("PUT", "/kv/kv/k1", "v");
  EXPECT_EQ(put.status, 429u) << put.body;
  EXPECT_NE(put.body.find("\"code\":\"ThroughputExceeded\""), std::string::npos) << put.body;
  EXPECT_EQ(Counter("tessera_router_retries_total", "op=\"put\""), 0u);
  {
    std::lock_guard lock(cluster_.mu);
    int calls = 0;
    for (const auto& [node, n] : cluster_.calls_per_node) calls += n;
    EXPECT_EQ(calls, 1) << "sent once, to one replica";
  }
  EXPECT_EQ(Do("GET", "/kv/kv/k1").status, 404u) << "not applied";
}

// A node's own Unavailable answer leaves a write's outcome unknown, even
// when worded like the channel's "never sent" refusal: the router decides
// from the typed send outcome, not from the text. A read is simply retried.
TEST_P(RouterRoutingTest, AnAnsweredFailureIsNotTakenForAnUnsentWriteByItsWords) {
  const Status worded_like_unsent =
      Status::Unavailable("rpc channel to 127.0.0.1:1 is waiting to reconnect");
  {
    std::lock_guard lock(cluster_.mu);
    cluster_.fail_next = worded_like_unsent;
    cluster_.calls_per_node.clear();
  }
  HttpReply put = Do("PUT", "/kv/kv/w", "v");
  EXPECT_EQ(put.status, 504u) << put.body;
  EXPECT_NE(put.body.find("write outcome unknown"), std::string::npos) << put.body;
  {
    std::lock_guard lock(cluster_.mu);
    EXPECT_EQ(cluster_.calls_per_node[1], 1) << "the write was sent once";
    cluster_.fail_next = worded_like_unsent;
  }
  EXPECT_EQ(Do("GET", "/kv/kv/w").status, 404u) << "a read is retried";
  EXPECT_EQ(Counter("tessera_router_retries_total", "op=\"put\""), 0u);
}

// A write whose target node cannot be reached was provably never sent
// (the channel says so in a typed field): the router sends it elsewhere.
TEST_P(RouterRoutingTest, AWriteToAnUnreachableNodeIsSentElsewhere) {
  {
    std::lock_guard lock(cluster_.mu);
    cluster_.groups[1].meta_hint = kDeadNodeId;  // MemDS names a dead node
  }
  HttpReply put = Do("PUT", "/kv/kv/apple", "green");
  ASSERT_EQ(put.status, 200u) << put.body;
  EXPECT_EQ(Do("GET", "/kv/kv/apple").body, "green");
  EXPECT_GE(Counter("tessera_router_retries_total", "op=\"put\""), 1u);
}

// A leader that stops answering (paused, or cut off in the kernel) costs
// the call sent into its silence, and only that one: the router then looks
// past it, asks the other replicas until they name a new leader, and later
// writes go there instead of each waiting out rpc_timeout_ms on the old one.
TEST_P(RouterRoutingTest, ALeaderThatStopsAnsweringIsLookedPastAfterOneTimeout) {
  ASSERT_EQ(Do("PUT", "/kv/kv/apple", "red").status, 200u);
  {
    std::lock_guard lock(cluster_.mu);
    cluster_.paused.insert(1);
    cluster_.calls_per_node.clear();
  }
  HttpReply first = Do("PUT", "/kv/kv/apple", "green");
  EXPECT_EQ(first.status, 504u) << "sent into the silence: outcome unknown. " << first.body;
  // The followers still name node 1 until they elect another leader.
  auto during_election = std::async(std::launch::async, [&] { return Do("PUT", "/kv/kv/apple", "blue"); });
  std::this_thread::sleep_for(200ms);
  {
    std::lock_guard lock(cluster_.mu);
    cluster_.groups[1].leader = 2;
  }
  HttpReply elected = during_election.get();
  EXPECT_EQ(elected.status, 200u) << elected.body;
  for (int i = 0; i < 5; ++i) {
    HttpReply put = Do("PUT", "/kv/kv/apple", "v" + std::to_string(i));
    EXPECT_EQ(put.status, 200u) << put.body;
  }
  EXPECT_EQ(Do("GET", "/kv/kv/apple").body, "v4");
  std::lock_guard lock(cluster_.mu);
  EXPECT_EQ(cluster_.calls_per_node[1], 1) << "only the first write went to the silent node";
  EXPECT_GE(cluster_.calls_per_node[2], 6);
  cluster_.unanswered.clear();
}

TEST_P(RouterRoutingTest, NoQuorumIsA503NotAHang) {
  ASSERT_EQ(Do("PUT", "/kv/kv/q", "v").status, 200u);
  {
    std::lock_guard lock(cluster_.mu);
    cluster_.groups[2].leader = 0;
  }
  for (const char* method : {"GET", "PUT"}) {
    const auto start = Clock::now();
    HttpReply reply = Do(method, "/kv/kv/q", "v2");
    const auto elapsed = Clock::now() - start;
    EXPECT_EQ(reply.status, 503u) << method << " " << reply.body;
    EXPECT_NE(reply.body.find("partition has no leader / no quorum"), std::string::npos) << reply.body;
    EXPECT_LT(elapsed, 3s) << "bounded by the 1.5 s request deadline";
  }
  EXPECT_EQ(Do("GET", "/kv/kv/a").status, 404u) << "the other partition still serves";
}

TEST_P(RouterRoutingTest, PollsForALeaderElectedWhileItWaits) {
  ASSERT_EQ(Do("PUT", "/kv/kv/q", "v").status, 200u);
  auto node_calls = [&] {
    int sum = 0;
    for (const auto& [node, calls] : cluster_.calls_per_node) sum += calls;
    return sum;
  };
  int calls_before = 0;
  {
    std::lock_guard lock(cluster_.mu);
    cluster_.groups[2].leader = 0;  // an election: every replica says NotLeader, no hint
    calls_before = node_calls();
  }
  auto put = std::async(std::launch::async, [&] { return Do("PUT", "/kv/kv/q", "v2"); });
  std::this_thread::sleep_for(600ms);
  int calls_during = 0;
  {
    std::lock_guard lock(cluster_.mu);
    calls_during = node_calls() - calls_before;
    cluster_.groups[2].leader = 3;  // elected
  }
  HttpReply reply = put.get();
  EXPECT_EQ(reply.status, 200u) << reply.body;
  EXPECT_EQ(Do("GET", "/kv/kv/q").body, "v2");
  // Backing off exponentially towards backoff_max_ms (1 s here) would have
  // made about 7 attempts in those 600 ms (8 + 16 + ... + 256 ms, times a
  // factor in [0.5, 1)); polling at most every 20 ms makes 30 or more.
  EXPECT_GE(calls_during, 15);
}

TEST_P(RouterRoutingTest, ScanWalksPartitionsInKeyOrder) {
  const std::vector<std::string> keys = {"a", "c", "k", "l", "m", "n", "x", "z"};
  for (const std::string& k : keys) ASSERT_EQ(Do("PUT", "/kv/kv/" + k, "v-" + k).status, 200u);
  HttpReply all = Do("GET", "/kv/kv?limit=100");
  ASSERT_EQ(all.status, 200u) << all.body;
  std::string expected = "{\"items\":[";
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) expected += ",";
    expected += "{\"key\":\"" + keys[i] + "\",\"value\":\"v-" + keys[i] + "\",\"version\":" +
                std::to_string(i + 1) + "}";
  }
  expected += "],\"next\":null}\n";
  EXPECT_EQ(all.body, expected);

  // Pages of 3 resume across the boundary at "m".
  std::vector<std::string> seen;
  std::string start;
  for (int page = 0; page < 10; ++page) {
    HttpReply r = Do("GET", "/kv/kv?limit=3&start=" + PercentEncode(start));
    ASSERT_EQ(r.status, 200u) << r.body;
    for (size_t pos = 0; (pos = r.body.find("{\"key\":\"", pos)) != std::string::npos;) {
      pos += 8;
      seen.push_back(r.body.substr(pos, r.body.find('"', pos) - pos));
    }
    const size_t next = r.body.find("\"next\":\"");
    if (next == std::string::npos) break;
    start = r.body.substr(next + 8, r.body.find('"', next + 8) - next - 8);
  }
  EXPECT_EQ(seen, keys);

  HttpReply middle = Do("GET", "/kv/kv?start=l&end=x");
  EXPECT_NE(middle.body.find("\"key\":\"l\""), std::string::npos);
  EXPECT_NE(middle.body.find("\"key\":\"n\""), std::string::npos);
  EXPECT_EQ(middle.body.find("\"key\":\"x\""), std::string::npos) << "end is exclusive";
  EXPECT_EQ(Do("GET", "/kv/kv?limit=0").status, 400u);
}

TEST_P(RouterRoutingTest, MemdsRequestsPerOperationAreTheSameColdOrWarm) {
  const uint64_t before = Counter("tessera_router_memds_requests_total");
  ASSERT_EQ(Do("GET", "/kv/kv/a").status, 404u);  // cold: one synchronous lookup
  EXPECT_EQ(Counter("tessera_router_route_cache_misses_total"), 1u);
  EXPECT_EQ(Counter("tessera_router_memds_requests_total") - before, 1u);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(Do("GET", "/kv/kv/b").status, 404u);  // warm
  EXPECT_EQ(Counter("tessera_router_route_cache_hits_total"), 20u);
  EXPECT_EQ(Counter("tessera_router_memds_requests_total") - before +
                Counter("tessera_router_memds_async_skipped_total"),
            21u);
  // The asynchronous lookups reach the (live) meta replica eventually, via
  // failover from the dead one.
  const auto deadline = Clock::now() + 5s;
  for (;;) {
    {
      std::lock_guard lock(cluster_.mu);
      if (cluster_.lookups >= 21 - static_cast<int>(Counter("tessera_router_memds_async_skipped_total"))) break;
    }
    ASSERT_LT(Clock::now(), deadline);
    std::this_thread::sleep_for(5ms);
  }
}

// A partition split while the router holds its old route: the old group
// answers WrongPartition, the router re-resolves and resends, and the
// client sees every operation succeed and a scan return each key once.
TEST_P(RouterRoutingTest, ASplitIsFollowedWithoutClientErrors) {
  const std::vector<std::string> keys = {"a", "n", "p", "t", "u", "z"};
  for (const std::string& k : keys) ASSERT_EQ(Do("PUT", "/kv/kv/" + k, "v-" + k).status, 200u);
  ASSERT_EQ(Do("GET", "/kv/kv?limit=100").status, 200u);  // routes cached: group 2 is [m, "")
  {
    std::lock_guard lock(cluster_.mu);
    cluster_.SplitGroup2("t");
    cluster_.meta_knows_split = true;
  }
  HttpReply u = Do("GET", "/kv/kv/u");
  EXPECT_EQ(u.status, 200u) << u.body;
  EXPECT_NE(u.body.find("v-u"), std::string::npos) << u.body;
  HttpReply put = Do("PUT", "/kv/kv/w", "v-w");
  EXPECT_EQ(put.status, 200u) << put.body;
  HttpReply all = Do("GET", "/kv/kv?limit=100");
  ASSERT_EQ(all.status, 200u) << all.body;
  std::vector<std::string> seen;
  for (size_t pos = 0; (pos = all.body.find("{\"key\":\"", pos)) != std::string::npos;) {
    pos += 8;
    seen.push_back(all.body.substr(pos, all.body.find('"', pos) - pos));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "n", "p", "t", "u", "w", "z"}));
  std::lock_guard lock(cluster_.mu);
  EXPECT_GT(cluster_.wrong_partition_answers, 0);
  EXPECT_EQ(cluster_.groups[2].data.count("w"), 0u);
  EXPECT_EQ(cluster_.groups[3].data.count("w"), 1u);
}

// While meta's map does not show the split yet, the router keeps asking
// and the client gets a retryable 503 "Unavailable", never the node's
// WrongPartition.
TEST_P(RouterRoutingTest, WrongPartitionNeverReachesTheClient) {
  ASSERT_EQ(Do("PUT", "/kv/kv/u", "v-u").status, 200u);
  {
    std::lock_guard lock(cluster_.mu);
    cluster_.SplitGroup2("t");  // meta_knows_split stays false
  }
  HttpReply get = Do("GET", "/kv/kv/u");
  EXPECT_EQ(get.status, 503u) << get.body;
  EXPECT_NE(get.body.find("\"Unavailable\""), std::string::npos) << get.body;
  EXPECT_EQ(get.body.find("WrongPartition"), std::string::npos) << get.body;
  std::lock_guard lock(cluster_.mu);
  EXPECT_GT(cluster_.wrong_partition_answers, 1);
  EXPECT_EQ(cluster_.groups[3].data.count("u"), 1u);
}

INSTANTIATE_TEST_SUITE_P(Transports, RouterRoutingTest,
                         ::testing::Values(Transport::kHttp, Transport::kDirect),
                         [](const ::testing::TestParamInfo<Transport>& param_info) {
                           return param_info.param == Transport::kHttp ? "Http" : "Direct";
                         });

}  // namespace
}  // namespace tessera::router
