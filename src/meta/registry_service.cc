#include "meta/registry_service.h"

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <future>

#include "common/check.h"
#include "common/fault_clock.h"
#include "common/limits.h"
#include "common/thread_name.h"
#include "meta/bucket_placement.h"
#include "meta/meta_group_calls.h"
#include "meta/meta_keys.h"
#include "meta/registry_keys.h"
#include "meta/table_capacity.h"
#include "s3/model/key_layout.h"
#include "s3/protocol/names.h"

namespace tessera::meta {
namespace {

// A forwarded mutation waits for the leader's queue and one quorum write.
constexpr std::chrono::milliseconds kForwardTimeout{10'000};

// Wall time with the process's injected offset (admin.faults clock_offset_ms).
int64_t NowMs() { return fault_clock::WallNowMs(); }

// `n` characters drawn uniformly from `alphabet` with RAND_bytes
// (rejection sampling keeps the draw unbiased).
Result<std::string> RandomString(std::string_view alphabet, size_t n) {
  const unsigned limit = 256 - 256 % static_cast<unsigned>(alphabet.size());
  std::string out;
  unsigned char buf[64];
  while (out.size() < n) {
    if (RAND_bytes(buf, sizeof(buf)) != 1) return Status::IOError("RAND_bytes failed");
    for (unsigned char b : buf) {
      if (b < limit && out.size() < n) out.push_back(alphabet[b % alphabet.size()]);
    }
  }
  return out;
}

void AddCondition(pb::KvBatch& batch, const std::string& key,
                  const std::optional<pb::KvRecord>& expected) {
  pb::KvCondition* c = batch.add_conditions();
  c->set_key(key);
  if (expected) c->set_version(expected->version());
  else c->set_absent(true);
}

void AddWrite(pb::KvBatch& batch, std::string key, std::string value) {
  pb::KvWrite* w = batch.add_writes();
  w->set_key(std::move(key));
  w->set_value(std::move(value));
}

void AddDelete(pb::KvBatch& batch, std::string key) {
  pb::KvWrite* w = batch.add_writes();
  w->set_key(std::move(key));
  w->set_delete_(true);
}

template <typename Message>
Result<Message> ParseRecord(const pb::KvRecord& record, const char* what) {
  Message m;
  if (!m.ParseFromString(record.value())) {
    return Status::Corruption(std::string("meta state: bad ") + what);
  }
  return m;
}

// The bucket record `existing` of bucket `name`, checked as delete and
// set-versioning check it: it exists, still has `bucket_id` (0: any), and
// belongs to `owner`. Checked here, on the record: the router's owner and
// id come from a cache that may predate a delete and re-create.
Result<pb::BucketDescriptor> OwnedBucket(const std::optional<pb::KvRecord>& existing,
                                         const std::string& name, uint64_t bucket_id,
                                         const std::string& owner) {
  if (!existing.has_value()) return Status::NotFound("bucket '" + name + "' does not exist");
  auto bucket = ParseRecord<pb::BucketDescriptor>(*existing, "BucketDescriptor");
  if (!bucket.ok()) return bucket.status();
  if (bucket_id != 0 && bucket->bucket_id() != bucket_id) {
    return Status::NotFound("bucket '" + name + "' no longer has id " + std::to_string(bucket_id));
  }
  if (bucket->owner() != owner) {
    return Status::Conflict("bucket '" + name + "' is owned by another user");
  }
  return bucket;
}

// The stored owner of `existing` ("" when absent or unparsable: OwnedBucket
// then reports what is wrong).
std::string OwnerOf(const std::optional<pb::KvRecord>& existing) {
  if (!existing.has_value()) return "";
  auto bucket = ParseRecord<pb::BucketDescriptor>(*existing, "BucketDescriptor");
  return bucket.ok() ? bucket->owner() : "";
}

// True when the write should be retried from the reads: a condition failed
// (a concurrent mutation won) or another value took the slot.
bool LostRace(const Result<pb::KvApplyResult>& applied) {
  if (!applied.ok()) return applied.status().code() == StatusCode::kAborted;
  return !applied->applied();
}

Status RaceOrError(const Result<pb::KvApplyResult>& applied) {
  return applied.ok() ? Status::Ok() : applied.status();
}

// The request's key pair, or a generated one (docs/formats/meta-keys.md rule 9).
Result<pb::AccessKeyRecord> NewAccessKey(const pb::CreateUserRequest& request) {
  pb::AccessKeyRecord key;
  key.set_user(request.name());
  key.set_created_ms(NowMs());
  if (!request.access_key().empty()) {
    key.set_access_key(request.access_key());
    key.set_secret_key(request.secret_key());
    return key;
  }
  auto access = RandomString("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 18);
  if (!access.ok()) return access.status();
  auto secret =
      RandomString("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 40);
  if (!secret.ok()) return secret.status();
  key.set_access_key("AK" + *access);
  key.set_secret_key(*secret);
  return key;
}

}  // namespace

RegistryService::RegistryService(uint32_t self_id, const MemDs& memds,
                                 const RegistryMemds& registry,
                                 std::shared_ptr<node::GroupHost> host, rpc::ChannelPool& pool,
                                 metrics::Registry& metrics, size_t user_buckets_max,
                                 uint64_t placement_weights_max_age_ms)
    : self_id_(self_id),
      user_buckets_max_(user_buckets_max),
      placement_weights_max_age_ms_(placement_weights_max_age_ms),
      memds_(memds),
      registry_(registry),
      host_(std::move(host)),
      pool_(pool),
      reads_(metrics.GetCounter("tessera_meta_registry_reads_total",
                                "bucket registry and user reads served from the MemDS")),
      mutations_(metrics.GetCounter("tessera_meta_registry_mutations_total",
                                    "bucket registry and user mutations handled here")),
      rng_(std::random_device{}() ^ (uint64_t{self_id} << 32)) {}

RegistryService::~RegistryService() { Stop(); }

Status RegistryService::FreshEnough(uint64_t min_version) const {
  const uint64_t have = registry_.version();
  if (have >= min_version) return Status::Ok();
  return Status::Unavailable("meta replica " + std::to_string(self_id_) + " at map version " +
                             std::to_string(have) + " < " + std::to_string(min_version));
}

Result<std::string> RegistryService::ServeRead(const std::string& method,
                                               const std::string& payload) const {
  if (method == "meta.get_bucket") {
    pb::GetBucketRequest r;
    if (!r.ParseFromString(payload)) return Status::InvalidArgument("bad GetBucketRequest");
    TESSERA_RETURN_IF_ERROR(FreshEnough(r.min_version()));
    return registry_.GetBucket(r.name()).SerializeAsString();
  }
  if (method == "meta.list_buckets") {
    pb::ListBucketsRequest r;
    if (!r.ParseFromString(payload)) return Status::InvalidArgument("bad ListBucketsRequest");
    TESSERA_RETURN_IF_ERROR(FreshEnough(r.min_version()));
    return registry_.ListBuckets(r.owner()).SerializeAsString();
  }
  if (method == "meta.get_user_by_key") {
    pb::GetUserByKeyRequest r;
    if (!r.ParseFromString(payload)) return Status::InvalidArgument("bad GetUserByKeyRequest");
    TESSERA_RETURN_IF_ERROR(FreshEnough(r.min_version()));
    return registry_.GetUserByKey(r.access_key()).SerializeAsString();
  }
  if (method == "meta.find_user") {
    pb::FindUserRequest r;
    if (!r.ParseFromString(payload)) return Status::InvalidArgument("bad FindUserRequest");
    if (r.email().empty() == r.canonical_id().empty()) {
      return Status::InvalidArgument("find_user needs exactly one of email and canonical_id");
    }
    TESSERA_RETURN_IF_ERROR(FreshEnough(r.min_version()));
    return registry_.FindUser(r).SerializeAsString();
  }
  pb::ListUsersRequest r;  // meta.list_users
  if (!r.ParseFromString(payload)) return Status::InvalidArgument("bad ListUsersRequest");
  TESSERA_RETURN_IF_ERROR(FreshEnough(r.min_version()));
  return registry_.ListUsers().SerializeAsString();
}

Status RegistryService::Start(rpc::RpcServer& server) {
  worker_ = StartNamedThread("registry", [this] { WorkerLoop(); });
  for (const char* method :
       {"meta.get_bucket", "meta.list_buckets", "meta.get_user_by_key", "meta.list_users",
        "meta.find_user"}) {
    const Status registered = server.RegisterHandler(
        method, [this, method = std::string(method)](const rpc::PeerInfo&,
                                                     const pb::Envelope& request,
                                                     rpc::Responder responder) {
          reads_.Increment();
          auto answer = ServeRead(method, request.payload());
          if (!answer.ok()) return responder.Fail(answer.status());
          responder.Reply(std::move(answer).value());
        });
    if (!registered.ok()) return registered;
  }
  const std::pair<const char*, Mutation> mutations[] = {
      {"meta.create_bucket", [this](const std::string& p) { return CreateBucket(p); }},
      {"meta.delete_bucket", [this](const std::string& p) { return DeleteBucket(p); }},
      {"meta.set_bucket_versioning", [this](const std::string& p) { return SetVersioning(p); }},
      {"meta.set_bucket_capacity", [this](const std::string& p) { return SetCapacity(p); }},
      {"meta.create_user", [this](const std::string& p) { return CreateUser(p); }},
  };
  for (const auto& [method, mutation] : mutations) {
    const Status registered = server.RegisterHandler(
        method, [this, method = std::string(method), mutation = mutation](
                    const rpc::PeerInfo& peer, const pb::Envelope& request,
                    rpc::Responder responder) {
          Enqueue(peer, method, request, std::move(responder), mutation);
        });
    if (!registered.ok()) return registered;
  }
  return Status::Ok();
}

void RegistryService::Stop() {
  std::deque<Task> dropped;  // their responders answer Aborted when destroyed
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    dropped.swap(tasks_);
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void RegistryService::Enqueue(const rpc::PeerInfo& peer, const std::string& method,
                              const pb::Envelope& request, rpc::Responder responder,
                              Mutation mutation) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_ && tasks_.size() < limits::kS3RegistryQueueMax) {
      tasks_.push_back([this, peer, method, payload = request.payload(), responder,
                        mutation = std::move(mutation)] {
        RunMutation(peer, method, payload, responder, mutation);
      });
      cv_.notify_all();
      return;
    }
  }
  responder.Fail(Status::Throttled(method + " queue full"));
}

void RegistryService::WorkerLoop() {
  for (;;) {
    Task task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (stopping_) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

void RegistryService::RunMutation(const rpc::PeerInfo& peer, const std::string& method,
                                  const std::string& payload, const rpc::Responder& responder,
                                  const Mutation& mutation) {
  mutations_.Increment();
  auto answer = mutation(payload);
  if (answer.ok()) return responder.Reply(std::move(answer).value());
  const Status& s = answer.status();
  if (ShouldForwardToLeader(s, peer, self_id_)) {
    return ForwardToLeader(pool_, s.leader_hint(), method, payload, kForwardTimeout, responder);
  }
  if (s.code() != StatusCode::kNotLeader) {
    spdlog::info("meta.registry_refused method={} status=\"{}\"", method, s.ToString());
  }
  responder.Fail(s);
}

// --- mutations (worker thread) ------------------------------------------------

Result<std::string> RegistryService::CreateBucket(const std::string& payload) {
  pb::CreateBucketRequest request;
  if (!request.ParseFromString(payload)) return Status::InvalidArgument("bad CreateBucketRequest");
  TESSERA_RETURN_IF_ERROR(ValidateBucketName(request.name()));
  TESSERA_RETURN_IF_ERROR(ValidateUserName(request.owner()));
  TESSERA_RETURN_IF_ERROR(ValidateRegion(request.region()));
  TESSERA_RETURN_IF_ERROR(s3::model::ValidateKeyLayout(request.key_layout(), request.hash_ranges()));
  const std::string key = BucketKey(request.name());
  const bool explicit_id = request.bucket_id() != 0;
  return ReadModifyWrite(key, "create_bucket '" + request.name() + "'",
                         [&](const std::optional<pb::KvRecord>& existing) -> RmwPlan {
    if (existing.has_value()) {
      auto bucket = ParseRecord<pb::BucketDescriptor>(*existing, "BucketDescriptor");
      if (!bucket.ok()) return RmwPlan::Answer(bucket.status());
      if (bucket->owner() != request.owner()) {
        return RmwPlan::Answer(
            Status::Conflict("bucket '" + request.name() + "' is owned by another user"));
      }
      pb::CreateBucketResponse response;
      *response.mutable_bucket() = std::move(bucket).value();
      response.set_already_owned_by_you(true);
      response.set_map_version(existing->version());
      return RmwPlan::Answer(response.SerializeAsString());
    }
    if (registry_.bucket_count() >= limits::kS3RegistryBucketsMax) {
      return RmwPlan::Answer(Status::Unavailable("the registry holds its maximum number of buckets"));
    }
    if (registry_.buckets_owned_by(request.owner()) >= user_buckets_max_) {
      spdlog::info("meta.bucket_refused bucket={} owner={} reason=too_many_buckets max={}",
                   request.name(), request.owner(), user_buckets_max_);
      pb::CreateBucketResponse refused;
      refused.set_too_many_buckets(true);
      refused.set_map_version(registry_.version());
      return RmwPlan::Answer(refused.SerializeAsString());
    }
    if (explicit_id && registry_.BucketIdUsed(request.bucket_id())) {
      return RmwPlan::Answer(
          Status::Conflict("bucket id " + std::to_string(request.bucket_id()) + " is in use"));
    }
    auto id = explicit_id ? Result<uint64_t>(request.bucket_id()) : ChooseBucketId();
    if (!id.ok()) return RmwPlan::Answer(id.status());

    pb::CreateBucketResponse response;
    pb::BucketDescriptor* d = response.mutable_bucket();
    d->set_name(request.name());
    d->set_bucket_id(*id);
    d->set_owner(request.owner());
    d->set_region(request.region());
    d->set_created_ms(NowMs());
    d->set_key_layout(request.key_layout());  // fixed for the bucket's life
    d->set_hash_ranges(request.hash_ranges());
    RmwPlan plan;
    AddCondition(plan.batch, key, std::nullopt);                // 0: name free
    AddCondition(plan.batch, BucketIdKey(*id), std::nullopt);   // 1: id never used
    AddWrite(plan.batch, key, d->SerializeAsString());
    AddWrite(plan.batch, BucketIdKey(*id), request.name());
    plan.on_lost_race = [explicit_id, chosen = *id](const pb::KvApplyResult& lost) -> std::optional<Status> {
      if (explicit_id && lost.failed_condition() == 1) {
        return Status::Conflict("bucket id " + std::to_string(chosen) + " is in use");
      }
      return std::nullopt;  // read again: the name may now exist
    };
    plan.on_applied = [response](const pb::KvApplyResult& applied) mutable -> Result<std::string> {
      response.set_map_version(applied.version());
      const pb::BucketDescriptor& made = response.bucket();
      spdlog::info("meta.bucket_created bucket={} bucket_id={} owner={} region={} version={}",
                   made.name(), made.bucket_id(), made.owner(), made.region(), applied.version());
      return response.SerializeAsString();
    };
    return plan;
  });
}

Result<uint64_t> RegistryService::ChooseBucketId() {
  auto table = memds_.Table(std::string(kS3TableName));
  if (!table) {
    return Status::Unavailable("the S3 table " + std::string(kS3TableName) +
                               " does not exist (created by `tessera cluster up`)");
  }
  auto partitions = BucketPartitionsOf(table->second, registry_.LiveBucketIds());
  // The keys the autoadmin published (a strong read on this leader); without
  // a usable record placement weighs bucket counts alone.
  auto published = ReadStrong(std::string(kPlacementWeightsKey));
  if (!published.ok()) return published.status();
  pb::PlacementWeights weights;
  if (published->has_value() && !weights.ParseFromString((*published)->value())) {
    spdlog::warn("meta.placement_weights_unparsable");
  }
  UsePublishedKeys(weights, static_cast<uint64_t>(NowMs()), placement_weights_max_age_ms_, partitions);
  return PlaceBucket(partitions, [this](uint64_t id) { return registry_.BucketIdUsed(id); }, rng_);
}

Result<std::string> RegistryService::DeleteBucket(const std::string& payload) {
  pb::DeleteBucketRequest request;
  if (!request.ParseFromString(payload)) return Status::InvalidArgument("bad DeleteBucketRequest");
  const std::string key = BucketKey(request.name());
  return ReadModifyWrite(key, "delete_bucket '" + request.name() + "'",
                         [&](const std::optional<pb::KvRecord>& existing) -> RmwPlan {
    auto bucket = OwnedBucket(existing, request.name(), request.bucket_id(), request.owner());
    if (!bucket.ok()) return RmwPlan::Answer(bucket.status());
    RmwPlan plan;
    AddCondition(plan.batch, key, existing);
    AddDelete(plan.batch, key);  // "bid/<id>" stays: ids are never reused
    plan.on_applied = [deleted = std::move(bucket).value(),
                       name = request.name()](const pb::KvApplyResult& applied) -> Result<std::string> {
      pb::DeleteBucketResponse response;
      *response.mutable_bucket() = deleted;
      response.set_map_version(applied.version());
      spdlog::info("meta.bucket_deleted bucket={} bucket_id={} version={}", name,
                   response.bucket().bucket_id(), applied.version());
      return response.SerializeAsString();
    };
    return plan;
  });
}

Result<std::string> RegistryService::SetVersioning(const std::string& payload) {
  pb::SetBucketVersioningRequest request;
  if (!request.ParseFromString(payload)) {
    return Status::InvalidArgument("bad SetBucketVersioningRequest");
  }
  if (request.state() != pb::VERSIONING_ENABLED && request.state() != pb::VERSIONING_SUSPENDED) {
    return Status::InvalidArgument("versioning state must be Enabled or Suspended");
  }
  const std::string key = BucketKey(request.name());
  return ReadModifyWrite(key, "set_bucket_versioning",
                         [&](const std::optional<pb::KvRecord>& existing) -> RmwPlan {
    auto bucket = OwnedBucket(existing, request.name(), request.bucket_id(), request.owner());
    if (!bucket.ok()) return RmwPlan::Answer(bucket.status());
    if (bucket->versioning() == request.state()) {
      pb::SetBucketVersioningResponse response;
      *response.mutable_bucket() = std::move(bucket).value();
      response.set_map_version(existing->version());
      return RmwPlan::Answer(response.SerializeAsString());
    }
    bucket->set_versioning(request.state());
    RmwPlan plan;
    AddCondition(plan.batch, key, existing);
    AddWrite(plan.batch, key, bucket->SerializeAsString());
    plan.on_applied = [updated = std::move(bucket).value()](
                          const pb::KvApplyResult& applied) -> Result<std::string> {
      pb::SetBucketVersioningResponse response;
      *response.mutable_bucket() = updated;
      response.set_map_version(applied.version());
      return response.SerializeAsString();
    };
    return plan;
  });
}

// The operator's command (no owner) may set any bucket's capacity; a
// request naming an owner changes only that owner's bucket.
Result<std::string> RegistryService::SetCapacity(const std::string& payload) {
  pb::SetBucketCapacityRequest request;
  if (!request.ParseFromString(payload)) return Status::InvalidArgument("bad SetBucketCapacityRequest");
  TESSERA_RETURN_IF_ERROR(ValidateTableCapacity(request.capacity()));
  const std::string key = BucketKey(request.name());
  return ReadModifyWrite(key, "set_bucket_capacity",
                         [&](const std::optional<pb::KvRecord>& existing) -> RmwPlan {
    auto bucket = OwnedBucket(existing, request.name(), 0,
                              request.owner().empty() ? OwnerOf(existing) : request.owner());
    if (!bucket.ok()) return RmwPlan::Answer(bucket.status());
    if (SameCapacity(bucket->capacity(), request.capacity())) {
      pb::SetBucketCapacityResponse response;
      *response.mutable_bucket() = std::move(bucket).value();
      response.set_map_version(existing->version());
      return RmwPlan::Answer(response.SerializeAsString());
    }
    *bucket->mutable_capacity() = request.capacity();
    RmwPlan plan;
    AddCondition(plan.batch, key, existing);
    AddWrite(plan.batch, key, bucket->SerializeAsString());
    plan.on_applied = [updated = std::move(bucket).value()](
                          const pb::KvApplyResult& applied) -> Result<std::string> {
      pb::SetBucketCapacityResponse response;
      *response.mutable_bucket() = updated;
      response.set_map_version(applied.version());
      spdlog::info("meta.bucket_capacity bucket={} capacity=\"{}\" version={}", updated.name(),
                   CapacityText(updated.capacity()), applied.version());
      return response.SerializeAsString();
    };
    return plan;
  });
}

Result<std::string> RegistryService::AnswerExistingUser(const pb::CreateUserRequest& request,
                                                        const pb::UserRecord& user,
                                                        uint64_t user_version) {
  const std::string exists = "user '" + request.name() + "' exists";
  if (request.access_key().empty()) return Status::Conflict(exists);
  auto key = ReadStrong(AccessKeyKey(request.access_key()));
  if (!key.ok()) return key.status();
  if (!key->has_value()) return Status::Conflict(exists + " with other keys");
  auto record = ParseRecord<pb::AccessKeyRecord>(**key, "AccessKeyRecord");
  if (!record.ok()) return record.status();
  if (record->user() != request.name() || record->secret_key() != request.secret_key()) {
    return Status::Conflict(exists + " with other keys");
  }
  // The identity asked for must be the stored one (a repeated command is
  // answered; a changed one is refused, never silently ignored).
  const std::string display_name =
      user.display_name().empty() ? user.name() : user.display_name();
  if ((!request.display_name().empty() && request.display_name() != display_name) ||
      (!request.email().empty() && NormalizeEmail(request.email()) != user.email())) {
    return Status::Conflict(exists + " with another display name or email");
  }
  pb::CreateUserResponse response;
  response.set_name(request.name());
  response.set_access_key(record->access_key());
  response.set_secret_key(record->secret_key());
  response.set_created_ms(record->created_ms());
  response.set_map_version(std::max(user_version, (*key)->version()));
  response.set_canonical_id(s3::CanonicalUserId(user.name()));
  response.set_display_name(display_name);
  response.set_email(user.email());
  return response.SerializeAsString();
}

Result<std::string> RegistryService::CreateUser(const std::string& payload) {
  pb::CreateUserRequest request;
  if (!request.ParseFromString(payload)) return Status::InvalidArgument("bad CreateUserRequest");
  TESSERA_RETURN_IF_ERROR(ValidateUserName(request.name()));
  const bool given = !request.access_key().empty() || !request.secret_key().empty();
  if (given) {
    TESSERA_RETURN_IF_ERROR(ValidateAccessKey(request.access_key()));
    TESSERA_RETURN_IF_ERROR(ValidateSecretKey(request.secret_key()));
  }
  TESSERA_RETURN_IF_ERROR(ValidateDisplayName(request.display_name()));
  TESSERA_RETURN_IF_ERROR(ValidateEmail(request.email()));
  return ReadModifyWrite(UserKey(request.name()), "create_user '" + request.name() + "'",
                         [&](const std::optional<pb::KvRecord>& user) -> RmwPlan {
    if (user.has_value()) {
      auto existing = ParseRecord<pb::UserRecord>(*user, "UserRecord");
      if (!existing.ok()) return RmwPlan::Answer(existing.status());
      return RmwPlan::Answer(AnswerExistingUser(request, *existing, user->version()));
    }
    const std::string email = NormalizeEmail(request.email());
    if (!email.empty()) {
      if (std::optional<std::string> holder = registry_.UserWithEmail(email)) {
        return RmwPlan::Answer(
            Status::Conflict("email " + email + " belongs to user '" + *holder + "'"));
      }
    }
    if (registry_.user_count() >= limits::kS3UsersMax) {
      return RmwPlan::Answer(Status::Unavailable("the registry holds its maximum number of users"));
    }
    auto key = NewAccessKey(request);
    if (!key.ok()) return RmwPlan::Answer(key.status());
    pb::UserRecord record;
    record.set_name(request.name());
    record.set_created_ms(key->created_ms());
    record.add_access_keys(key->access_key());
    record.set_canonical_id(s3::CanonicalUserId(request.name()));
    record.set_display_name(request.display_name());
    record.set_email(email);
    RmwPlan plan;
    AddCondition(plan.batch, UserKey(request.name()), std::nullopt);          // 0
    AddCondition(plan.batch, AccessKeyKey(key->access_key()), std::nullopt);  // 1
    AddWrite(plan.batch, UserKey(request.name()), record.SerializeAsString());
    AddWrite(plan.batch, AccessKeyKey(key->access_key()), key->SerializeAsString());
    plan.on_lost_race = [given, access_key = key->access_key()](
                            const pb::KvApplyResult& lost) -> std::optional<Status> {
      if (given && lost.failed_condition() == 1) {
        return Status::Conflict("access key " + access_key + " belongs to another user");
      }
      return std::nullopt;  // the user appeared, or a generated key collided: read again
    };
    plan.on_applied = [made = std::move(key).value(), name = request.name(),
                       record](const pb::KvApplyResult& applied) -> Result<std::string> {
      pb::CreateUserResponse response;
      response.set_name(name);
      response.set_canonical_id(record.canonical_id());
      response.set_display_name(record.display_name().empty() ? name : record.display_name());
      response.set_email(record.email());
      response.set_access_key(made.access_key());
      response.set_secret_key(made.secret_key());
      response.set_created_ms(made.created_ms());
      response.set_created(true);
      response.set_map_version(applied.version());
      spdlog::info("meta.user_created user={} access_key={} version={}", name, made.access_key(),
                   applied.version());
      return response.SerializeAsString();
    };
    return plan;
  });
}

Result<std::string> RegistryService::ReadModifyWrite(const std::string& key, const std::string& what,
                                                     const RmwPlanner& plan) {
  for (int attempt = 0; attempt < limits::kS3RegistryAttemptsMax; ++attempt) {
    auto existing = ReadStrong(key);
    if (!existing.ok()) return existing.status();
    RmwPlan round = plan(*existing);
    if (round.answer) return std::move(*round.answer);
    auto applied = WriteSync(std::move(round.batch));
    if (LostRace(applied)) {
      if (applied.ok() && round.on_lost_race) {
        if (std::optional<Status> stop = round.on_lost_race(*applied)) return std::move(*stop);
      }
      continue;
    }
    TESSERA_RETURN_IF_ERROR(RaceOrError(applied));
    return round.on_applied(*applied);
  }
  return Status::Unavailable(what + " kept losing races; retry");
}

Result<std::optional<pb::KvRecord>> RegistryService::ReadStrong(const std::string& key) {
  return ReadStrongSync(*host_, key);
}

Result<pb::KvApplyResult> RegistryService::WriteSync(pb::KvBatch batch) {
  return meta::WriteSync(*host_, std::move(batch));
}

}  // namespace tessera::meta
