#include "meta/registry_memds.h"

#include <mutex>

#include "common/check.h"
#include "meta/registry_keys.h"
#include "s3/protocol/names.h"

namespace tessera::meta {
namespace {

template <typename Message>
Status ParseInto(const KeyChange& change, Message& out, const char* what) {
  if (!out.ParseFromString(*change.value)) {
    return Status::Corruption("meta key " + change.key + ": bad " + what);
  }
  return Status::Ok();
}

}  // namespace

Status RegistryMemds::ApplyChange(const KeyChange& change, State& state) {
  const std::string_view key = change.key;
  if (key.starts_with(kBucketIdPrefix)) {
    auto id = ParseBucketIdKey(key);
    if (!id) return Status::Corruption("meta key bid/: malformed bucket id");
    if (change.value) state.bucket_ids.insert(*id);
    else state.bucket_ids.erase(*id);
  } else if (key.starts_with(kBucketPrefix)) {
    const std::string name(key.substr(kBucketPrefix.size()));
    if (!change.value) return state.buckets.erase(name), Status::Ok();
    pb::BucketDescriptor d;
    TESSERA_RETURN_IF_ERROR(ParseInto(change, d, "BucketDescriptor"));
    if (d.name() != name) return Status::Corruption("meta key b/" + name + ": name mismatch");
    state.buckets[name] = std::move(d);
  } else if (key.starts_with(kUserPrefix)) {
    const std::string name(key.substr(kUserPrefix.size()));
    if (!change.value) return state.users.erase(name), Status::Ok();
    pb::UserRecord u;
    TESSERA_RETURN_IF_ERROR(ParseInto(change, u, "UserRecord"));
    state.users[name] = std::move(u);
  } else if (key.starts_with(kAccessKeyPrefix)) {
    const std::string access_key(key.substr(kAccessKeyPrefix.size()));
    if (!change.value) return state.keys.erase(access_key), Status::Ok();
    pb::AccessKeyRecord k;
    TESSERA_RETURN_IF_ERROR(ParseInto(change, k, "AccessKeyRecord"));
    state.keys[access_key] = std::move(k);
  }
  return Status::Ok();  // other prefixes belong to MemDs
}

Status RegistryMemds::Reset(const std::vector<KeyChange>& state, uint64_t version) {
  State fresh;
  for (const KeyChange& c : state) TESSERA_RETURN_IF_ERROR(ApplyChange(c, fresh));
  std::unique_lock lock(mu_);
  state_ = std::move(fresh);
  version_ = version;
  return Status::Ok();
}

Status RegistryMemds::Update(const std::vector<KeyChange>& changes, uint64_t version) {
  // All or nothing: only parsing can fail and it does not depend on the
  // state, so a dry run into a scratch state checks every change first.
  State scratch;
  for (const KeyChange& c : changes) TESSERA_RETURN_IF_ERROR(ApplyChange(c, scratch));
  std::unique_lock lock(mu_);
  for (const KeyChange& c : changes) {
    const Status applied = ApplyChange(c, state_);
    TESSERA_CHECK(applied.ok());  // it parsed a moment ago
  }
  if (version > version_) version_ = version;
  return Status::Ok();
}

pb::GetBucketResponse RegistryMemds::GetBucket(const std::string& name) const {
  std::shared_lock lock(mu_);
  pb::GetBucketResponse r;
  auto it = state_.buckets.find(name);
  if (it != state_.buckets.end()) {
    r.set_found(true);
    *r.mutable_bucket() = it->second;
  }
  r.set_map_version(version_);
  return r;
}

pb::ListBucketsResponse RegistryMemds::ListBuckets(const std::string& owner) const {
  std::shared_lock lock(mu_);
  pb::ListBucketsResponse r;
  for (const auto& [name, d] : state_.buckets) {
    if (owner.empty() || d.owner() == owner) *r.add_buckets() = d;
  }
  r.set_map_version(version_);
  return r;
}

pb::GetUserByKeyResponse RegistryMemds::GetUserByKey(const std::string& access_key) const {
  std::shared_lock lock(mu_);
  pb::GetUserByKeyResponse r;
  auto it = state_.keys.find(access_key);
  if (it != state_.keys.end()) {
    r.set_found(true);
    r.set_name(it->second.user());
    r.set_secret_key(it->second.secret_key());
    r.set_created_ms(it->second.created_ms());
    auto user = state_.users.find(it->second.user());
    const pb::UserRecord* record = user == state_.users.end() ? nullptr : &user->second;
    r.set_canonical_id(record && !record->canonical_id().empty() ? record->canonical_id()
                                                                  : s3::CanonicalUserId(r.name()));
    r.set_display_name(record && !record->display_name().empty() ? record->display_name()
                                                                  : r.name());
    if (record) r.set_email(record->email());
  }
  r.set_map_version(version_);
  return r;
}

std::optional<std::string> RegistryMemds::UserWithEmail(const std::string& email) const {
  std::shared_lock lock(mu_);
  for (const auto& [name, u] : state_.users) {
    if (!u.email().empty() && u.email() == email) return name;
  }
  return std::nullopt;
}

pb::FindUserResponse RegistryMemds::FindUser(const pb::FindUserRequest& request) const {
  const std::string email = NormalizeEmail(request.email());
  std::shared_lock lock(mu_);
  pb::FindUserResponse r;
  for (const auto& [name, u] : state_.users) {
    const std::string id = u.canonical_id().empty() ? s3::CanonicalUserId(name) : u.canonical_id();
    const bool match = request.email().empty() ? id == request.canonical_id()
                                               : !u.email().empty() && u.email() == email;
    if (!match) continue;
    r.set_found(true);
    r.set_name(name);
    r.set_canonical_id(id);
    r.set_display_name(u.display_name().empty() ? name : u.display_name());
    break;
  }
  r.set_map_version(version_);
  return r;
}

pb::ListUsersResponse RegistryMemds::ListUsers() const {
  std::shared_lock lock(mu_);
  pb::ListUsersResponse r;
  for (const auto& [name, u] : state_.users) *r.add_users() = u;
  r.set_map_version(version_);
  return r;
}

std::vector<uint64_t> RegistryMemds::LiveBucketIds() const {
  std::shared_lock lock(mu_);
  std::vector<uint64_t> ids;
  ids.reserve(state_.buckets.size());
  for (const auto& [name, d] : state_.buckets) ids.push_back(d.bucket_id());
  return ids;
}

bool RegistryMemds::BucketIdUsed(uint64_t bucket_id) const {
  std::shared_lock lock(mu_);
  return state_.bucket_ids.count(bucket_id) > 0;
}

size_t RegistryMemds::bucket_count() const {
  std::shared_lock lock(mu_);
  return state_.buckets.size();
}

size_t RegistryMemds::buckets_owned_by(const std::string& owner) const {
  std::shared_lock lock(mu_);
  size_t n = 0;
  for (const auto& [name, d] : state_.buckets) n += d.owner() == owner ? 1 : 0;
  return n;
}

size_t RegistryMemds::user_count() const {
  std::shared_lock lock(mu_);
  return state_.users.size();
}

uint64_t RegistryMemds::version() const {
  std::shared_lock lock(mu_);
  return version_;
}

}  // namespace tessera::meta
