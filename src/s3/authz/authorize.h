// S3 authorization: whether a principal may perform an action on a bucket
// or an object. The ONE place the S3 front decides access (decision
// D-ACL-1): the front gathers the facts (who asks, which action, the
// bucket's owner) and Authorize decides; nothing else compares users.
//
// The rule today is S3's for a bucket with the private ACL, no policy and
// ObjectWriter ownership of objects written only by the owner:
//   1. An anonymous principal is denied everything.
//   2. ListAllMyBuckets and CreateBucket: allowed to every authenticated
//      user (the listing shows only the caller's own buckets).
//   3. Every other action: allowed to the bucket's owner, denied to others.
// ACLs, bucket policies, the public access block and ownership controls
// join Request as further facts; the order in which they are consulted
// is documented where they are added.
//
// Pure functions; thread safety: stateless, safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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
};

// Stable tokens (logged; tests compare them).
enum class Reason : uint8_t {
  kAnonymous,       // denied: no credentials and nothing grants anonymous access
  kAuthenticated,   // allowed: a service-level action any user may take
  kBucketOwner,     // allowed: the bucket's owner
  kNotBucketOwner,  // denied: another user's bucket and nothing grants access
};
std::string_view ReasonName(Reason reason);

struct Decision {
  bool allowed = false;
  Reason reason = Reason::kAnonymous;
};

Decision Authorize(const Request& request);

// The decision as one key=value log line (event "s3.authz"), for the
// front's debug log: principal, action, bucket, key, decision, reason.
std::string DecisionLogLine(const Request& request, const Decision& decision);

}  // namespace tessera::s3::authz
