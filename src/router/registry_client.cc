#include "router/registry_client.h"

#include <algorithm>
#include <chrono>

#include "common/check.h"
#include "router/kv_router.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::router {
namespace {

template <typename Message>
Result<Message> Parse(const Result<std::string>& raw, const char* what) {
  if (!raw.ok()) return raw.status();
  Message m;
  if (!m.ParseFromString(*raw)) {
    return Status::Corruption(std::string("unparsable ") + what + " answer");
  }
  return m;
}

// Answers that end a request: the metadata service decided.
bool Authoritative(StatusCode code) {
  return code == StatusCode::kNotFound || code == StatusCode::kInvalidArgument ||
         code == StatusCode::kConflict || code == StatusCode::kCorruption;
}

}  // namespace

struct RegistryClient::Call {
  const char* method = "";
  std::string payload;
  bool write = false;
  RawCallback done;
  size_t first = 0;
  size_t tried = 0;
  Status last;
};

RegistryClient::Counters RegistryClient::MakeCounters(metrics::Registry& metrics,
                                                      const char* kind) {
  const metrics::Labels labels = {{"kind", kind}};
  return Counters{
      metrics.GetCounter("tessera_router_registry_cache_hits_total",
                         "Registry lookups answered from the router's cache", labels),
      metrics.GetCounter("tessera_router_registry_cache_misses_total",
                         "Registry lookups that had to wait for the metadata service", labels),
      metrics.GetCounter("tessera_router_registry_lookups_total",
                         "Registry lookups sent to the metadata service (misses + async)", labels),
      metrics.GetCounter("tessera_router_registry_async_lookups_total",
                         "Asynchronous refresh lookups sent on cache hits", labels),
      metrics.GetCounter("tessera_router_registry_async_skipped_total",
                         "Cache hits whose refresh was skipped: too many in flight", labels),
      metrics.GetCounter("tessera_router_registry_errors_total",
                         "Registry lookups that failed", labels),
      metrics.GetCounter("tessera_router_registry_leader_reads_total",
                         "Misses answered absent by a replica and re-asked of the meta leader",
                         labels),
      metrics.GetCounter("tessera_router_registry_leader_reads_skipped_total",
                         "Misses answered absent whose leader read was skipped: too many in flight",
                         labels),
      metrics.GetCounter("tessera_router_registry_leader_found_total",
                         "Lookups absent on a replica but found on the meta leader", labels),
      metrics.GetCounter("tessera_router_registry_negative_hits_total",
                         "Misses answered from the cache of leader-confirmed absences", labels),
  };
}

RegistryClient::RegistryClient(rpc::ChannelPool& pool, metrics::Registry& metrics,
                               RegistryClientOptions options)
    : pool_(pool),
      options_(std::move(options)),
      bucket_counters_(MakeCounters(metrics, "bucket")),
      key_counters_(MakeCounters(metrics, "key")),
      buckets_(options_.cache_entries_max),
      keys_(options_.cache_entries_max),
      absent_buckets_(options_.negative_entries_max),
      absent_keys_(options_.negative_entries_max) {
  TESSERA_CHECK(!options_.meta_ids.empty());
  TESSERA_CHECK(options_.read_timeout_ms >= 1 &&
                options_.read_timeout_ms <= limits::kRpcCallTimeoutMsMax);
  TESSERA_CHECK(options_.write_timeout_ms >= 1 &&
                options_.write_timeout_ms <= limits::kRpcCallTimeoutMsMax);
  TESSERA_CHECK(options_.cache_entries_max >= 1 &&
                options_.cache_entries_max <= limits::kS3RegistryCacheEntriesMax);
  TESSERA_CHECK(options_.async_lookups_max <= limits::kS3RegistryAsyncLookupsMax);
  TESSERA_CHECK(options_.leader_reads_max <= limits::kS3RegistryLeaderReadsMax);
  TESSERA_CHECK(options_.negative_entries_max >= 1 &&
                options_.negative_entries_max <= limits::kS3RegistryNegativeEntriesMax);
}

std::chrono::steady_clock::time_point RegistryClient::Now() const {
  return options_.clock ? options_.clock() : std::chrono::steady_clock::now();
}

// --- transport ---------------------------------------------------------------

void RegistryClient::Send(const char* method, std::string payload, bool write, RawCallback done) {
  auto call = std::make_shared<Call>();
  call->method = method;
  call->payload = std::move(payload);
  call->write = write;
  call->done = std::move(done);
  call->first = next_.fetch_add(1) % options_.meta_ids.size();
  TryNext(std::move(call));
}

void RegistryClient::TryNext(std::shared_ptr<Call> call) {
  const std::vector<uint32_t>& ids = options_.meta_ids;
  // Bounded by ids.size(): each pass tries one more replica.
  while (call->tried < ids.size()) {
    const uint32_t meta_id = ids[(call->first + call->tried) % ids.size()];
    ++call->tried;
    auto channel = pool_.Get(meta_id);
    if (!channel.ok()) {
      call->last = channel.status();
      continue;
    }
    const uint32_t timeout_ms = call->write ? options_.write_timeout_ms : options_.read_timeout_ms;
    const Status accepted = (*channel)->Call(
        call->method, call->payload, std::chrono::milliseconds(timeout_ms),
        [this, call](Result<std::string> response) {
          const StatusCode code = response.status().code();
          // A write that may have been applied (sent and unanswered, or an
          // answer that cannot tell) must not be repeated blindly
          // elsewhere: the caller decides. Typed send outcome, never text.
          const bool settled = response.ok() || Authoritative(code) ||
                               (call->write && WriteMayHaveBeenApplied(response.status()));
          if (settled) return call->done(std::move(response));
          call->last = response.status();
          TryNext(call);
        });
    if (accepted.ok()) return;
    call->last = accepted;
  }
  call->done(Status::Unavailable(std::string("metadata service unavailable for ") + call->method +
                                 ": " + call->last.ToString()));
}

void RegistryClient::RaiseFloor(uint64_t version) {
  uint64_t floor = floor_version_.load();
  while (floor < version && !floor_version_.compare_exchange_weak(floor, version)) {
  }
}

bool RegistryClient::TakeAsyncSlot(Counters& counters) {
  size_t inflight = async_inflight_.load();
  do {
    if (inflight >= options_.async_lookups_max) {
      counters.async_skipped.Increment();
      return false;
    }
  } while (!async_inflight_.compare_exchange_weak(inflight, inflight + 1));
  counters.async_lookups.Increment();
  return true;
}

bool RegistryClient::TakeLeaderSlot(Counters& counters) {
  size_t inflight = leader_inflight_.load();
  do {
    if (inflight >= options_.leader_reads_max) {
      counters.leader_reads_skipped.Increment();
      return false;
    }
  } while (!leader_inflight_.compare_exchange_weak(inflight, inflight + 1));
  counters.leader_reads.Increment();
  return true;
}

void RegistryClient::SendTo(uint32_t meta_id, const char* method, std::string payload,
                            RawCallback done) {
  auto channel = pool_.Get(meta_id);
  if (!channel.ok()) return done(channel.status());
  // The callback may run even when Call refuses; answer exactly once.
  auto once = std::make_shared<std::atomic<bool>>(false);
  auto answer = [once, done](Result<std::string> r) {
    if (!once->exchange(true)) done(std::move(r));
  };
  const Status accepted = (*channel)->Call(
      method, std::move(payload), std::chrono::milliseconds(options_.read_timeout_ms), answer);
  if (!accepted.ok()) answer(accepted);
}

// --- the meta leader ---------------------------------------------------------

void RegistryClient::FindLeader(LeaderCallback done) {
  const std::vector<uint32_t>& ids = options_.meta_ids;
  uint32_t first = leader_hint_.load();
  if (std::find(ids.begin(), ids.end(), first) == ids.end()) {
    first = ids[next_.fetch_add(1) % ids.size()];
  }
  AskStatus(first, 1, std::move(done));
}

// Asks `meta_id` for its status. A leader answers itself; a follower names
// its leader, which is asked next (its own status gives the applied slot);
// otherwise the next replica. At most meta_ids.size() + 1 asks in all.
void RegistryClient::AskStatus(uint32_t meta_id, size_t tried, LeaderCallback done) {
  SendTo(meta_id, "admin.status", pb::StatusRequest().SerializeAsString(),
         [this, meta_id, tried, done = std::move(done)](Result<std::string> raw) {
           const std::vector<uint32_t>& ids = options_.meta_ids;
           uint32_t next = 0;
           pb::NodeStatus status;
           if (raw.ok() && status.ParseFromString(*raw) && status.groups_size() > 0) {
             const pb::GroupStatusProto& g = status.groups(0);
             if (g.role() == "leader") {
               leader_hint_.store(meta_id);
               return done(std::make_pair(meta_id, g.applied()));
             }
             if (g.leader() != 0 && g.leader() != meta_id &&
                 std::find(ids.begin(), ids.end(), g.leader()) != ids.end()) {
               next = g.leader();
             }
           }
           if (tried > ids.size()) {
             return done(Status::Unavailable("no meta replica names a leader"));
           }
           if (next == 0) {
             auto at = std::find(ids.begin(), ids.end(), meta_id);
             next = ids[(static_cast<size_t>(at - ids.begin()) + 1) % ids.size()];
           }
           AskStatus(next, tried + 1, done);
         });
}

namespace {

// A replica's "absent" the leader could not confirm (bound reached, leader
// unknown or unreachable): the entry may exist (created a moment ago), so
// the answer is retryable, never "does not exist", and nothing is cached.
Status UnconfirmedAbsence(const std::string& what) {
  return Status::Unavailable(what + " not found on a meta replica and the meta leader could not "
                             "confirm its absence; retry");
}

}  // namespace

// --- buckets -----------------------------------------------------------------

void RegistryClient::LookupBucket(const std::string& name,
                                  std::function<void(Result<pb::GetBucketResponse>)> done,
                                  uint32_t leader, uint64_t min_version) {
  pb::GetBucketRequest request;
  request.set_name(name);
  request.set_min_version(std::max(floor_version_.load(), min_version));
  bucket_counters_.lookups.Increment();
  RawCallback absorb = [this, name, done = std::move(done)](Result<std::string> raw) {
    auto answer = Parse<pb::GetBucketResponse>(raw, "meta.get_bucket");
    if (!answer.ok()) {
      bucket_counters_.errors.Increment();
    } else if (answer->found() && answer->bucket().name() == name) {
      buckets_.Put(name, answer->bucket(), answer->map_version());
      absent_buckets_.Drop(name);
    } else {
      buckets_.Drop(name, answer->map_version());
    }
    done(std::move(answer));
  };
  if (leader != 0) return SendTo(leader, "meta.get_bucket", request.SerializeAsString(), absorb);
  Send("meta.get_bucket", request.SerializeAsString(), false, std::move(absorb));
}

void RegistryClient::ConfirmBucketAbsent(const std::string& name, BucketCallback done) {
  auto absent = [name] { return Status::NotFound("bucket '" + name + "' does not exist"); };
  auto unconfirmed = [name] { return UnconfirmedAbsence("bucket '" + name + "'"); };
  if (!TakeLeaderSlot(bucket_counters_)) return done(unconfirmed());
  FindLeader([this, name, absent, unconfirmed, done = std::move(done)](
                 Result<std::pair<uint32_t, uint64_t>> leader) {
    if (!leader.ok()) {
      leader_inflight_.fetch_sub(1);
      return done(unconfirmed());
    }
    LookupBucket(
        name,
        [this, name, absent, unconfirmed, done](Result<pb::GetBucketResponse> answer) {
          leader_inflight_.fetch_sub(1);
          if (!answer.ok()) return done(unconfirmed());
          if (answer->found()) {
            bucket_counters_.leader_found.Increment();
            return done(std::move(*answer->mutable_bucket()));
          }
          if (options_.negative_ttl_ms > 0) {
            const auto now = Now();
            absent_buckets_.Put(name, now + std::chrono::milliseconds(options_.negative_ttl_ms),
                                now);
          }
          done(absent());
        },
        leader->first, leader->second);
  });
}

void RegistryClient::GetBucket(const std::string& name, BucketCallback done) {
  if (std::optional<pb::BucketDescriptor> cached = buckets_.Find(name)) {
    bucket_counters_.hits.Increment();
    if (TakeAsyncSlot(bucket_counters_)) {
      LookupBucket(name, [this](const Result<pb::GetBucketResponse>&) { async_inflight_.fetch_sub(1); });
    }
    done(std::move(*cached));
    return;
  }
  bucket_counters_.misses.Increment();
  if (absent_buckets_.Contains(name, Now())) {
    // The MemDS rule holds for remembered absences too: the answer comes
    // from the cache and the same lookup still goes out (bounded), so meta
    // traffic does not depend on the hit rate, and a bucket created since
    // replaces the absence as soon as that lookup sees it.
    bucket_counters_.negative_hits.Increment();
    if (TakeAsyncSlot(bucket_counters_)) {
      LookupBucket(name, [this](const Result<pb::GetBucketResponse>&) { async_inflight_.fetch_sub(1); });
    }
    return done(Status::NotFound("bucket '" + name + "' does not exist"));
  }
  LookupBucket(name, [this, name, done = std::move(done)](Result<pb::GetBucketResponse> answer) {
    if (!answer.ok()) return done(answer.status());
    if (!answer->found()) return ConfirmBucketAbsent(name, done);
    done(std::move(*answer->mutable_bucket()));
  });
}

void RegistryClient::ListBuckets(const std::string& owner, BucketListCallback done) {
  pb::ListBucketsRequest request;
  request.set_owner(owner);
  request.set_min_version(floor_version_.load());
  Send("meta.list_buckets", request.SerializeAsString(), false,
       [done = std::move(done)](Result<std::string> raw) {
         auto answer = Parse<pb::ListBucketsResponse>(raw, "meta.list_buckets");
         if (!answer.ok()) return done(answer.status());
         std::vector<pb::BucketDescriptor> buckets(
             std::make_move_iterator(answer->mutable_buckets()->begin()),
             std::make_move_iterator(answer->mutable_buckets()->end()));
         done(std::move(buckets));
       });
}

void RegistryClient::FindUser(pb::FindUserRequest request,
                              std::function<void(Result<pb::FindUserResponse>)> done) {
  request.set_min_version(std::max(floor_version_.load(), request.min_version()));
  Send("meta.find_user", request.SerializeAsString(), false,
       [done = std::move(done)](Result<std::string> raw) {
         done(Parse<pb::FindUserResponse>(raw, "meta.find_user"));
       });
}

void RegistryClient::CreateBucket(const pb::CreateBucketRequest& request,
                                  CreateBucketCallback done) {
  Send("meta.create_bucket", request.SerializeAsString(), true,
       [this, done = std::move(done)](Result<std::string> raw) {
         auto answer = Parse<pb::CreateBucketResponse>(raw, "meta.create_bucket");
         if (!answer.ok()) return done(answer.status());
         RaiseFloor(answer->map_version());
         if (answer->too_many_buckets()) {
           CreatedBucket refused;
           refused.too_many_buckets = true;
           return done(std::move(refused));
         }
         buckets_.Put(answer->bucket().name(), answer->bucket(), answer->map_version());
         absent_buckets_.Drop(answer->bucket().name());
         done(CreatedBucket{std::move(*answer->mutable_bucket()), answer->already_owned_by_you()});
       });
}

void RegistryClient::DeleteBucket(const std::string& name, const std::string& owner,
                                  uint64_t bucket_id, BucketCallback done) {
  pb::DeleteBucketRequest request;
  request.set_name(name);
  request.set_owner(owner);
  request.set_bucket_id(bucket_id);
  Send("meta.delete_bucket", request.SerializeAsString(), true,
       [this, name, done = std::move(done)](Result<std::string> raw) {
         auto answer = Parse<pb::DeleteBucketResponse>(raw, "meta.delete_bucket");
         if (!answer.ok()) return done(answer.status());
         RaiseFloor(answer->map_version());
         buckets_.Drop(name, answer->map_version());
         done(std::move(*answer->mutable_bucket()));
       });
}

void RegistryClient::SetVersioning(const std::string& name, const std::string& owner,
                                   uint64_t bucket_id, pb::BucketVersioning state,
                                   BucketCallback done) {
  pb::SetBucketVersioningRequest request;
  request.set_name(name);
  request.set_state(state);
  request.set_owner(owner);
  request.set_bucket_id(bucket_id);
  Send("meta.set_bucket_versioning", request.SerializeAsString(), true,
       [this, name, done = std::move(done)](Result<std::string> raw) {
         auto answer = Parse<pb::SetBucketVersioningResponse>(raw, "meta.set_bucket_versioning");
         if (!answer.ok()) return done(answer.status());
         RaiseFloor(answer->map_version());
         buckets_.Put(name, answer->bucket(), answer->map_version());
         done(std::move(*answer->mutable_bucket()));
       });
}

// --- access keys ---------------------------------------------------------------

UserSecret UserSecretOf(const pb::GetUserByKeyResponse& answer) {
  UserSecret out;
  out.user = answer.name();
  out.secret_key = answer.secret_key();
  out.canonical_id = answer.canonical_id();
  out.display_name = answer.display_name().empty() ? answer.name() : answer.display_name();
  out.email = answer.email();
  return out;
}

void RegistryClient::LookupKey(const std::string& key,
                               std::function<void(Result<pb::GetUserByKeyResponse>)> done,
                               uint32_t leader, uint64_t min_version) {
  pb::GetUserByKeyRequest request;
  request.set_access_key(key);
  request.set_min_version(std::max(floor_version_.load(), min_version));
  key_counters_.lookups.Increment();
  RawCallback absorb = [this, key, done = std::move(done)](Result<std::string> raw) {
    auto answer = Parse<pb::GetUserByKeyResponse>(raw, "meta.get_user_by_key");
    if (!answer.ok()) {
      key_counters_.errors.Increment();
    } else if (answer->found()) {
      keys_.Put(key, UserSecretOf(*answer), answer->map_version());
      absent_keys_.Drop(key);
    } else {
      keys_.Drop(key, answer->map_version());
    }
    done(std::move(answer));
  };
  if (leader != 0) return SendTo(leader, "meta.get_user_by_key", request.SerializeAsString(), absorb);
  Send("meta.get_user_by_key", request.SerializeAsString(), false, std::move(absorb));
}

void RegistryClient::ConfirmKeyAbsent(const std::string& key, SecretCallback done) {
  auto absent = [] { return Status::NotFound("unknown access key"); };
  auto unconfirmed = [] { return UnconfirmedAbsence("access key"); };
  if (!TakeLeaderSlot(key_counters_)) return done(unconfirmed());
  FindLeader([this, key, absent, unconfirmed, done = std::move(done)](
                 Result<std::pair<uint32_t, uint64_t>> leader) {
    if (!leader.ok()) {
      leader_inflight_.fetch_sub(1);
      return done(unconfirmed());
    }
    LookupKey(
        key,
        [this, key, absent, unconfirmed, done](Result<pb::GetUserByKeyResponse> answer) {
          leader_inflight_.fetch_sub(1);
          if (!answer.ok()) return done(unconfirmed());
          if (answer->found()) {
            key_counters_.leader_found.Increment();
            return done(UserSecretOf(*answer));
          }
          if (options_.negative_ttl_ms > 0) {
            const auto now = Now();
            absent_keys_.Put(key, now + std::chrono::milliseconds(options_.negative_ttl_ms), now);
          }
          done(absent());
        },
        leader->first, leader->second);
  });
}

void RegistryClient::SecretOf(const std::string& access_key, SecretCallback done) {
  if (std::optional<UserSecret> cached = keys_.Find(access_key)) {
    key_counters_.hits.Increment();
    if (TakeAsyncSlot(key_counters_)) {
      LookupKey(access_key,
                [this](const Result<pb::GetUserByKeyResponse>&) { async_inflight_.fetch_sub(1); });
    }
    done(std::move(*cached));
    return;
  }
  key_counters_.misses.Increment();
  if (absent_keys_.Contains(access_key, Now())) {
    key_counters_.negative_hits.Increment();  // the MemDS rule, as for buckets
    if (TakeAsyncSlot(key_counters_)) {
      LookupKey(access_key,
                [this](const Result<pb::GetUserByKeyResponse>&) { async_inflight_.fetch_sub(1); });
    }
    return done(Status::NotFound("unknown access key"));
  }
  LookupKey(access_key,
            [this, access_key, done = std::move(done)](Result<pb::GetUserByKeyResponse> answer) {
              if (!answer.ok()) return done(answer.status());
              if (!answer->found()) return ConfirmKeyAbsent(access_key, done);
              done(UserSecretOf(*answer));
            });
}

}  // namespace tessera::router
