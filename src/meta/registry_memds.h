// RegistryMemds: a meta replica's in-memory copy of the S3 bucket registry
// and the S3 users (the registry half of the MemDS; MemDs holds the
// partition map). Built from the meta group's applied state ("b/", "bid/",
// "u/", "k/" keys, docs/formats/meta-keys.md) and kept current as entries
// apply, it answers meta.get_bucket, meta.list_buckets,
// meta.get_user_by_key and meta.list_users on any replica with no
// consensus round: reads are as fresh as this replica's applied index.
//
// Invariants:
//  1. version() never decreases across Update calls; Reset may set any.
//  2. Every answer carries the version of the state it was read from (one
//     lock hold), so a caller can order answers of different replicas.
//
// Thread safety: every method may be called from any thread. mu_ guards
// every member; writers (the meta group's strand) hold it exclusively,
// readers shared.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "common/result.h"
#include "meta/memds.h"
#include "tessera/s3_registry.pb.h"

namespace tessera::meta {

class RegistryMemds {
 public:
  // Replaces everything with `state` (meta keys and values; keys outside
  // the registry prefixes are ignored) at `version`. Corruption, naming the
  // key, when a value does not parse; the state is then unchanged.
  Status Reset(const std::vector<KeyChange>& state, uint64_t version);
  // Applies `changes` and raises the version to `version`; same errors,
  // same all-or-nothing effect.
  Status Update(const std::vector<KeyChange>& changes, uint64_t version);

  // Wire answers (s3_registry.proto), each with map_version.
  pb::GetBucketResponse GetBucket(const std::string& name) const;
  pb::ListBucketsResponse ListBuckets(const std::string& owner) const;  // "" = all
  pb::GetUserByKeyResponse GetUserByKey(const std::string& access_key) const;
  pb::ListUsersResponse ListUsers() const;

  // For placement: the ids of live buckets, and whether an id was ever
  // handed out (a "bid/" key exists; ids are never reused).
  std::vector<uint64_t> LiveBucketIds() const;
  bool BucketIdUsed(uint64_t bucket_id) const;
  size_t bucket_count() const;
  // Buckets whose owner is `owner`.
  size_t buckets_owned_by(const std::string& owner) const;
  size_t user_count() const;
  // The user whose (normalized) email is `email`; nullopt: none. A scan of
  // the users (at most kS3UsersMax), for create_user's uniqueness check.
  std::optional<std::string> UserWithEmail(const std::string& email) const;
  // meta.find_user: the user with `request`'s email (normalized) or
  // canonical id; a scan of the users (at most kS3UsersMax).
  pb::FindUserResponse FindUser(const pb::FindUserRequest& request) const;
  uint64_t version() const;

 private:
  struct State {
    std::map<std::string, pb::BucketDescriptor> buckets;  // by name
    std::set<uint64_t> bucket_ids;                        // every "bid/" key
    std::map<std::string, pb::UserRecord> users;          // by name
    std::map<std::string, pb::AccessKeyRecord> keys;      // by access key
  };
  static Status ApplyChange(const KeyChange& change, State& state);

  mutable std::shared_mutex mu_;  // guards state_ and version_
  State state_;
  uint64_t version_ = 0;
};

}  // namespace tessera::meta
