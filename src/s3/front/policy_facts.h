// What the access decisions derive from a bucket's configuration record
// (BucketConfig): the parsed bucket policy, whether it is public, and the
// public access block. Derived once per record and kept next to it in the
// router's BucketConfigCache (bucket_config_cache.h), shared immutable, so
// a request on a bucket with a policy parses nothing.
//
// Thread safety: PolicyFacts is an immutable value once built; PolicyFactsOf
// is stateless.
#pragma once

#include <memory>
#include <string_view>

#include "s3/authz/policy.h"
#include "s3/authz/public_access.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::front {

struct PolicyFacts {
  std::shared_ptr<const authz::Policy> policy;  // null: none
  bool policy_public = false;                   // authz::IsPublicPolicy(*policy)
  authz::PublicAccessBlock public_access_block;
};

// Parses `config`'s policy (validated when put, so it parses unless a newer
// router stored it: then a Deny of everything, fail closed, logged) as the
// policy of bucket `bucket`. `config` null: no policy, no block.
PolicyFacts PolicyFactsOf(const pb::BucketConfig* config, std::string_view bucket);

// Whether PolicyFactsOf gives the same facts for `a` and `b` (the same
// policy bytes and public access block), so facts derived from `a` serve `b`.
inline bool SamePolicyInputs(const pb::BucketConfig& a, const pb::BucketConfig& b) {
  if (a.has_policy() != b.has_policy() || a.policy() != b.policy()) return false;
  if (a.has_public_access_block() != b.has_public_access_block()) return false;
  const pb::PublicAccessBlockConfig& x = a.public_access_block();
  const pb::PublicAccessBlockConfig& y = b.public_access_block();
  return x.block_public_acls() == y.block_public_acls() &&
         x.ignore_public_acls() == y.ignore_public_acls() &&
         x.block_public_policy() == y.block_public_policy() &&
         x.restrict_public_buckets() == y.restrict_public_buckets();
}

}  // namespace tessera::s3::front
