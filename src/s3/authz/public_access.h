// The public access block of a bucket (S3's PublicAccessBlockConfiguration)
// and the predicates its four settings are decided by:
//  - BlockPublicAcls: PutBucketAcl / PutObjectAcl / PutObject / CreateBucket
//    with a public ACL (canned or granted) are refused (AccessDenied);
//  - IgnorePublicAcls: grants to AllUsers and AuthenticatedUsers in bucket
//    and object ACLs grant nothing (authorize.h);
//  - BlockPublicPolicy: PutBucketPolicy of a public policy (IsPublicPolicy)
//    is refused (AccessDenied);
//  - RestrictPublicBuckets: while the bucket's policy is public, its Allow
//    statements grant nothing to anyone but the bucket's owner (each
//    Tessera user is its own account; authorize.h).
//
// Pure; thread safety: values and stateless functions.
#pragma once

#include <string_view>
#include <vector>

#include "s3/authz/acl.h"

namespace tessera::s3::authz {

struct PublicAccessBlock {
  bool block_public_acls = false;
  bool ignore_public_acls = false;
  bool block_public_policy = false;
  bool restrict_public_buckets = false;
  bool operator==(const PublicAccessBlock&) const = default;
};

// public-read, public-read-write and authenticated-read (the canned ACLs
// that grant AllUsers or AuthenticatedUsers).
bool IsPublicCannedAcl(std::string_view name);
// An ACL granting anything to AllUsers or AuthenticatedUsers.
bool IsPublicAcl(const std::vector<Grant>& grants);
// `grants` without those to AllUsers and AuthenticatedUsers.
std::vector<Grant> WithoutPublicGrants(const std::vector<Grant>& grants);

}  // namespace tessera::s3::authz
