// Goal: the registry cache never lets an older answer replace or drop a
// newer entry and stays bounded; RegistryClient fails reads over to the
// next meta replica, fails writes over only when they surely did not run
// (NotLeader), returns a write's Timeout instead of repeating it, and asks
// reads for the version of its own last write; a miss a lagging replica
// answers "absent" is asked of the meta leader once, and leader-confirmed
// absences are cached briefly and boundedly. Fake meta RpcServers.
#include "router/registry_client.h"

#include <gtest/gtest.h>

#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "rpc/rpc_test_util.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::router {
namespace {

using namespace std::chrono_literals;

TEST(VersionedCache, OlderAnswersLose) {
  VersionedCache<int> cache(10);
  EXPECT_TRUE(cache.Put("a", 1, 5));
  EXPECT_FALSE(cache.Put("a", 2, 4));  // older: ignored
  EXPECT_EQ(cache.Find("a"), 1);
  EXPECT_TRUE(cache.Put("a", 3, 5));  // same version: refreshed
  EXPECT_EQ(cache.Find("a"), 3);
  EXPECT_FALSE(cache.Drop("a", 4));  // a NotFound older than the entry
  EXPECT_EQ(cache.Find("a"), 3);
  EXPECT_TRUE(cache.Drop("a", 6));
  EXPECT_FALSE(cache.Find("a"));
  EXPECT_FALSE(cache.Drop("a"));
}

TEST(VersionedCache, FullCacheStartsOver) {
  VersionedCache<int> cache(3);
  for (int i = 0; i < 3; ++i) cache.Put("k" + std::to_string(i), i, 1);
  EXPECT_EQ(cache.size(), 3u);
  cache.Put("k1", 10, 2);  // an update does not grow it
  EXPECT_EQ(cache.size(), 3u);
  cache.Put("k9", 9, 1);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Find("k9"), 9);
}

class RegistryClientFakeTest : public rpc::testing::RpcTest {
 protected:
  enum class WriteMode { kNotLeader, kSilent, kOutcomeUnknown };

  void SetUp() override {
    // 101: every read Unavailable (behind); writes per mode_. 102: answers.
    bad_ = StartServer(101, {{"meta.get_bucket", Unavailable(&bad_reads_)},
                             {"meta.create_bucket", BadWrite()}});
    good_ = StartServer(102, {{"meta.get_bucket", GoodRead()}, {"meta.create_bucket", GoodWrite()}});
    rpc::ChannelOptions defaults;
    defaults.identity = rpc::testing::MakeIdentity(201, "router");
    pool_ = std::make_unique<rpc::ChannelPool>(context(), defaults);
    ASSERT_TRUE(pool_->SetPeerAddress(101, "127.0.0.1", bad_->port()).ok());
    ASSERT_TRUE(pool_->SetPeerAddress(102, "127.0.0.1", good_->port()).ok());
    RegistryClientOptions options;
    options.meta_ids = {101, 102};
    options.write_timeout_ms = 300;
    client_ = std::make_unique<RegistryClient>(*pool_, metrics_, options);
  }

  void TearDown() override {
    {
      std::lock_guard lock(mu_);
      held_.clear();  // silent writes answer Aborted now
    }
    bad_->Stop();
    good_->Stop();
  }

  rpc::Handler Unavailable(int* count) {
    return [this, count](const rpc::PeerInfo&, const pb::Envelope&, rpc::Responder r) {
      std::lock_guard lock(mu_);
      ++*count;
      r.Fail(Status::Unavailable("behind"));
    };
  }
  rpc::Handler GoodRead() {
    return [this](const rpc::PeerInfo&, const pb::Envelope& e, rpc::Responder r) {
      pb::GetBucketRequest req;
      ASSERT_TRUE(req.ParseFromString(e.payload()));
      pb::GetBucketResponse resp;
      {
        std::lock_guard lock(mu_);
        ++good_reads_;
        min_versions_.push_back(req.min_version());
      }
      resp.set_found(true);
      resp.mutable_bucket()->set_name(req.name());
      resp.mutable_bucket()->set_bucket_id(42);
      resp.set_map_version(100);
      r.Reply(resp.SerializeAsString());
    };
  }
  rpc::Handler BadWrite() {
    return [this](const rpc::PeerInfo&, const pb::Envelope&, rpc::Responder r) {
      std::lock_guard lock(mu_);
      ++bad_writes_;
      if (mode_ == WriteMode::kNotLeader) return r.Fail(Status::NotLeader(0));
      // A leader whose proposal timed out: it cannot tell whether it applied.
      if (mode_ == WriteMode::kOutcomeUnknown) return r.Fail(Status::Unavailable("proposal"));
      held_.push_back(r);  // kSilent: never answered
    };
  }
  rpc::Handler GoodWrite() {
    return [this](const rpc::PeerInfo&, const pb::Envelope& e, rpc::Responder r) {
      pb::CreateBucketRequest req;
      ASSERT_TRUE(req.ParseFromString(e.payload()));
      {
        std::lock_guard lock(mu_);
        ++good_writes_;
      }
      pb::CreateBucketResponse resp;
      resp.mutable_bucket()->set_name(req.name());
      resp.mutable_bucket()->set_bucket_id(7);
      resp.set_map_version(500);
      r.Reply(resp.SerializeAsString());
    };
  }

  Result<pb::BucketDescriptor> Get(const std::string& name) {
    std::promise<Result<pb::BucketDescriptor>> p;
    client_->GetBucket(name, [&p](Result<pb::BucketDescriptor> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }
  Result<CreatedBucket> Create(const std::string& name) {
    pb::CreateBucketRequest req;
    req.set_name(name);
    req.set_owner("ann");
    std::promise<Result<CreatedBucket>> p;
    client_->CreateBucket(req, [&p](Result<CreatedBucket> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }

  metrics::Registry metrics_;
  std::unique_ptr<rpc::RpcServer> bad_;
  std::unique_ptr<rpc::RpcServer> good_;
  std::unique_ptr<rpc::ChannelPool> pool_;
  std::unique_ptr<RegistryClient> client_;
  std::mutex mu_;  // guards the counters, mode_, held_, min_versions_
  int bad_reads_ = 0, good_reads_ = 0, bad_writes_ = 0, good_writes_ = 0;
  WriteMode mode_ = WriteMode::kSilent;
  std::vector<rpc::Responder> held_;
  std::vector<uint64_t> min_versions_;
};

TEST_F(RegistryClientFakeTest, ReadsFailOverWritesOnlyWhenSafe) {
  // Rotation starts half the reads at 101, which is behind: they fail over.
  for (int i = 0; i < 4; ++i) {
    auto got = Get("b" + std::to_string(i));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->bucket_id(), 42u);
  }
  {
    std::lock_guard lock(mu_);
    EXPECT_EQ(bad_reads_, 2);
    EXPECT_EQ(good_reads_, 4);
  }
  // The 5th request starts at 101, which never answers: Timeout, not retried.
  auto timed_out = Create("alpha");
  EXPECT_EQ(timed_out.status().code(), StatusCode::kTimeout);
  {
    std::lock_guard lock(mu_);
    EXPECT_EQ(bad_writes_, 1);
    EXPECT_EQ(good_writes_, 0);
    mode_ = WriteMode::kNotLeader;
  }
  // The 6th starts at 102; the 7th at 101, which refuses: NotLeader fails over.
  ASSERT_TRUE(Create("beta").ok());
  auto moved = Create("gamma");
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(moved->bucket.bucket_id(), 7u);
  {
    std::lock_guard lock(mu_);
    EXPECT_EQ(bad_writes_, 2);
    EXPECT_EQ(good_writes_, 2);
  }
  // Reads now ask for the version of the client's own last write.
  EXPECT_EQ(client_->floor_version(), 500u);
  ASSERT_TRUE(Get("unseen").ok());
  std::lock_guard lock(mu_);
  EXPECT_EQ(min_versions_.front(), 0u);
  EXPECT_EQ(min_versions_.back(), 500u);
}

// A write goes to another replica only when it provably was not applied:
// never sent, or refused; an answer that cannot tell is the caller's.
TEST_F(RegistryClientFakeTest, WritesGoElsewhereOnlyWhenProvablyNotApplied) {
  {
    std::lock_guard lock(mu_);
    mode_ = WriteMode::kOutcomeUnknown;
  }
  auto unknown = Create("alpha");  // starts at 101
  EXPECT_EQ(unknown.status().code(), StatusCode::kUnavailable);
  {
    std::lock_guard lock(mu_);
    EXPECT_EQ(bad_writes_, 1);
    EXPECT_EQ(good_writes_, 0);
  }
  ASSERT_TRUE(Create("beta").ok());  // starts at 102
  // 101 is gone: the write never leaves this process, so 102 gets it.
  bad_->Stop();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto resent = Create("gamma");  // starts at 101
  ASSERT_TRUE(resent.ok()) << resent.status().ToString();
  std::lock_guard lock(mu_);
  EXPECT_EQ(bad_writes_, 1);
  EXPECT_EQ(good_writes_, 2);
}

// New-key visibility: 101 and 103 are lagging followers (they know no key
// and no bucket); 102 leads and knows key "NEWKEY" and bucket "fresh". 103
// names 102 as its leader; 101 names none.
class RegistryLeaderReadTest : public rpc::testing::RpcTest {
 protected:
  void SetUp() override {
    for (uint32_t id : {101u, 102u, 103u}) {
      servers_.push_back(StartServer(id, {{"meta.get_user_by_key", GetKey(id)},
                                          {"meta.get_bucket", GetBucketOn(id)},
                                          {"admin.status", StatusOf(id)}}));
    }
    rpc::ChannelOptions defaults;
    defaults.identity = rpc::testing::MakeIdentity(201, "router");
    pool_ = std::make_unique<rpc::ChannelPool>(context(), defaults);
    for (size_t i = 0; i < servers_.size(); ++i) {
      ASSERT_TRUE(pool_->SetPeerAddress(101 + static_cast<uint32_t>(i), "127.0.0.1",
                                        servers_[i]->port())
                      .ok());
    }
  }
  void TearDown() override {
    // A cache hit's refresh may still be in flight: the client must outlive it.
    for (int i = 0; i < 500 && client_ && client_->async_inflight() > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(!client_ || client_->async_inflight() == 0);
    for (auto& server : servers_) server->Stop();
    pool_.reset();
    client_.reset();
  }

  // Rotation: the first lookup goes to 101 (absent), the leader search
  // starts at 103, which names 102.
  void MakeClient(size_t leader_reads_max = limits::kS3RegistryLeaderReadsMax) {
    RegistryClientOptions options;
    options.meta_ids = {101, 103, 102};
    options.leader_reads_max = leader_reads_max;
    options.negative_ttl_ms = 1'000;
    options.clock = [this] {
      std::lock_guard lock(mu_);
      return now_;
    };
    client_ = std::make_unique<RegistryClient>(*pool_, metrics_, options);
  }

  rpc::Handler GetKey(uint32_t id) {
    return [this, id](const rpc::PeerInfo&, const pb::Envelope& e, rpc::Responder r) {
      pb::GetUserByKeyRequest req;
      ASSERT_TRUE(req.ParseFromString(e.payload()));
      pb::GetUserByKeyResponse resp;
      {
        std::lock_guard lock(mu_);
        ++key_reads_[id];
        if (id == 102) leader_min_versions_.push_back(req.min_version());
      }
      if (id == 102 && req.access_key() == "NEWKEY") {
        resp.set_found(true);
        resp.set_name("ann");
        resp.set_secret_key("s3cr3t");
      }
      resp.set_map_version(id == 102 ? 50 : 10);
      r.Reply(resp.SerializeAsString());
    };
  }
  rpc::Handler GetBucketOn(uint32_t id) {
    return [this, id](const rpc::PeerInfo&, const pb::Envelope& e, rpc::Responder r) {
      pb::GetBucketRequest req;
      ASSERT_TRUE(req.ParseFromString(e.payload()));
      pb::GetBucketResponse resp;
      {
        std::lock_guard lock(mu_);
        ++bucket_reads_[id];
      }
      if (id == 102 && req.name() == "fresh") {
        resp.set_found(true);
        resp.mutable_bucket()->set_name("fresh");
        resp.mutable_bucket()->set_bucket_id(9);
      }
      resp.set_map_version(id == 102 ? 50 : 10);
      r.Reply(resp.SerializeAsString());
    };
  }
  rpc::Handler StatusOf(uint32_t id) {
    return [this, id](const rpc::PeerInfo&, const pb::Envelope&, rpc::Responder r) {
      {
        std::lock_guard lock(mu_);
        ++status_calls_[id];
      }
      pb::NodeStatus status;
      status.set_node_id(id);
      pb::GroupStatusProto* g = status.add_groups();
      g->set_role(id == 102 ? "leader" : "follower");
      g->set_leader(id == 103 ? 102 : (id == 102 ? 102 : 0));
      g->set_applied(id == 102 ? 50 : 10);
      r.Reply(status.SerializeAsString());
    };
  }

  Result<UserSecret> Secret(const std::string& key) {
    std::promise<Result<UserSecret>> p;
    client_->SecretOf(key, [&p](Result<UserSecret> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }
  Result<pb::BucketDescriptor> Bucket(const std::string& name) {
    std::promise<Result<pb::BucketDescriptor>> p;
    client_->GetBucket(name, [&p](Result<pb::BucketDescriptor> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }
  int KeyReads(uint32_t id) {
    std::lock_guard lock(mu_);
    return key_reads_[id];
  }
  int StatusCalls(uint32_t id) {
    std::lock_guard lock(mu_);
    return status_calls_[id];
  }
  uint64_t CounterValue(const char* name, const char* kind) {
    const std::string text = metrics_.RenderText();
    const std::string series = std::string(name) + "{kind=\"" + kind + "\"} ";
    const size_t at = text.find(series);
    return at == std::string::npos ? 0 : std::stoull(text.substr(at + series.size()));
  }
  void Advance(std::chrono::milliseconds d) {
    std::lock_guard lock(mu_);
    now_ += d;
  }

  metrics::Registry metrics_;
  std::vector<std::unique_ptr<rpc::RpcServer>> servers_;
  std::unique_ptr<rpc::ChannelPool> pool_;
  std::unique_ptr<RegistryClient> client_;
  std::mutex mu_;  // guards the maps below and now_
  std::map<uint32_t, int> key_reads_, bucket_reads_, status_calls_;
  std::vector<uint64_t> leader_min_versions_;
  std::chrono::steady_clock::time_point now_{std::chrono::seconds(100)};
};

TEST_F(RegistryLeaderReadTest, KeyAbsentOnAReplicaIsFoundOnTheLeader) {
  MakeClient();
  auto got = Secret("NEWKEY");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->user, "ann");
  EXPECT_EQ(got->secret_key, "s3cr3t");
  EXPECT_EQ(KeyReads(101), 1);  // the lagging replica said absent
  EXPECT_EQ(StatusCalls(103), 1);  // a follower named the leader
  EXPECT_EQ(StatusCalls(102), 1);
  EXPECT_EQ(KeyReads(102), 1);  // one leader read
  EXPECT_EQ(client_->leader_hint(), 102u);
  {
    std::lock_guard lock(mu_);
    ASSERT_EQ(leader_min_versions_.size(), 1u);
    EXPECT_EQ(leader_min_versions_[0], 50u);  // at least the leader's applied slot
  }
  EXPECT_EQ(CounterValue("tessera_router_registry_leader_found_total", "key"), 1u);
  // Now cached: a hit (its async refresh goes to a replica, not the leader
  // search).
  EXPECT_EQ(client_->cached_keys(), 1u);
  ASSERT_TRUE(Secret("NEWKEY").ok());
  EXPECT_EQ(CounterValue("tessera_router_registry_leader_reads_total", "key"), 1u);
}

TEST_F(RegistryLeaderReadTest, BadKeysAskTheLeaderOncePerTtl) {
  MakeClient();
  EXPECT_EQ(Secret("BADKEY").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(KeyReads(102), 1);
  EXPECT_EQ(client_->negative_keys(), 1u);
  const int reads_before = KeyReads(101) + KeyReads(102) + KeyReads(103);
  // A flood of the same bad key within the TTL: answered from the
  // remembered absence with no further leader read; each answer still sends
  // the same lookup (the MemDS rule: meta traffic does not depend on the
  // hit rate), bounded by the async slots.
  for (int i = 0; i < 20; ++i) EXPECT_EQ(Secret("BADKEY").status().code(), StatusCode::kNotFound);
  for (int i = 0; i < 500 && client_->async_inflight() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(CounterValue("tessera_router_registry_leader_reads_total", "key"), 1u);
  EXPECT_EQ(KeyReads(101) + KeyReads(102) + KeyReads(103), reads_before + 20);
  EXPECT_EQ(CounterValue("tessera_router_registry_negative_hits_total", "key"), 20u);
  // After the TTL the key is looked up (and confirmed with the leader) again.
  Advance(std::chrono::milliseconds(1'001));
  EXPECT_EQ(Secret("BADKEY").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(CounterValue("tessera_router_registry_leader_reads_total", "key"), 2u);
  {
    std::lock_guard lock(mu_);
    EXPECT_EQ(leader_min_versions_.back(), 50u);  // the second leader read
  }
  // The known leader is asked directly now: no follower status call.
  EXPECT_EQ(StatusCalls(103), 1);
  EXPECT_EQ(StatusCalls(102), 2);
}

TEST_F(RegistryLeaderReadTest, LeaderReadsAreBounded) {
  MakeClient(/*leader_reads_max=*/0);
  // The replica's "absent" is unconfirmed: retryable, never "does not exist".
  EXPECT_EQ(Secret("NEWKEY").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(KeyReads(102), 0);
  EXPECT_EQ(StatusCalls(102) + StatusCalls(103) + StatusCalls(101), 0);
  EXPECT_EQ(client_->negative_keys(), 0u);  // unconfirmed absences are not cached
  EXPECT_EQ(CounterValue("tessera_router_registry_leader_reads_skipped_total", "key"), 1u);
}

TEST_F(RegistryLeaderReadTest, BucketAbsentOnAReplicaIsFoundOnTheLeader) {
  MakeClient();
  auto fresh = Bucket("fresh");
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_EQ(fresh->bucket_id(), 9u);
  EXPECT_EQ(client_->cached_buckets(), 1u);
  EXPECT_EQ(Bucket("nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(client_->negative_buckets(), 1u);
  EXPECT_EQ(Bucket("nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(CounterValue("tessera_router_registry_negative_hits_total", "bucket"), 1u);
  EXPECT_EQ(CounterValue("tessera_router_registry_leader_reads_total", "bucket"), 2u);
}

TEST(NegativeCache, ExpiresAndStaysBounded) {
  using Clock = NegativeCache::Clock;
  const Clock::time_point t0{std::chrono::seconds(10)};
  NegativeCache cache(2);
  cache.Put("a", t0 + std::chrono::seconds(1), t0);
  EXPECT_TRUE(cache.Contains("a", t0));
  EXPECT_FALSE(cache.Contains("a", t0 + std::chrono::seconds(1)));  // expired: dropped
  EXPECT_EQ(cache.size(), 0u);
  cache.Put("a", t0 + std::chrono::seconds(1), t0);
  cache.Put("b", t0 + std::chrono::seconds(5), t0);
  cache.Put("c", t0 + std::chrono::seconds(5), t0 + std::chrono::seconds(2));  // "a" expired
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(cache.Contains("b", t0 + std::chrono::seconds(2)));
  cache.Put("d", t0 + std::chrono::seconds(9), t0 + std::chrono::seconds(2));  // none expired
  EXPECT_EQ(cache.size(), 1u);
  cache.Drop("d");
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace tessera::router
