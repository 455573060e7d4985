// Goal: on three real `tessera meta` processes, the bucket registry creates,
// finds, lists, versions and deletes buckets (both conflict kinds; of
// concurrent creates of one name exactly one wins), users are created
// idempotently and found by access key on every replica, and the router's
// RegistryClient caches with the MemDS rule (a hit still issues a lookup),
// reads its own writes and fails over when a replica dies.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <boost/asio/ip/tcp.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <thread>

#include "meta/meta_process_fixture.h"
#include "meta/registry_keys.h"
#include "router/registry_client.h"
#include "rpc/channel_pool.h"
#include "rpc/rpc_test_util.h"
#include "tessera/cluster_rpc.pb.h"
#include "tessera/s3_registry.pb.h"

namespace tessera::meta {
namespace {

using namespace std::chrono_literals;
using rpc::testing::CallSync;
using rpc::testing::WaitFor;

const std::string kSecret = "registry-process-test-secret-0123456789";
using testing::kMetas;

class RegistryProcessTest : public testing::MetaProcessFixture {
 protected:
  void SetUp() override {
    expect_clean_exit_ = false;
    StartMetas("tessera-registry", kSecret);
    CreateS3Table();
  }

  template <typename Response>
  Result<Response> Call(uint32_t meta, const std::string& method, const std::string& payload,
                        std::chrono::milliseconds timeout = 10s) {
    return MetaProcessFixture::Call<Response>(meta, method, payload, timeout);
  }

  // A mutation through `meta`, retried while the group elects a leader.
  template <typename Response, typename Request>
  Result<Response> Mutate(uint32_t meta, const std::string& method, const Request& request) {
    Status last = Status::Timeout("never tried");
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline) {
      auto r = Call<Response>(meta, method, request.SerializeAsString());
      const StatusCode code = r.status().code();
      if (r.ok() || code == StatusCode::kConflict || code == StatusCode::kInvalidArgument ||
          code == StatusCode::kNotFound) {
        return r;
      }
      last = r.status();
      std::this_thread::sleep_for(100ms);
    }
    return last;
  }

  void CreateS3Table() {
    pb::CreateTableRequest request;
    request.set_name(std::string(kS3TableName));
    for (const std::string& p : S3TableSplitPoints(kS3TablePartitions)) request.add_split_points(p);
    auto created = Mutate<pb::CreateTableResponse>(101, "meta.create_table", request);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    ASSERT_EQ(created->partitions_size(), static_cast<int>(kS3TablePartitions));
    s3_partitions_.assign(created->partitions().begin(), created->partitions().end());
  }

  Result<pb::CreateBucketResponse> CreateBucket(uint32_t meta, const std::string& name,
                                                const std::string& owner, uint64_t id = 0) {
    pb::CreateBucketRequest r;
    r.set_name(name);
    r.set_owner(owner);
    r.set_region("us-east-1");
    r.set_bucket_id(id);
    return Mutate<pb::CreateBucketResponse>(meta, "meta.create_bucket", r);
  }

  Result<pb::GetBucketResponse> GetBucket(uint32_t meta, const std::string& name,
                                          uint64_t min_version) {
    pb::GetBucketRequest r;
    r.set_name(name);
    r.set_min_version(min_version);
    return Call<pb::GetBucketResponse>(meta, "meta.get_bucket", r.SerializeAsString(), 2s);
  }

  // Waits until every replica has applied `version`; returns whether all did.
  bool AllAt(uint64_t version) {
    for (uint32_t id : kMetas) {
      if (!WaitFor([&] { return GetBucket(id, "x-probe", version).ok(); }, 15s)) return false;
    }
    return true;
  }

  std::vector<pb::PartitionDescriptor> s3_partitions_;
};

TEST_F(RegistryProcessTest, BucketsCreateFindListVersionDelete) {
  auto alpha = CreateBucket(102, "alpha", "ann");
  ASSERT_TRUE(alpha.ok()) << alpha.status().ToString();
  EXPECT_FALSE(alpha->already_owned_by_you());
  const pb::BucketDescriptor a = alpha->bucket();
  EXPECT_NE(a.bucket_id(), 0u);
  EXPECT_EQ(a.owner(), "ann");
  EXPECT_GT(a.created_ms(), 0);
  EXPECT_EQ(a.versioning(), pb::VERSIONING_UNSET);

  // Every replica serves it from memory once it reached the create's version.
  ASSERT_TRUE(AllAt(alpha->map_version()));
  for (uint32_t id : kMetas) {
    auto got = GetBucket(id, "alpha", alpha->map_version());
    ASSERT_TRUE(got.ok());
    EXPECT_TRUE(got->found());
    EXPECT_EQ(got->bucket().SerializeAsString(), a.SerializeAsString());
  }
  // A replica asked for a version it has not reached refuses instead of lying.
  EXPECT_EQ(GetBucket(101, "alpha", alpha->map_version() + 1'000'000).status().code(),
            StatusCode::kUnavailable);

  // Both conflict kinds.
  auto again = CreateBucket(103, "alpha", "ann");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->already_owned_by_you());
  EXPECT_EQ(again->bucket().bucket_id(), a.bucket_id());
  EXPECT_EQ(CreateBucket(101, "alpha", "bob").status().code(), StatusCode::kConflict);
  EXPECT_EQ(CreateBucket(101, "Bad_Name", "ann").status().code(), StatusCode::kInvalidArgument);

  // An explicit id, then the same id again.
  const uint64_t chosen = (3ull << 61) + 5;
  auto gamma = CreateBucket(101, "gamma", "bob", chosen);
  ASSERT_TRUE(gamma.ok()) << gamma.status().ToString();
  EXPECT_EQ(gamma->bucket().bucket_id(), chosen);
  EXPECT_EQ(CreateBucket(102, "delta", "bob", chosen).status().code(), StatusCode::kConflict);

  pb::ListBucketsRequest list;
  list.set_min_version(gamma->map_version());
  ASSERT_TRUE(AllAt(gamma->map_version()));
  auto all = Call<pb::ListBucketsResponse>(103, "meta.list_buckets", list.SerializeAsString());
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->buckets_size(), 2);
  EXPECT_EQ(all->buckets(0).name(), "alpha");
  EXPECT_EQ(all->buckets(1).name(), "gamma");
  list.set_owner("bob");
  auto bobs = Call<pb::ListBucketsResponse>(102, "meta.list_buckets", list.SerializeAsString());
  ASSERT_TRUE(bobs.ok());
  ASSERT_EQ(bobs->buckets_size(), 1);
  EXPECT_EQ(bobs->buckets(0).name(), "gamma");

  // Versioning.
  pb::SetBucketVersioningRequest v;
  v.set_name("alpha");
  v.set_state(pb::VERSIONING_ENABLED);
  // Only the owner, only while the name maps to the id the caller knows.
  v.set_owner("bob");
  EXPECT_EQ((Mutate<pb::SetBucketVersioningResponse>(103, "meta.set_bucket_versioning", v))
                .status()
                .code(),
            StatusCode::kConflict);
  v.set_owner("ann");
  v.set_bucket_id(a.bucket_id() + 1);
  EXPECT_EQ((Mutate<pb::SetBucketVersioningResponse>(103, "meta.set_bucket_versioning", v))
                .status()
                .code(),
            StatusCode::kNotFound);
  v.set_bucket_id(a.bucket_id());
  auto enabled = Mutate<pb::SetBucketVersioningResponse>(103, "meta.set_bucket_versioning", v);
  ASSERT_TRUE(enabled.ok());
  EXPECT_EQ(enabled->bucket().versioning(), pb::VERSIONING_ENABLED);
  EXPECT_EQ(enabled->bucket().bucket_id(), a.bucket_id());
  v.set_state(pb::VERSIONING_UNSET);
  EXPECT_EQ((Mutate<pb::SetBucketVersioningResponse>(103, "meta.set_bucket_versioning", v))
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  v.set_name("nope");
  v.set_state(pb::VERSIONING_SUSPENDED);
  EXPECT_EQ((Mutate<pb::SetBucketVersioningResponse>(103, "meta.set_bucket_versioning", v))
                .status()
                .code(),
            StatusCode::kNotFound);

  // Delete: only the owner, only the named id; ids are never reused.
  pb::DeleteBucketRequest del;
  del.set_name("alpha");
  del.set_owner("bob");
  EXPECT_EQ((Mutate<pb::DeleteBucketResponse>(101, "meta.delete_bucket", del)).status().code(),
            StatusCode::kConflict);
  del.set_owner("ann");
  del.set_bucket_id(a.bucket_id() + 1);
  EXPECT_EQ((Mutate<pb::DeleteBucketResponse>(101, "meta.delete_bucket", del)).status().code(),
            StatusCode::kNotFound);
  del.set_bucket_id(a.bucket_id());
  auto deleted = Mutate<pb::DeleteBucketResponse>(101, "meta.delete_bucket", del);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(deleted->bucket().versioning(), pb::VERSIONING_ENABLED);
  ASSERT_TRUE(AllAt(deleted->map_version()));
  for (uint32_t id : kMetas) EXPECT_FALSE(GetBucket(id, "alpha", deleted->map_version())->found());
  EXPECT_EQ((Mutate<pb::DeleteBucketResponse>(102, "meta.delete_bucket", del)).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(CreateBucket(102, "other", "ann", a.bucket_id()).status().code(),
            StatusCode::kConflict);
  auto recreated = CreateBucket(102, "alpha", "bob");
  ASSERT_TRUE(recreated.ok());
  EXPECT_FALSE(recreated->already_owned_by_you());
  EXPECT_NE(recreated->bucket().bucket_id(), a.bucket_id());
}

class RegistryBucketLimitTest : public RegistryProcessTest {
 protected:
  void SetUp() override {
    extra_layout_ = "meta_settings { s3_user_buckets_max: 3 }\n";
    RegistryProcessTest::SetUp();
  }
};

// Goal: one user owns at most meta_settings.s3_user_buckets_max buckets; the
// next create is refused with a typed answer (S3's TooManyBuckets) and
// creates nothing; other users are not affected, asking again for an owned
// bucket still answers it, and a deleted bucket frees its place.
TEST_F(RegistryBucketLimitTest, AUserOwnsAtMostTheLimit) {
  uint64_t version = 0;
  for (int i = 0; i < 3; ++i) {
    auto created = CreateBucket(101, "ann-" + std::to_string(i), "ann");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    EXPECT_FALSE(created->too_many_buckets());
    version = created->map_version();
  }
  ASSERT_TRUE(AllAt(version));
  auto refused = CreateBucket(102, "ann-3", "ann");
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_TRUE(refused->too_many_buckets());
  EXPECT_FALSE(refused->has_bucket());
  EXPECT_FALSE(GetBucket(103, "ann-3", refused->map_version())->found());
  auto owned = CreateBucket(103, "ann-0", "ann");
  ASSERT_TRUE(owned.ok());
  EXPECT_TRUE(owned->already_owned_by_you());
  auto bobs = CreateBucket(101, "bob-0", "bob");
  ASSERT_TRUE(bobs.ok());
  EXPECT_FALSE(bobs->too_many_buckets());

  pb::DeleteBucketRequest del;
  del.set_name("ann-1");
  del.set_owner("ann");
  auto deleted = Mutate<pb::DeleteBucketResponse>(101, "meta.delete_bucket", del);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  ASSERT_TRUE(AllAt(deleted->map_version()));
  auto again = CreateBucket(102, "ann-3", "ann");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->too_many_buckets());
  EXPECT_EQ(again->bucket().name(), "ann-3");
}

TEST_F(RegistryProcessTest, ConcurrentCreatesOneWinnerAndPlacementSpreads) {
  // Eight owners race for one name through all three replicas.
  std::vector<std::future<Result<pb::CreateBucketResponse>>> racers;
  for (int i = 0; i < 8; ++i) {
    racers.push_back(std::async(std::launch::async, [this, i] {
      return CreateBucket(kMetas[i % 3], "contested", "owner" + std::to_string(i));
    }));
  }
  int winners = 0, conflicts = 0;
  for (auto& f : racers) {
    auto r = f.get();
    if (r.ok()) {
      ++winners;
      EXPECT_FALSE(r->already_owned_by_you());
    } else {
      EXPECT_EQ(r.status().code(), StatusCode::kConflict) << r.status().ToString();
      ++conflicts;
    }
  }
  EXPECT_EQ(winners, 1);
  EXPECT_EQ(conflicts, 7);

  // One owner racing itself: one creation, the others find it theirs.
  std::vector<std::future<Result<pb::CreateBucketResponse>>> same;
  for (int i = 0; i < 6; ++i) {
    same.push_back(std::async(std::launch::async,
                              [this, i] { return CreateBucket(kMetas[i % 3], "mine", "ann"); }));
  }
  int created = 0;
  std::set<uint64_t> ids;
  for (auto& f : same) {
    auto r = f.get();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    created += r->already_owned_by_you() ? 0 : 1;
    ids.insert(r->bucket().bucket_id());
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(ids.size(), 1u);

  // Placed buckets spread over the S3 table's partitions.
  std::set<size_t> partitions;
  for (int i = 0; i < 16; ++i) {
    auto r = CreateBucket(kMetas[i % 3], "spread-" + std::to_string(i), "ann");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const std::string key = EncodeBucketId(r->bucket().bucket_id());
    for (size_t p = 0; p < s3_partitions_.size(); ++p) {
      const auto& d = s3_partitions_[p];
      if (d.start_key() <= key && (d.end_key().empty() || key < d.end_key())) partitions.insert(p);
    }
  }
  EXPECT_GE(partitions.size(), 5u);
}

TEST_F(RegistryProcessTest, UsersCreateLookupIdempotenceConflict) {
  pb::CreateUserRequest admin;
  admin.set_name("admin");
  admin.set_access_key("TK0123456789abcdef0123");
  admin.set_secret_key(std::string(64, 'f'));
  auto first = Mutate<pb::CreateUserResponse>(102, "meta.create_user", admin);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->created());
  auto again = Mutate<pb::CreateUserResponse>(103, "meta.create_user", admin);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->created());
  EXPECT_EQ(again->created_ms(), first->created_ms());
  pb::CreateUserRequest other_keys = admin;
  other_keys.set_secret_key(std::string(64, 'e'));
  EXPECT_EQ((Mutate<pb::CreateUserResponse>(101, "meta.create_user", other_keys)).status().code(),
            StatusCode::kConflict);

  pb::CreateUserRequest carol;
  carol.set_name("carol");
  auto generated = Mutate<pb::CreateUserResponse>(101, "meta.create_user", carol);
  ASSERT_TRUE(generated.ok()) << generated.status().ToString();
  const std::string& ak = generated->access_key();
  ASSERT_EQ(ak.size(), 20u);
  EXPECT_EQ(ak.substr(0, 2), "AK");
  for (char c : ak) EXPECT_TRUE((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) << ak;
  EXPECT_EQ(generated->secret_key().size(), 40u);
  EXPECT_EQ((Mutate<pb::CreateUserResponse>(101, "meta.create_user", carol)).status().code(),
            StatusCode::kConflict);
  pb::CreateUserRequest thief;  // another name with carol's access key
  thief.set_name("dave");
  thief.set_access_key(ak);
  thief.set_secret_key(std::string(40, 'x'));
  EXPECT_EQ((Mutate<pb::CreateUserResponse>(102, "meta.create_user", thief)).status().code(),
            StatusCode::kConflict);

  ASSERT_TRUE(AllAt(generated->map_version()));
  for (uint32_t id : kMetas) {
    pb::GetUserByKeyRequest r;
    r.set_access_key(ak);
    r.set_min_version(generated->map_version());
    auto got = Call<pb::GetUserByKeyResponse>(id, "meta.get_user_by_key", r.SerializeAsString());
    ASSERT_TRUE(got.ok());
    EXPECT_TRUE(got->found());
    EXPECT_EQ(got->name(), "carol");
    EXPECT_EQ(got->secret_key(), generated->secret_key());
    r.set_access_key("AKUNKNOWN");
    auto none = Call<pb::GetUserByKeyResponse>(id, "meta.get_user_by_key", r.SerializeAsString());
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(none->found());
  }
  auto users = Call<pb::ListUsersResponse>(103, "meta.list_users", "");
  ASSERT_TRUE(users.ok());
  ASSERT_EQ(users->users_size(), 2);
  EXPECT_EQ(users->users(0).name(), "admin");
  EXPECT_EQ(users->users(1).name(), "carol");
  EXPECT_EQ(users->users(1).access_keys(0), ak);
}

// --- the router's RegistryClient ----------------------------------------------

template <typename T>
class Waiter {
 public:
  std::function<void(T)> callback() {
    return [p = promise_](T value) { p->set_value(std::move(value)); };
  }
  T get() { return future_.get(); }

 private:
  std::shared_ptr<std::promise<T>> promise_ = std::make_shared<std::promise<T>>();
  std::future<T> future_ = promise_->get_future();
};

class RegistryClientTest : public RegistryProcessTest {
 protected:
  Result<router::CreatedBucket> Create(router::RegistryClient& c, const std::string& name,
                                       const std::string& owner) {
    pb::CreateBucketRequest r;
    r.set_name(name);
    r.set_owner(owner);
    r.set_region("us-east-1");
    Waiter<Result<router::CreatedBucket>> w;
    c.CreateBucket(r, w.callback());
    return w.get();
  }
  Result<pb::BucketDescriptor> Get(router::RegistryClient& c, const std::string& name) {
    Waiter<Result<pb::BucketDescriptor>> w;
    c.GetBucket(name, w.callback());
    return w.get();
  }
  Result<router::UserSecret> Secret(router::RegistryClient& c, const std::string& key) {
    Waiter<Result<router::UserSecret>> w;
    c.SecretOf(key, w.callback());
    return w.get();
  }
  // The counter's value in the rendered metrics (0 when absent).
  uint64_t Count(const std::string& name, const std::string& kind) {
    const std::string text = metrics_.RenderText();
    const std::string series = "\n" + name + "{kind=\"" + kind + "\"} ";
    const size_t at = text.find(series);
    return at == std::string::npos ? 0 : std::stoull(text.substr(at + series.size()));
  }
  void Drain(router::RegistryClient& c) {
    ASSERT_TRUE(WaitFor([&] { return c.async_inflight() == 0; }, 10s));
  }

  metrics::Registry metrics_;
};

TEST_F(RegistryClientTest, CacheHitsStillLookUpReadsOwnWritesFailsOver) {
  router::RegistryClientOptions options;
  options.meta_ids = kMetas;
  router::RegistryClient client(*pool_, metrics_, options);

  // Wait for a leader through the client's own retries.
  Result<router::CreatedBucket> created = Status::Timeout("never tried");
  ASSERT_TRUE(WaitFor([&] { return (created = Create(client, "photos", "ann")).ok(); }, 20s))
      << created.status().ToString();
  EXPECT_FALSE(created->already_owned_by_you);
  EXPECT_GT(client.floor_version(), 0u);
  EXPECT_EQ(client.cached_buckets(), 1u);

  // A hit answers from the cache AND sends the same lookup.
  auto hit = Get(client, "photos");
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(hit->bucket_id(), created->bucket.bucket_id());
  Drain(client);
  EXPECT_EQ(Count("tessera_router_registry_cache_hits_total", "bucket"), 1u);
  EXPECT_EQ(Count("tessera_router_registry_cache_misses_total", "bucket"), 0u);
  EXPECT_EQ(Count("tessera_router_registry_async_lookups_total", "bucket"), 1u);
  EXPECT_EQ(Count("tessera_router_registry_lookups_total", "bucket"), 1u);
  EXPECT_EQ(client.cached_buckets(), 1u);

  // Unknown names: a miss each, never cached as a bucket. The first is
  // confirmed with the leader (a replica may lag) and remembered; the next
  // two answer from that absence and still send the lookup (MemDS rule):
  // 1 (the hit above) + 2 (replica, leader) + 2 = 5 lookups.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Get(client, "nothing").status().code(), StatusCode::kNotFound);
  Drain(client);
  EXPECT_EQ(Count("tessera_router_registry_cache_misses_total", "bucket"), 3u);
  EXPECT_EQ(Count("tessera_router_registry_lookups_total", "bucket"), 5u);
  EXPECT_EQ(client.cached_buckets(), 1u);

  // Conflicts through the client.
  EXPECT_EQ(Create(client, "photos", "bob").status().code(), StatusCode::kConflict);
  auto mine = Create(client, "photos", "ann");
  ASSERT_TRUE(mine.ok());
  EXPECT_TRUE(mine->already_owned_by_you);

  // Versioning updates the cached entry.
  Waiter<Result<pb::BucketDescriptor>> versioned;
  client.SetVersioning("photos", "ann", mine->bucket.bucket_id(), pb::VERSIONING_ENABLED,
                       versioned.callback());
  ASSERT_TRUE(versioned.get().ok());
  auto after = Get(client, "photos");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->versioning(), pb::VERSIONING_ENABLED);
  Drain(client);

  // Another router deletes it: this client's next hit still answers from
  // the cache, and its lookup drops the entry.
  pb::DeleteBucketRequest del;
  del.set_name("photos");
  del.set_owner("ann");
  auto deleted = Mutate<pb::DeleteBucketResponse>(102, "meta.delete_bucket", del);
  ASSERT_TRUE(deleted.ok());
  ASSERT_TRUE(AllAt(deleted->map_version()));
  EXPECT_TRUE(Get(client, "photos").ok());
  Drain(client);
  EXPECT_EQ(client.cached_buckets(), 0u);
  EXPECT_EQ(Get(client, "photos").status().code(), StatusCode::kNotFound);

  // Access keys: miss, then hit + lookup; unknown keys are not cached.
  pb::CreateUserRequest user;
  user.set_name("ann");
  auto ann = Mutate<pb::CreateUserResponse>(101, "meta.create_user", user);
  ASSERT_TRUE(ann.ok());
  ASSERT_TRUE(AllAt(ann->map_version()));
  auto secret = Secret(client, ann->access_key());
  ASSERT_TRUE(secret.ok());
  EXPECT_EQ(secret->user, "ann");
  EXPECT_EQ(secret->secret_key, ann->secret_key());
  ASSERT_TRUE(Secret(client, ann->access_key()).ok());
  Drain(client);
  EXPECT_EQ(Count("tessera_router_registry_cache_misses_total", "key"), 1u);
  EXPECT_EQ(Count("tessera_router_registry_cache_hits_total", "key"), 1u);
  EXPECT_EQ(Count("tessera_router_registry_async_lookups_total", "key"), 1u);
  EXPECT_EQ(Count("tessera_router_registry_lookups_total", "key"), 2u);
  EXPECT_EQ(Secret(client, "AKNOSUCHKEY").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(client.cached_keys(), 1u);

  // Listing sees this client's own writes.
  ASSERT_TRUE(Create(client, "videos", "ann").ok());
  Waiter<Result<std::vector<pb::BucketDescriptor>>> listed;
  client.ListBuckets("ann", listed.callback());
  auto buckets = listed.get();
  ASSERT_TRUE(buckets.ok());
  ASSERT_EQ(buckets->size(), 1u);
  EXPECT_EQ((*buckets)[0].name(), "videos");

  // A replica dies: lookups and writes fail over to the others (which have
  // applied this client's writes, so they can serve its reads).
  ASSERT_TRUE(AllAt(client.floor_version()));
  ASSERT_TRUE(supervisor_->Signal(table_->ById(101)->name, SIGKILL).ok());
  // A miss is confirmed with the meta leader: while the group elects a new
  // one (the killed replica may have led), the answer is Unavailable
  // (retryable, D134), never anything else; then NotFound.
  for (int i = 0; i < 6; ++i) {
    const std::string name = "missing-" + std::to_string(i);
    StatusCode code = StatusCode::kOk;
    ASSERT_TRUE(WaitFor(
        [&] {
          code = Get(client, name).status().code();
          EXPECT_TRUE(code == StatusCode::kNotFound || code == StatusCode::kUnavailable)
              << name << ": " << static_cast<int>(code);
          return code == StatusCode::kNotFound;
        },
        20s))
        << name << " never answered NotFound";
  }
  Result<router::CreatedBucket> late = Status::Timeout("never tried");
  ASSERT_TRUE(WaitFor([&] { return (late = Create(client, "after-kill", "ann")).ok(); }, 20s))
      << late.status().ToString();
  EXPECT_TRUE(Get(client, "after-kill").ok());
  Drain(client);
}

TEST_F(RegistryClientTest, AsyncLookupsAreBounded) {
  router::RegistryClientOptions options;
  options.meta_ids = kMetas;
  options.async_lookups_max = 0;  // every hit skips its refresh
  router::RegistryClient client(*pool_, metrics_, options);
  Result<router::CreatedBucket> created = Status::Timeout("never tried");
  ASSERT_TRUE(WaitFor([&] { return (created = Create(client, "bounded", "ann")).ok(); }, 20s));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Get(client, "bounded").ok());
  EXPECT_EQ(Count("tessera_router_registry_cache_hits_total", "bucket"), 5u);
  EXPECT_EQ(Count("tessera_router_registry_async_skipped_total", "bucket"), 5u);
  EXPECT_EQ(Count("tessera_router_registry_lookups_total", "bucket"), 0u);
}

}  // namespace
}  // namespace tessera::meta
