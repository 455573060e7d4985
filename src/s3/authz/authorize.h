// S3 authorization: whether a principal may perform an action on a bucket
// or an object. The ONE place the S3 front decides access (decision
// D93): the front gathers the facts (who asks, which action, the
// bucket's owner) and Authorize decides; nothing else compares users.
//
// The rule is S3's for buckets and objects without a bucket policy
// (AWS's "Mapping of ACL permissions and access policy permissions"):
//   1. ListAllMyBuckets and CreateBucket: any authenticated user's; never
//      an anonymous principal's.
//   2. Actions no ACL can grant (versioning, bucket deletion and
//      configuration; object tagging): the resource owner's alone (the
//      bucket's owner for bucket actions, the object's owner for object
//      actions).
//   3. ACL actions: granted when the resource's ACL gives the permission
//      the action needs (or FULL_CONTROL) to the principal, directly by
//      canonical id or through AllUsers (anyone, anonymous included) or
//      AuthenticatedUsers (any signed request). Bucket READ: the listings;
//      bucket WRITE: writing and deleting objects (PutObject, multipart,
//      DeleteObject); bucket READ_ACP / WRITE_ACP: Get/PutBucketAcl;
//      object READ: GetObject(Version), GetObjectAttributes; object
//      READ_ACP / WRITE_ACP: Get/PutObject(Version)Acl. A resource without
//      a stored ACL has the private one (its owner's FULL_CONTROL).
//   4. A resource's owner may always read and write its ACL (READ_ACP,
//      WRITE_ACP), whatever the ACL says, as in S3.
//   0. Before all of these: a request expecting another bucket owner
//      (Request::expected_bucket_owner) is denied.
// Owners are compared by user name (Tessera user names are unique and
// map one-to-one to canonical ids); grants name canonical ids. An object
// the anonymous principal wrote (public-read-write) is the anonymous
// principal's (kAnonymousCanonicalId in grants and Owner elements).
// map one-to-one to canonical ids); grants name canonical ids.
// Bucket policies and the public access block (public_access.h), before
// rules 2-4 when the bucket has a policy (AWS's evaluation for a request
// of the bucket owner's account or of anyone else on a bucket policy):
//   P1. The bucket owner's own Get/Put/DeleteBucketPolicy, GetBucketPolicy
//       Status and public access block calls skip the policy (the owner
//       always keeps them, even against an explicit Deny, as AWS's root).
//   P2. An applying Deny statement denies (even the owner's object calls).
//   P3. An applying Allow statement allows, unless RestrictPublicBuckets is
//       set, the policy is public and the principal is not the owner; it
//       never grants another user the policy and public access block
//       calls (AWS: only the owner's account may make them). Granting
//       another user Get/Put/DeleteBucketPolicy denies with
//       kNotOwnerAccount, which the front answers 405 MethodNotAllowed,
//       as AWS answers an identity with the permission but outside the
//       owner's account; the other such calls fall to rules 2-4 (403).
//   P4. Otherwise rules 2-4 decide, IgnorePublicAcls dropping the grants
//       to AllUsers and AuthenticatedUsers from both ACLs.
// Ownership controls join Request as further facts when they exist.
//
// Pure functions; thread safety: stateless, safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <memory>

#include "s3/authz/acl.h"
#include "s3/authz/policy.h"
#include "s3/authz/policy_eval.h"
#include "s3/authz/public_access.h"

namespace tessera::s3::authz {

// The IAM actions of the operations Tessera serves (names as in AWS's
// service authorization reference; ActionName gives "s3:<Name>").
enum class Action : uint8_t {
  kListAllMyBuckets,
  kCreateBucket,
  kDeleteBucket,
  kListBucket,  // ListObjects(V2), HeadBucket
  kListBucketVersions,
  kListBucketMultipartUploads,
  kGetBucketLocation,
  kGetBucketAcl,
  kPutBucketAcl,
  kGetBucketVersioning,
  kPutBucketVersioning,
  kGetBucketPolicy,
  kGetBucketCors,
  kPutBucketCors,  // PutBucketCors and DeleteBucketCors (s3:PutBucketCORS)
  kGetBucketTagging,
  kGetLifecycleConfiguration,
  kGetBucketLogging,
  kGetBucketRequestPayment,
  kGetBucketConfiguration,  // any other GET ?<sub-resource> of a bucket
  kGetObject,               // GET, HEAD, the source of a copy
  kGetObjectVersion,
  kGetObjectAttributes,
  kGetObjectVersionAttributes,
  kPutObject,  // PUT, copy, multipart create/upload part/complete
  kDeleteObject,
  kDeleteObjectVersion,
  kGetObjectAcl,
  kGetObjectVersionAcl,
  kPutObjectAcl,
  kPutObjectVersionAcl,
  kGetObjectTagging,
  kGetObjectVersionTagging,
  kPutObjectTagging,
  kPutObjectVersionTagging,
  kDeleteObjectTagging,
  kDeleteObjectVersionTagging,
  kListMultipartUploadParts,
  kAbortMultipartUpload,
  // Object Ownership (owner only; Put covers DeleteBucketOwnershipControls).
  kPutBucketOwnershipControls,
  kGetBucketOwnershipControls,
  // Bucket policy and public access block calls (owner-only, rule P1).
  kPutBucketPolicy,
  kDeleteBucketPolicy,
  kGetBucketPolicyStatus,
  kPutBucketPublicAccessBlock,  // also DeletePublicAccessBlock, as in AWS
  kGetBucketPublicAccessBlock,
};

// "s3:GetObject" and so on.
std::string_view ActionName(Action action);
// The action of GET /bucket?<sub> for the sub-resources the front answers
// ("location", "acl", "versioning", "policy", ...); kGetBucketConfiguration
// for the others.
Action BucketSubresourceAction(std::string_view sub_resource);

// Who asks. An anonymous principal has no user.
struct Principal {
  bool anonymous = true;
  std::string user;          // the Tessera user name
  std::string canonical_id;  // S3's canonical user id (s3::CanonicalUserId)
};

struct Request {
  Principal principal;
  Action action = Action::kGetObject;
  std::string bucket;  // empty: a service-level action
  std::string key;     // empty: a bucket-level action
  // The bucket's owner (user name); meaningful when bucket is set (the
  // caller resolved the bucket first: a missing bucket is NoSuchBucket,
  // answered before any decision, as S3 does).
  std::string bucket_owner;
  // The bucket's ACL; nullopt: the private one (the owner's FULL_CONTROL).
  std::optional<std::vector<Grant>> bucket_acl;
  // Object actions: the object's owner (user name; "" for an object an
  // anonymous principal wrote, owned by the anonymous principal) and its
  // ACL (nullopt: private). The object is the version the request
  // addresses, read before the decision. nullopt owner: the bucket's owner
  // stands in (no version read).
  std::optional<std::string> object_owner;
  std::optional<std::vector<Grant>> object_acl;
  // x-amz-expected-bucket-owner (x-amz-source-expected-bucket-owner for a
  // copy's source): the canonical id the caller expects to own the bucket
  // (Tessera has no 12-digit account ids; the canonical id stands in).
  // Anything else than the owner's id denies every bucket and object
  // action, before any other rule, as S3 answers a mismatch (403).
  std::optional<std::string> expected_bucket_owner;
  // The bucket's policy (null: none) and the request's condition keys
  // (policy_eval.h), and the bucket's public access block.
  std::shared_ptr<const Policy> bucket_policy;
  // IsPublicPolicy(*bucket_policy) when the caller derived it already
  // (the front caches it with the parsed policy); nullopt: computed here.
  std::optional<bool> bucket_policy_public;
  ConditionValues policy_values;
  PublicAccessBlock public_access_block;
};

// Which resource an action is checked against, and how.
enum class Scope : uint8_t { kService, kBucket, kObject };
struct ActionRule {
  Scope scope = Scope::kBucket;
  // The ACL permission that grants it; nullopt: no ACL can (owner only).
  std::optional<Permission> permission;
};
ActionRule RuleOf(Action action);

// Stable tokens (logged; tests compare them).
enum class Reason : uint8_t {
  kAnonymous,       // denied: no credentials and nothing grants anonymous access
  kAuthenticated,   // allowed: a service-level action any user may take
  kBucketOwner,     // allowed: the bucket's owner (owner-only action, or its ACL rights)
  kNotBucketOwner,  // denied: another user's bucket and nothing grants access
  kObjectOwner,     // allowed: the object's owner (owner-only action, or its ACL rights)
  kNotObjectOwner,  // denied: another user's object and nothing grants access
  kBucketAcl,       // allowed: the bucket's ACL grants the permission
  kObjectAcl,       // allowed: the object's ACL grants the permission
  kExpectedBucketOwner,  // denied: x-amz-expected-bucket-owner names another owner
  kBucketPolicyAllow,    // allowed: an Allow statement of the bucket policy
  kBucketPolicyDeny,     // denied: a Deny statement of the bucket policy
  kNotOwnerAccount,      // denied: the policy grants a policy call to another user (405)
};
std::string_view ReasonName(Reason reason);

struct Decision {
  Decision() = default;
  Decision(bool allowed_in, Reason reason_in, std::string statement_in = {})
      : allowed(allowed_in), reason(reason_in), statement(std::move(statement_in)) {}
  bool allowed = false;
  Reason reason = Reason::kAnonymous;
  // kBucketPolicyAllow / kBucketPolicyDeny: the deciding statement (its
  // Sid, else "#<index>").
  std::string statement;
};

Decision Authorize(const Request& request);

// The decision as one key=value log line (event "s3.authz"), for the
// front's debug log: principal, action, bucket, key, decision, reason
// (and statement=<Sid> when the policy decided).
std::string DecisionLogLine(const Request& request, const Decision& decision);

}  // namespace tessera::s3::authz
