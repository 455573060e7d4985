// Goal: the registry cache never lets an older answer replace or drop a
// newer entry and stays bounded; RegistryClient fails reads over to the
// next meta replica, fails writes over only when they surely did not run
// (NotLeader), returns a write's Timeout instead of repeating it, and asks
// reads for the version of its own last write. Fake meta RpcServers.
#include "router/registry_client.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>

#include "rpc/rpc_test_util.h"

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
  enum class WriteMode { kAnswer, kNotLeader, kSilent };

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

}  // namespace
}  // namespace tessera::router
