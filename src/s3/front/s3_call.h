// S3Call: one S3 request in flight: the exchange, what parsing found
// (bucket, key, query), who is asking (after authentication), and the
// helpers every handler answers with. Shared by the handlers' callbacks;
// answers exactly once (a second answer is a bug, CHECKed).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/stream_server.h"
#include "s3/auth/auth_context.h"
#include "s3/authz/authorize.h"
#include "s3/front/policy_facts.h"
#include "s3/model/key_layout.h"
#include "s3/protocol/http_rules.h"
#include "s3/protocol/s3_error.h"
#include "s3/protocol/xml_documents.h"
#include "tessera/s3.pb.h"
#include "tessera/s3_registry.pb.h"

namespace tessera::s3::front {

class S3Front;

// Wall-clock milliseconds since the epoch: the times S3 ops carry (the
// state machine never reads a clock).
inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct S3Call : std::enable_shared_from_this<S3Call> {
  S3Call(S3Front& front, std::shared_ptr<http::Exchange> exchange, std::string request_id)
      : front(front), exchange(std::move(exchange)), request_id(std::move(request_id)) {}

  const http::RequestHead& head() const { return exchange->head(); }
  bool is_head() const { return head().method == "HEAD"; }
  // The decoded query parameter, or nullptr.
  const QueryParam* Param(std::string_view name) const;
  bool HasParam(std::string_view name) const { return Param(name) != nullptr; }
  // A request header, or one sent as a query parameter (query_headers); for
  // a POST upload, the names its form defines come from form_headers only.
  std::optional<std::string_view> Header(std::string_view name) const {
    if (form_headers && IsFormDefinedHeader(name)) return http::FindHeader(*form_headers, name);
    if (auto value = head().Header(name)) return value;
    return http::FindHeader(query_headers, name);
  }
  // The header names a POST upload's form fields define (Content-Type,
  // Cache-Control, Content-Disposition, Content-Encoding, Content-Language,
  // Expires, Content-MD5, x-amz-*): the form's values replace the request's.
  static bool IsFormDefinedHeader(std::string_view name);
  // The request's headers followed by query_headers.
  http::Headers AllHeaders() const;
  // The request as authentication reads it (method, target, AllHeaders).
  auth::RequestHead AuthHead() const;

  // Answers the error document (status from the code; no body for HEAD).
  // The error document (no body on HEAD) with `headers` added, e.g. the
  // x-amz-delete-marker of a GET that meets a delete marker.
  void Fail(const S3Error& error, http::Headers headers = {});
  void Fail(const Status& status);
  // A whole response; standard headers (request id, Server) are added.
  void Respond(unsigned status, http::Headers headers, std::string body);
  void RespondXml(unsigned status, std::string xml, http::Headers headers = {});
  // Headers every response carries.
  http::Headers StandardHeaders() const;
  bool answered() const { return answered_; }
  void MarkAnswered();

  S3Front& front;
  std::shared_ptr<http::Exchange> exchange;
  const std::string request_id;
  // Parsed request.
  std::string bucket;  // empty: service-level request
  std::string key;     // decoded object key; empty: bucket-level request
  std::vector<QueryParam> query;
  std::string resource;  // the path, for error documents
  bool virtual_hosted = false;  // the bucket came from the Host header
  // SigV2 presigned URLs carry the x-amz-*, Content-MD5 and Content-Type
  // headers they signed as query parameters (botocore's HmacV1QueryAuth);
  // S3 reads those as headers, for the signature and for the request. Only
  // names absent from the real headers.
  http::Headers query_headers;
  // A POST upload (object_post.cc): the fields of its form that S3 reads
  // as the object's headers, set once the form's fields are read; Header
  // and AllHeaders answer them instead of the request's own (which, from a
  // browser, describe the form, not the object).
  std::optional<http::Headers> form_headers;
  // Authenticated caller: its user name and, for authorization, its
  // principal (anonymous until authenticated) and DisplayName.
  auth::AuthContext auth;
  std::string user;
  authz::Principal principal;
  std::string user_display_name;
  // The bucket's descriptor, for handlers that needed it.
  pb::BucketDescriptor bucket_info;
  // `key` as the `_s3` records of bucket_info store it (its key layout,
  // s3/model/key_layout.h): what every op, read and blob owner names.
  std::string stored_key() const { return model::StoredKey(model::KeyLayoutOf(bucket_info), key); }
  // The bucket's configuration record, when the access decision read it
  // (every WithAuthorizedBucket); null otherwise.
  std::shared_ptr<const pb::BucketConfig> bucket_config;
  // What the decisions derive from it (parsed policy, public access
  // block), set with bucket_config; shared with the router's cache.
  std::shared_ptr<const PolicyFacts> bucket_facts;
  // An object-scope action (GetObject, ?acl, ?tagging, ...) whose decision
  // waits for the version: WithAuthorizedBucket sets it, the version reads
  // (WithLatestLiveVersion, WithVersion, WithSubresourceVersion) take the
  // decision on what they read (AuthorizedOnPendingObject) before calling
  // their continuation, so nothing of the object is answered undecided.
  std::optional<authz::Action> pending_object_action;
  // The Access-Control-* headers of the CORS rule that admits this request
  // (WithCorsHeaders); every response carries them (StandardHeaders).
  http::Headers cors_headers;

 private:
  bool answered_ = false;
};

using CallPtr = std::shared_ptr<S3Call>;

// The conditional-write header the request carries ("If-None-Match",
// "If-Match"), the Condition a PreconditionFailed names; "" for none.
std::string ConditionHeaderOf(const S3Call& call);
// What a refused op's error document names besides the outcome and what
// the partition reported: the upload (NoSuchUpload, part errors) and, for a
// completion, the minimum part size (EntityTooSmall).
struct OutcomeContext {
  std::string upload_id;
  uint64_t min_part_bytes = 0;
};
// The one mapping from a partition's refusal (r.outcome() != S3_OK) to the
// S3 error, with the elements S3 puts in its error document.
S3Error OpOutcomeError(const S3Call& call, const pb::S3OpResult& r, const OutcomeContext& ctx = {});

// Query rules the listings share (ListObjects v1/v2, ListObjectVersions,
// ListMultipartUploads), answered as S3 answers them.
// `name` (max-keys, max-uploads): absent -> `cap`; a non-negative integer,
// capped at `cap`; anything else InvalidArgument naming the parameter.
S3Result<uint32_t> ParseListLimit(const S3Call& call, std::string_view name, uint32_t cap);
// encoding-type: absent -> false, "url" -> true, anything else InvalidArgument.
S3Result<bool> ParseEncodingType(const S3Call& call);

// Handlers, one per S3 operation (bucket_handlers.cc, object_put.cc,
// object_get.cc, object_delete.cc, list_objects.cc). Each answers `call`.
void ListBuckets(CallPtr call);
void CreateBucket(CallPtr call);
void DeleteBucket(CallPtr call);
void HeadBucket(CallPtr call);
void GetBucketSubresource(CallPtr call);  // ?location, ?acl, ?versioning ...
void ListObjects(CallPtr call);           // v1 and v2
void PutObject(CallPtr call);
void GetObject(CallPtr call);             // GET and HEAD
void DeleteObject(CallPtr call);
void GetObjectSubresource(CallPtr call);  // ?acl, ?tagging
void GetObjectAttributes(CallPtr call);   // GET ?attributes (object_attributes.cc)
// PUT ?tagging (the body's tag set) and DELETE ?tagging (no tags) of the
// latest version or the one versionId names: one SetTags op.
void SetObjectTagging(CallPtr call);
// Answers GET/HEAD with version `v` (preconditions, Range, headers, body).
void ServeObject(CallPtr call, const pb::ObjectVersion& v);
// Reads version `version_id` of `key` (with its inline bytes when
// `with_data`) and calls `found` with it (it may be a delete marker);
// answers the call itself otherwise: InvalidArgument for a malformed id,
// NoSuchVersion when absent, or the read's error.
void WithVersion(CallPtr call, uint64_t bucket_id, const std::string& key,
                 const std::string& version_id, bool with_data,
                 std::function<void(pb::ObjectVersion)> found);
// Reads the latest version of the call's key (with its inline bytes when
// `with_data`) and calls `found` with it; answers the call itself when
// there is none: NoSuchKey, with x-amz-delete-marker and the marker's
// version id when a delete marker is the latest (as S3 answers), or the
// read's error.
void WithLatestLiveVersion(CallPtr call, bool with_data,
                           std::function<void(const pb::ObjectVersion&)> found);
// The version a sub-resource request (?acl, ?tagging) addresses: the one
// named by versionId, else the latest; answers the call itself when there is
// none. A delete marker has no sub-resources: named by id, or as the
// latest, it is MethodNotAllowed (ResourceType DeleteMarker), except GET
// ?acl of a key whose latest is one, which is NoSuchKey, as S3 answers.
void WithSubresourceVersion(CallPtr call, std::function<void(const pb::ObjectVersion&)> found);
// Versioning (versioning.cc).
void GetObjectVersion(CallPtr call);       // GET/HEAD ?versionId=
void PutBucketVersioning(CallPtr call);    // PUT ?versioning
void ListObjectVersions(CallPtr call);     // GET ?versions
// Multipart uploads (multipart.cc; UploadPart streams like PutObject).
struct PartTarget {
  std::string upload_id;
  uint32_t part_number = 0;
};
void CreateMultipartUpload(CallPtr call);
void UploadPart(CallPtr call, PartTarget part);
// POST /bucket with a multipart/form-data body (object_post.cc): a browser
// upload, authenticated by its form's signature and policy, not by the
// request's headers; answered 204, 200, 201 (PostResponse) or 303 to the
// form's success_action_redirect.
void PostObject(CallPtr call);
// Admission and the bucket's capacity charge of a request whose principal
// and key are known only after it was dispatched (a POST upload, charged
// as the PutObject it is); false after answering SlowDown.
bool AdmitAsPutObject(S3Call& call);
void CompleteMultipartUpload(CallPtr call);
void AbortMultipartUpload(CallPtr call);
void ListParts(CallPtr call);
void ListMultipartUploads(CallPtr call);  // GET ?uploads
// Copies (object_copy.cc): PUT with x-amz-copy-source. The source is read
// (strong head or version read), its x-amz-copy-source-if-* conditions
// checked, and its bytes copied into new blobs owned by the destination
// (decision D21), then ONE op on the destination's partition commits.
void CopyObject(CallPtr call);
void UploadPartCopy(CallPtr call, PartTarget part);
void DeleteObjects(CallPtr call);  // POST ?delete (batch_delete.cc)
// PUT ?acl on a bucket or an object (acl.cc). The ACL (x-amz-acl,
// x-amz-grant-*, or an AccessControlPolicy body) replaces a bucket's in its
// configuration record (one SetBucketConfigOp) or the addressed version's
// (one SetObjectAclOp).
void PutAcl(CallPtr call);
// Stored ACLs (BucketConfig.acl, ObjectVersion.acl) to and from authz
// grants; GrantsOf is nullopt (the private ACL) when the record holds none
// or ACLs are disabled (AclsDisabled): the grants access decisions read.
pb::StoredAcl StoredAclOf(const std::vector<authz::Grant>& grants);
std::vector<authz::Grant> GrantsOfStored(const pb::StoredAcl& acl);
std::optional<std::vector<authz::Grant>> GrantsOf(const pb::BucketConfig& config);
// The ACL a request asks for by x-amz-acl, x-amz-grant-* or an
// AccessControlPolicy `body` (one of them: InvalidRequest otherwise), for
// a resource owned by `owner_id` in a bucket owned by `bucket_owner_id`;
// calls `next` with it (nullopt: none asked) or answers the error itself.
// Bad canned names, ids, group URIs: InvalidArgument; more than
// kS3AclGrantsMax grants: MalformedACLError. Grants naming users are
// looked up in the registry (meta.find_user, one round trip per distinct
// user): an email becomes its user's canonical id (none:
// UnresolvableGrantByEmailAddress), a canonical id no user has is
// InvalidArgument "Invalid id", as S3 answers.
void WithRequestedAcl(CallPtr call, std::string_view body, const std::string& owner_id,
                      const std::string& bucket_owner_id,
                      std::function<void(std::optional<std::vector<authz::Grant>>)> next);
// GetBucketAcl's document for a stored ACL.
std::string StoredAclXml(const Owner& owner, const pb::StoredAcl& acl);

// S3 Object Ownership (ownership.cc). PUT ?ownershipControls sets the
// bucket's (one rule: BucketOwnerEnforced, BucketOwnerPreferred or
// ObjectWriter), GET answers it (OwnershipControlsNotFoundError when there
// is none), DELETE removes it (204); owner only.
void PutBucketOwnershipControls(CallPtr call);
void GetBucketOwnershipControls(CallPtr call);
void DeleteBucketOwnershipControls(CallPtr call);
// x-amz-object-ownership / ObjectOwnership values; nullopt: not S3's.
std::optional<pb::ObjectOwnership> ParseObjectOwnership(std::string_view name);
std::string_view ObjectOwnershipName(pb::ObjectOwnership ownership);
// The bucket's setting; OBJECT_WRITER without controls (or record).
pb::ObjectOwnership ObjectOwnershipOf(const pb::BucketConfig* config);
// BucketOwnerEnforced: ACLs are disabled (they decide nothing; the
// bucket's owner owns every object).
bool AclsDisabled(const pb::BucketConfig* config);
// Where ACLs are disabled, the only ACL a request may set is the bucket
// owner's FULL_CONTROL alone (bucket-owner-full-control, or the same
// grants spelled out); AccessControlListNotSupported for any other. Where
// the public access block sets BlockPublicAcls, a public ACL (grants to
// AllUsers or AuthenticatedUsers) is AccessDenied. `grants` nullopt: none
// asked, always allowed.
S3Status CheckAclAllowed(const pb::BucketConfig* config,
                         const std::optional<std::vector<authz::Grant>>& grants,
                         const std::string& bucket_owner_id);

// CORS (cors.cc; rules checked and matched by s3/protocol/cors_rules.h).
// PUT ?cors replaces the bucket's rules (owner only), GET ?cors answers
// them (NoSuchCORSConfiguration when there are none), DELETE ?cors removes
// them (204).
// Bucket policies and the public access block (bucket_policy.cc): the
// handlers, the facts the access decision reads from the bucket's
// configuration (a policy that no longer parses is a Deny of everything)
// and the condition keys of a request (authz::PolicyRequest). An ACL a
// request asks for is checked against BlockPublicAcls by CheckAclAllowed.
void PutBucketPolicy(CallPtr call);
void GetBucketPolicy(CallPtr call);
void DeleteBucketPolicy(CallPtr call);
void GetBucketPolicyStatus(CallPtr call);
void PutPublicAccessBlock(CallPtr call);
void GetPublicAccessBlock(CallPtr call);
void DeletePublicAccessBlock(CallPtr call);
authz::ConditionValues PolicyConditionValues(const S3Call& call, authz::Action action);
// The tags of version `v` as s3:ExistingObjectTag/<key> values (D107: an
// object decision is taken on the version the handler read), appended.
void AddExistingObjectTags(const pb::ObjectVersion& v, authz::ConditionValues& values);

void PutBucketCors(CallPtr call);
void GetBucketCors(CallPtr call);
void DeleteBucketCors(CallPtr call);
// OPTIONS: a preflight, answered without authentication from the bucket's
// rules: 200 with the admitting rule's Access-Control-* headers; 400
// BadRequest without Origin or Access-Control-Request-Method; 403
// AccessForbidden when the bucket has no rules or none admits the request;
// NoSuchBucket.
void AnswerPreflight(CallPtr call);
// For a request with an Origin header on a bucket: looks up the bucket's
// rules (S3Front::BucketConfigOf) and, when one admits the origin and method,
// fills call->cors_headers; then runs `next` whatever it found.
void WithCorsHeaders(CallPtr call, std::function<void()> next);

// A versionId S3 could have handed out: "null" or a Tessera version id.
bool IsVersionIdSyntax(std::string_view version_id);

// x-amz-version-id of a write (PUT, completed upload, copy): the id of the
// version it made when the bucket's versioning is enabled; none when the
// write made the null version (unversioned or suspended bucket), as S3
// answers.
void AddWrittenVersionHeader(const pb::BucketDescriptor& bucket, const std::string& version_id,
                             http::Headers& headers);

// Resolves call->bucket, asks authz::Authorize whether the caller may take
// `action` on it (the request's one access decision, see Authorized),
// stores the descriptor in call->bucket_info and runs `next`; answers
// NoSuchBucket / AccessDenied itself.
void WithAuthorizedBucket(CallPtr call, authz::Action action, std::function<void()> next);
// `latest` for a request on the latest version, `version` when it names
// one (versionId): s3:GetObject vs s3:GetObjectVersion and the like.
inline authz::Action ByVersion(const S3Call& call, authz::Action latest, authz::Action version) {
  return call.HasParam("versionId") ? version : latest;
}
// The access decision for `action` on `bucket` / `key` owned by
// `bucket_owner` (empty for service-level actions), logged at debug level
// (event s3.authz). `expected_owner_header`: the request header naming
// the owner the caller expects (x-amz-expected-bucket-owner, or
// x-amz-source-expected-bucket-owner for a copy's source); none for
// service-level actions. True when allowed; false after answering
// AccessDenied. `facts`: the bucket's policy facts (its configuration
// record's policy and public access block) joining the decision (null:
// none considered).
bool Authorized(S3Call& call, authz::Action action, const std::string& bucket,
                const std::string& key, const std::string& bucket_owner,
                std::string_view expected_owner_header = {},
                std::optional<std::vector<authz::Grant>> bucket_acl = std::nullopt,
                const PolicyFacts* facts = nullptr);

// An object-scope decision's facts besides the version.
struct ObjectTarget {
  authz::Action action = authz::Action::kGetObject;
  std::string bucket;
  std::string key;
  std::string bucket_owner;
  const pb::BucketConfig* config = nullptr;  // null: none read (private, no controls)
  const PolicyFacts* facts = nullptr;         // config's policy facts (null: none)
};
// Who owns version `v` and its grants, as access decisions see them: the
// writer and the version's ACL (nullopt: private).
struct ObjectAccess {
  std::string owner;  // a user name; "" the anonymous principal
  std::optional<std::vector<authz::Grant>> acl;
};
ObjectAccess ObjectAccessOf(const std::string& bucket_owner, const pb::BucketConfig* config,
                            const pb::ObjectVersion& v);
// The decision for `target.action` on version `v` (the object's owner and
// ACL, ObjectAccessOf). `v` null (no version to serve: none, or a delete
// marker): decided as s3:ListBucket on the bucket, so that only who may
// list it learns the object is missing, as S3 answers. True when allowed;
// false after answering AccessDenied.
bool AuthorizedOnObject(S3Call& call, const ObjectTarget& target, const pb::ObjectVersion* v,
                        std::string_view expected_owner_header);
// Takes the call's pending object decision (pending_object_action) on `v`
// (null: missing); true when none is pending.
bool AuthorizedOnPendingObject(S3Call& call, const pb::ObjectVersion* v);
// What an object write records besides its bytes and metadata.
struct ObjectWriteAccess {
  std::string owner;  // a user name; "" the anonymous principal
  std::optional<pb::StoredAcl> acl;  // nullopt: private
};
// For a write by the caller (PutObject, CopyObject, CreateMultipartUpload)
// into call->bucket_info's bucket: the ACL it asks for (WithRequestedAcl)
// and who owns what it writes (the writer); calls `next` or answers the
// call's error itself.
void WithObjectWriteAccess(CallPtr call, std::function<void(ObjectWriteAccess)> next);
// The canonical id of the owner recorded as `user` ("": the anonymous one).
std::string CanonicalIdOfOwner(const std::string& user);
// The Owner element of a bucket, object, version or upload owned by the
// Tessera user `user`: its canonical id, and its DisplayName (the caller's
// own as registered; another user's name, decision D93).
Owner OwnerOfUser(const S3Call& call, const std::string& user);

}  // namespace tessera::s3::front
