// RegistryClient: the router's access to the S3 bucket registry and the S3
// users held by the metadata service (proto/tessera/s3_registry.proto,
// docs/formats/meta-keys.md).
//
// Transport (as MemdsClient): each request starts at the next meta replica
// in rotation and fails over to the others, trying each at most once.
//   reads   (GetBucket, ListBuckets, SecretOf): fail over on a transport
//           failure, Throttled, Timeout, Unavailable (a replica behind the
//           requested min_version answers Unavailable).
//   writes  (CreateBucket, DeleteBucket, SetVersioning): any replica
//           forwards to the leader; fail over only when the write provably
//           was not applied (WriteMayHaveBeenApplied, kv_router.h: never
//           sent, or refused, e.g. NotLeader or Throttled). A write that
//           may have been applied (sent and unanswered, or answered
//           Unavailable or Timeout) is returned as is: the caller decides.
// Authoritative answers (NotFound, Conflict, InvalidArgument) end a request.
//
// Read-your-writes: the client remembers the highest map version its own
// writes returned and asks every read for at least that version, so a
// bucket created through this router is visible to it at once, on any
// replica that has caught up (others answer Unavailable and are skipped).
//
// Cache (GetBucket by bucket name, SecretOf by access key), the MemDS rule
// of RouteResolver: a HIT answers at once AND issues the same lookup
// asynchronously (at most async_lookups_max in flight; beyond: skipped and
// counted); its answer refreshes the entry, or drops it when the bucket /
// key no longer exists. A MISS waits for the lookup and caches a found
// answer. Every entry carries the map version it reflects; an answer older
// than the entry is ignored, so a slow replica cannot roll an entry back.
// Mutations through this client update (create, versioning) or drop
// (delete) the bucket's entry. A full cache drops all its entries of that
// kind before inserting.
//
// Misses and the meta LEADER (new-key visibility): a replica answers from
// its applied state, so a bucket or access key created a moment ago may be
// absent on a lagging replica although its creation was acknowledged. On a
// MISS whose lookup answers "absent", the client asks the leader once
// before answering NotFound: admin.status to the last known leader (else
// the next replica) names the leader, then the same lookup goes to it with
// min_version = the leader's applied slot. A mutation is acknowledged only
// after the leader applied it (and its MemDS with it), so this read sees
// every acknowledged creation while that leader leads. A leader-confirmed
// absence is cached briefly (negative_ttl_ms, at most
// negative_entries_max per kind): a flood of requests with a bad key costs
// the leader one read per key and TTL, not one per request. Leader reads in
// flight are bounded (leader_reads_max, both kinds): beyond it, or when
// the leader cannot be reached, the answer is Unavailable (retryable: the
// entry may have been created a moment ago, so "does not exist" would be
// a guess) and nothing is cached. Finding the key (on any path) drops its negative
// entry; so does creating the bucket through this client.
//
// Metrics, label kind="bucket" | "key":
//   tessera_router_registry_cache_hits_total, _cache_misses_total,
//   tessera_router_registry_lookups_total (every lookup sent: misses + async),
//   tessera_router_registry_async_lookups_total,
//   tessera_router_registry_async_skipped_total,
//   tessera_router_registry_errors_total (failed lookups),
//   tessera_router_registry_leader_reads_total (misses re-asked of the leader),
//   tessera_router_registry_leader_reads_skipped_total (bound reached),
//   tessera_router_registry_leader_found_total (absent on a replica, found
//     on the leader), tessera_router_registry_negative_hits_total.
//
// Thread safety: every method may be called from any thread. Callbacks run
// on rpc channel strands (or on the calling thread for a cache hit), exactly
// once each, and must not block. The pool and the client must outlive every
// request (destroy the client after the io threads are joined).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/limits.h"
#include "common/metrics.h"
#include "common/result.h"
#include "knobs/knobs.h"
#include "rpc/channel_pool.h"
#include "tessera/s3_registry.pb.h"

namespace tessera::router {

// What SecretOf answers: the user owning the access key, its secret, and
// the user's S3 identity (s3_registry.proto UserRecord).
struct UserSecret {
  std::string user;
  std::string secret_key;
  std::string canonical_id;  // 64 hex digits
  std::string display_name;  // never empty (the name when none was given)
  std::string email;         // empty: none
};
// The UserSecret of a found meta.get_user_by_key answer.
UserSecret UserSecretOf(const pb::GetUserByKeyResponse& answer);

// What CreateBucket answers. already_owned_by_you: the bucket existed with
// this owner and nothing changed (S3 BucketAlreadyOwnedByYou). A bucket of
// another owner is the error Conflict (S3 BucketAlreadyExists).
struct CreatedBucket {
  pb::BucketDescriptor bucket;
  bool already_owned_by_you = false;
  // Nothing created: the owner has as many buckets as a user may (bucket
  // unset).
  bool too_many_buckets = false;
};

using BucketCallback = std::function<void(Result<pb::BucketDescriptor>)>;
using BucketListCallback = std::function<void(Result<std::vector<pb::BucketDescriptor>>)>;
using CreateBucketCallback = std::function<void(Result<CreatedBucket>)>;
using SecretCallback = std::function<void(Result<UserSecret>)>;
using DoneCallback = std::function<void(Status)>;

// A map from a string key to a value and the map version it reflects.
// Invariants: 1. Put never replaces an entry with a higher version.
// 2. At most entries_max entries (a Put into a full cache clears it first).
// Thread safety: every method from any thread; mu_ guards entries_.
template <typename Value>
class VersionedCache {
 public:
  explicit VersionedCache(size_t entries_max) : entries_max_(entries_max) {}

  std::optional<Value> Find(const std::string& key) const {
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    return it->second.value;
  }
  // Caches `value` at `version` unless the entry is newer. Returns whether
  // it was stored.
  bool Put(const std::string& key, Value value, uint64_t version) {
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      if (it->second.version > version) return false;
      it->second = Entry{std::move(value), version};
      return true;
    }
    if (entries_.size() >= entries_max_) entries_.clear();
    entries_.emplace(key, Entry{std::move(value), version});
    return true;
  }
  // Drops the entry unless it is newer than `version`. Returns whether an
  // entry was dropped.
  bool Drop(const std::string& key, uint64_t version = UINT64_MAX) {
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.version > version) return false;
    entries_.erase(it);
    return true;
  }
  size_t size() const {
    std::lock_guard lock(mu_);
    return entries_.size();
  }

 private:
  struct Entry {
    Value value;
    uint64_t version = 0;
  };
  const size_t entries_max_;
  mutable std::mutex mu_;  // guards entries_
  std::map<std::string, Entry> entries_;
};

// Names known to be absent until an expiry time. Invariant: at most
// entries_max entries (a Put into a full cache first drops the expired
// ones, then everything). Thread safety: every method from any thread; mu_
// guards entries_.
class NegativeCache {
 public:
  using Clock = std::chrono::steady_clock;
  explicit NegativeCache(size_t entries_max) : entries_max_(entries_max) {}

  // True when `key` was Put with an expiry after `now`; drops it when expired.
  bool Contains(const std::string& key, Clock::time_point now) {
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return false;
    if (it->second > now) return true;
    entries_.erase(it);
    return false;
  }
  void Put(const std::string& key, Clock::time_point expiry, Clock::time_point now) {
    std::lock_guard lock(mu_);
    if (!entries_.contains(key) && entries_.size() >= entries_max_) {
      std::erase_if(entries_, [now](const auto& e) { return e.second <= now; });
      if (entries_.size() >= entries_max_) entries_.clear();
    }
    entries_[key] = expiry;
  }
  void Drop(const std::string& key) {
    std::lock_guard lock(mu_);
    entries_.erase(key);
  }
  size_t size() const {
    std::lock_guard lock(mu_);
    return entries_.size();
  }

 private:
  const size_t entries_max_;
  mutable std::mutex mu_;  // guards entries_
  std::map<std::string, Clock::time_point> entries_;
};

struct RegistryClientOptions {
  std::vector<uint32_t> meta_ids;  // metadata replicas, addresses set in the pool
  uint32_t read_timeout_ms = 2'000;
  // Writes wait for a quorum (and a forward to the leader).
  uint32_t write_timeout_ms = 10'000;
  size_t cache_entries_max = limits::kS3RegistryCacheEntriesMax;       // per kind
  size_t async_lookups_max = limits::kS3RegistryAsyncLookupsMax;       // both kinds
  // Leader reads on a miss answered "absent" (see the header comment).
  size_t leader_reads_max = limits::kS3RegistryLeaderReadsMax;         // in flight, both kinds
  uint32_t negative_ttl_ms = knobs::kRouterS3RegistryNegativeTtlMs.default_value;  // 0: not cached
  size_t negative_entries_max = limits::kS3RegistryNegativeEntriesMax; // per kind
  // The clock of the negative cache (tests); empty: steady_clock::now.
  std::function<std::chrono::steady_clock::time_point()> clock;
};

class RegistryClient {
 public:
  RegistryClient(rpc::ChannelPool& pool, metrics::Registry& metrics, RegistryClientOptions options);
  RegistryClient(const RegistryClient&) = delete;
  RegistryClient& operator=(const RegistryClient&) = delete;

  // The bucket named `name` (cached). NotFound: no such bucket; otherwise
  // Unavailable when no replica answered.
  void GetBucket(const std::string& name, BucketCallback done);
  // The buckets of `owner` (empty: all), by name. Never cached.
  void ListBuckets(const std::string& owner, BucketListCallback done);
  // Creates (or finds, see CreatedBucket) the bucket; the request as in
  // s3_registry.proto (bucket_id 0: placed by the metadata service).
  // Conflict: another owner's bucket, or an explicit id in use.
  void CreateBucket(const pb::CreateBucketRequest& request, CreateBucketCallback done);
  // Deletes `name` owned by `owner` (the caller checked it is empty);
  // bucket_id non-zero: only while the name maps to that id. NotFound,
  // Conflict (another owner). Answers the descriptor as it was.
  void DeleteBucket(const std::string& name, const std::string& owner, uint64_t bucket_id,
                    BucketCallback done);
  // Sets the versioning state (ENABLED or SUSPENDED) of `name` owned by
  // `owner`; bucket_id non-zero: only while the name maps to that id.
  // Answers the updated descriptor. NotFound, Conflict (another owner),
  // InvalidArgument.
  void SetVersioning(const std::string& name, const std::string& owner, uint64_t bucket_id,
                     pb::BucketVersioning state, BucketCallback done);
  // The user and secret of `access_key` (cached). NotFound: unknown key.
  void SecretOf(const std::string& access_key, SecretCallback done);
  // meta.find_user: the user an ACL grant names by email or canonical id
  // (found false: none). Never cached (grants are resolved when an ACL is
  // written, which is rare); Unavailable when no replica answered.
  void FindUser(pb::FindUserRequest request,
                std::function<void(Result<pb::FindUserResponse>)> done);

  // Async lookups in flight now (tests wait for 0 instead of sleeping).
  size_t async_inflight() const { return async_inflight_.load(); }
  size_t cached_buckets() const { return buckets_.size(); }
  size_t cached_keys() const { return keys_.size(); }
  size_t negative_buckets() const { return absent_buckets_.size(); }
  size_t negative_keys() const { return absent_keys_.size(); }
  // The meta replica last seen leading (0: none yet).
  uint32_t leader_hint() const { return leader_hint_.load(); }
  // The highest map version this client's own writes returned.
  uint64_t floor_version() const { return floor_version_.load(); }

 private:
  struct Counters {
    metrics::Counter& hits;
    metrics::Counter& misses;
    metrics::Counter& lookups;
    metrics::Counter& async_lookups;
    metrics::Counter& async_skipped;
    metrics::Counter& errors;
    metrics::Counter& leader_reads;
    metrics::Counter& leader_reads_skipped;
    metrics::Counter& leader_found;
    metrics::Counter& negative_hits;
  };
  struct Call;
  using RawCallback = std::function<void(Result<std::string>)>;

  static Counters MakeCounters(metrics::Registry& metrics, const char* kind);
  // Sends `method` with rotation and failover (see the header comment).
  void Send(const char* method, std::string payload, bool write, RawCallback done);
  void TryNext(std::shared_ptr<Call> call);
  void RaiseFloor(uint64_t version);
  // Takes one async slot; false (counted as skipped) when none is free.
  bool TakeAsyncSlot(Counters& counters);

  // One meta.get_bucket / meta.get_user_by_key round trip, absorbed into
  // the cache; `done` gets the parsed answer. leader: 0 = any replica (with
  // failover), else exactly that replica with min_version at least
  // `min_version`.
  void LookupBucket(const std::string& name, std::function<void(Result<pb::GetBucketResponse>)> done,
                    uint32_t leader = 0, uint64_t min_version = 0);
  void LookupKey(const std::string& key, std::function<void(Result<pb::GetUserByKeyResponse>)> done,
                 uint32_t leader = 0, uint64_t min_version = 0);
  // `method` sent to exactly one replica (no failover).
  void SendTo(uint32_t meta_id, const char* method, std::string payload, RawCallback done);
  // Finds the leader (admin.status; see the header comment) and answers its
  // id and applied slot; Unavailable when no replica names one.
  using LeaderCallback = std::function<void(Result<std::pair<uint32_t, uint64_t>>)>;
  void FindLeader(LeaderCallback done);
  void AskStatus(uint32_t meta_id, size_t tried, LeaderCallback done);
  // Takes one leader-read slot; false (counted as skipped) when none is free.
  bool TakeLeaderSlot(Counters& counters);
  // The miss paths once a replica answered "absent": ask the leader once.
  void ConfirmBucketAbsent(const std::string& name, BucketCallback done);
  void ConfirmKeyAbsent(const std::string& key, SecretCallback done);
  std::chrono::steady_clock::time_point Now() const;

  rpc::ChannelPool& pool_;
  const RegistryClientOptions options_;
  Counters bucket_counters_;
  Counters key_counters_;
  VersionedCache<pb::BucketDescriptor> buckets_;
  VersionedCache<UserSecret> keys_;
  std::atomic<uint64_t> next_{0};
  std::atomic<uint64_t> floor_version_{0};
  std::atomic<size_t> async_inflight_{0};
  NegativeCache absent_buckets_;
  NegativeCache absent_keys_;
  std::atomic<uint32_t> leader_hint_{0};
  std::atomic<size_t> leader_inflight_{0};
};

}  // namespace tessera::router
