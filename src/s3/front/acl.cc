// ACLs: PUT ?acl on buckets and objects, the ACL a CreateBucket or an
// object write asks for, and the conversions between stored ACLs
// (pb::StoredAcl in the bucket's configuration record and in object
// versions) and authz grants (see the ACL functions in s3_call.h).
#include <algorithm>

#include "common/limits.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/front/small_body.h"
#include "s3/protocol/names.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {

bool IsCanonicalId(std::string_view id) {
  return id.size() == 64 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool HasGrantHeader(const S3Call& call) {
  return std::any_of(std::begin(authz::kGrantHeaders), std::end(authz::kGrantHeaders),
                     [&](const authz::GrantHeader& h) { return call.Header(h.name).has_value(); });
}

S3Error InvalidIdError(const std::string& id) {
  return S3Error(S3ErrorCode::kInvalidArgument, "Invalid id")
      .With("ArgumentName", "CanonicalUser/ID")
      .With("ArgumentValue", id);
}

// An ACL as the request gave it, checked for syntax; the grants naming a
// user (by email, or by a canonical id no one has vouched for) still to
// be looked up in the registry.
struct PendingAcl {
  std::vector<authz::Grant> grants;  // email grants hold the address for now
  struct Lookup {
    size_t index;  // into grants
    bool email;
  };
  std::vector<Lookup> lookups;
};

// Adds one requested grant: canonical ids are 64 hex digits, groups are
// S3's, users are looked up later.
S3Status Add(const authz::RequestedGrant& requested, PendingAcl& acl) {
  using Kind = authz::RequestedGrant::Kind;
  switch (requested.kind) {
    case Kind::kCanonicalUser:
      if (!IsCanonicalId(requested.value)) return InvalidIdError(requested.value);
      break;
    case Kind::kGroup:
      if (S3Status group = authz::CheckGroupUri(requested.value); !group.ok()) return group.error();
      acl.grants.push_back({authz::Grant::Kind::kGroup, requested.value, requested.permission});
      return S3Status::Ok();
    case Kind::kEmail: break;
  }
  acl.lookups.push_back({acl.grants.size(), requested.kind == Kind::kEmail});
  acl.grants.push_back({authz::Grant::Kind::kCanonicalUser, requested.value, requested.permission});
  return S3Status::Ok();
}

S3Status AddHeaders(const S3Call& call, PendingAcl& acl) {
  for (const authz::GrantHeader& header : authz::kGrantHeaders) {
    const auto value = call.Header(header.name);
    if (!value) continue;
    auto requested = authz::ParseGrantHeader(header.name, *value, header.permission);
    if (!requested.ok()) return requested.error();
    for (const authz::RequestedGrant& r : *requested) {
      if (S3Status added = Add(r, acl); !added.ok()) return added;
    }
  }
  return S3Status::Ok();
}

S3Status AddBody(std::string_view body, PendingAcl& acl) {
  auto grants = ParseAccessControlPolicy(body);
  if (!grants.ok()) return grants.error();
  for (const AclGrant& g : *grants) {
    const auto permission = authz::ParsePermission(g.permission);
    if (!permission) return S3Error(S3ErrorCode::kMalformedACLError);
    authz::RequestedGrant requested;
    requested.permission = *permission;
    if (g.grantee_type == "CanonicalUser") {
      requested.kind = authz::RequestedGrant::Kind::kCanonicalUser;
      requested.value = g.id;
    } else if (g.grantee_type == "Group") {
      requested.kind = authz::RequestedGrant::Kind::kGroup;
      requested.value = g.uri;
    } else if (g.grantee_type == "AmazonCustomerByEmail") {
      requested.kind = authz::RequestedGrant::Kind::kEmail;
      requested.value = g.email;
    } else {
      return S3Error(S3ErrorCode::kMalformedACLError);
    }
    if (S3Status added = Add(requested, acl); !added.ok()) return added;
  }
  return S3Status::Ok();
}

// The ACL the request asks for by x-amz-acl, x-amz-grant-* or an
// AccessControlPolicy `body` (one of them: InvalidRequest otherwise);
// nullopt when it asks for none. Bad canned names, ids, group URIs:
// InvalidArgument; more than kS3AclGrantsMax grants: MalformedACLError.
S3Result<std::optional<PendingAcl>> ParseRequestedAcl(const S3Call& call, std::string_view body,
                                                      const std::string& owner_id,
                                                      const std::string& bucket_owner_id) {
  const auto canned = call.Header("x-amz-acl");
  const bool headers = HasGrantHeader(call);
  if ((canned || headers) && !body.empty()) {
    return S3Error(S3ErrorCode::kInvalidRequest,
                   "Specify either an x-amz-acl header or an AccessControlPolicy body, not both");
  }
  if (canned && headers) {
    return S3Error(S3ErrorCode::kInvalidRequest,
                   "Specifying both Canned ACLs and Header Grants is not allowed");
  }
  PendingAcl acl;
  if (canned) {
    auto grants = authz::CannedAcl(*canned, owner_id, bucket_owner_id);
    if (!grants) {
      return S3Error(S3ErrorCode::kInvalidArgument)
          .With("ArgumentName", "x-amz-acl")
          .With("ArgumentValue", std::string(*canned));
    }
    acl.grants = std::move(*grants);  // the owners' ids: nothing to look up
  } else if (headers) {
    if (S3Status added = AddHeaders(call, acl); !added.ok()) return added.error();
  } else if (!body.empty()) {
    if (S3Status added = AddBody(body, acl); !added.ok()) return added.error();
  } else {
    return std::optional<PendingAcl>();
  }
  if (acl.grants.size() > limits::kS3AclGrantsMax) return S3Error(S3ErrorCode::kMalformedACLError);
  // The owners' ids need no lookup (the anonymous owner's is no user's).
  std::erase_if(acl.lookups, [&](const PendingAcl::Lookup& l) {
    const std::string& id = acl.grants[l.index].grantee;
    return !l.email && (id == owner_id || id == bucket_owner_id);
  });
  return std::optional<PendingAcl>(std::move(acl));
}

// Resolves acl->lookups from `next_lookup` on, one registry round trip
// each (at most kS3AclGrantsMax), then calls `done`.
void ResolveLookups(CallPtr call, std::shared_ptr<PendingAcl> acl, size_t next_lookup,
                    std::function<void(std::optional<std::vector<authz::Grant>>)> done) {
  if (next_lookup == acl->lookups.size()) return done(std::move(acl->grants));
  const PendingAcl::Lookup lookup = acl->lookups[next_lookup];
  const std::string value = acl->grants[lookup.index].grantee;
  pb::FindUserRequest request;
  (lookup.email ? request.mutable_email() : request.mutable_canonical_id())->assign(value);
  call->front.registry().FindUser(
      std::move(request), [call, acl, next_lookup, lookup, value,
                           done = std::move(done)](Result<pb::FindUserResponse> found) mutable {
        if (!found.ok()) return call->Fail(found.status());
        if (!found->found()) {
          if (!lookup.email) return call->Fail(InvalidIdError(value));
          return call->Fail(S3Error(S3ErrorCode::kUnresolvableGrantByEmailAddress)
                                .With("EmailAddress", value));
        }
        // S3 stores (and answers) the canonical id an email resolves to.
        acl->grants[lookup.index].grantee = found->canonical_id();
        ResolveLookups(call, std::move(acl), next_lookup + 1, std::move(done));
      });
}

// PutBucketAcl's ACL, resolved: replaces the one in the bucket's record.
void StoreBucketAcl(CallPtr call, const std::vector<authz::Grant>& grants,
                    const std::string& owner_id) {
  if (S3Status allowed = CheckAclAllowed(call->bucket_config.get(), grants, owner_id);
      !allowed.ok()) {
    return call->Fail(allowed.error());
  }
  pb::SetBucketConfigOp op;
  op.set_bucket_id(call->bucket_info.bucket_id());
  op.set_set_acl(true);
  *op.mutable_acl() = StoredAclOf(grants);
  call->front.SetBucketConfig(std::move(op), [call](Result<pb::S3OpResult> result) {
    if (!result.ok()) return call->Fail(result.status());
    if (result->outcome() != pb::S3_OK) return call->Fail(OpOutcomeError(*call, *result));
    call->Respond(200, {{"Content-Length", "0"}}, "");
  });
}

void PutBucketAcl(CallPtr call, std::string_view body) {
  const std::string owner_id = CanonicalUserId(call->bucket_info.owner());
  WithRequestedAcl(call, body, owner_id, owner_id,
                   [call, owner_id](std::optional<std::vector<authz::Grant>> grants) {
                     if (!grants) return call->Fail(S3Error(S3ErrorCode::kMissingSecurityHeader));
                     StoreBucketAcl(call, *grants, owner_id);
                   });
}

// PutObjectAcl on version `v` (the decision on it was taken).
void PutObjectAcl(CallPtr call, std::string_view body, const pb::ObjectVersion& v) {
  const ObjectAccess access =
      ObjectAccessOf(call->bucket_info.owner(), call->bucket_config.get(), v);
  WithRequestedAcl(
      call, body, CanonicalIdOfOwner(access.owner), CanonicalUserId(call->bucket_info.owner()),
      [call, version_id = v.version_id()](std::optional<std::vector<authz::Grant>> grants) {
        if (!grants) return call->Fail(S3Error(S3ErrorCode::kMissingSecurityHeader));
        const pb::BucketConfig* config = call->bucket_config.get();
        const std::string bucket_owner_id = CanonicalUserId(call->bucket_info.owner());
        if (S3Status allowed = CheckAclAllowed(config, grants, bucket_owner_id); !allowed.ok()) {
          return call->Fail(allowed.error());
        }
        // ACLs disabled: the one ACL allowed is what every object has.
        if (AclsDisabled(config)) return call->Respond(200, {{"Content-Length", "0"}}, "");
        pb::S3Op op;
        pb::SetObjectAclOp* set = op.mutable_set_object_acl();
        set->set_bucket_id(call->bucket_info.bucket_id());
        set->set_key(call->stored_key());
        // The version decided on, by id: in a versioned bucket a PUT racing
        // this one cannot make the ACL land on a version nobody decided on.
        set->set_version_id(version_id);
        *set->mutable_acl() = StoredAclOf(*grants);
        call->front.index().Apply(std::move(op), [call](Result<pb::S3OpResult> r) {
          if (!r.ok()) return call->Fail(r.status());
          if (r->outcome() != pb::S3_OK) return call->Fail(OpOutcomeError(*call, *r));
          http::Headers headers;
          if (call->HasParam("versionId")) headers.emplace_back("x-amz-version-id", r->version_id());
          headers.emplace_back("Content-Length", "0");
          call->Respond(200, std::move(headers), "");
        });
      });
}

}  // namespace

pb::StoredAcl StoredAclOf(const std::vector<authz::Grant>& grants) {
  pb::StoredAcl acl;
  for (const authz::Grant& g : grants) {
    pb::StoredGrant* stored = acl.add_grants();
    stored->set_group(g.kind == authz::Grant::Kind::kGroup);
    stored->set_grantee(g.grantee);
    stored->set_permission(std::string(authz::PermissionName(g.permission)));
  }
  return acl;
}

void WithRequestedAcl(CallPtr call, std::string_view body, const std::string& owner_id,
                      const std::string& bucket_owner_id,
                      std::function<void(std::optional<std::vector<authz::Grant>>)> next) {
  auto parsed = ParseRequestedAcl(*call, body, owner_id, bucket_owner_id);
  if (!parsed.ok()) return call->Fail(parsed.error());
  if (!*parsed) return next(std::nullopt);
  ResolveLookups(call, std::make_shared<PendingAcl>(std::move(**parsed)), 0, std::move(next));
}

void WithObjectWriteAccess(CallPtr call, std::function<void(ObjectWriteAccess)> next) {
  const pb::BucketConfig* config = call->bucket_config.get();
  const pb::ObjectOwnership ownership = ObjectOwnershipOf(config);
  // Who will own the object: the writer, except where the bucket's owner
  // takes it (BucketOwnerEnforced always; BucketOwnerPreferred when the
  // write grants it bucket-owner-full-control).
  const bool bucket_owner_takes =
      ownership == pb::BUCKET_OWNER_ENFORCED ||
      (ownership == pb::BUCKET_OWNER_PREFERRED &&
       call->Header("x-amz-acl") == std::optional<std::string_view>("bucket-owner-full-control"));
  const std::string owner = bucket_owner_takes ? call->bucket_info.owner() : call->user;
  const std::string bucket_owner_id = CanonicalUserId(call->bucket_info.owner());
  WithRequestedAcl(call, "", CanonicalIdOfOwner(owner), bucket_owner_id,
                   [call, owner, bucket_owner_id, next = std::move(next)](
                       std::optional<std::vector<authz::Grant>> grants) {
                     const pb::BucketConfig* bucket_config = call->bucket_config.get();
                     if (S3Status allowed = CheckAclAllowed(bucket_config, grants, bucket_owner_id);
                         !allowed.ok()) {
                       return call->Fail(allowed.error());
                     }
                     ObjectWriteAccess access;
                     access.owner = owner;
                     // Disabled ACLs store none (the owner's FULL_CONTROL).
                     if (grants && !AclsDisabled(bucket_config)) access.acl = StoredAclOf(*grants);
                     next(std::move(access));
                   });
}

std::string CanonicalIdOfOwner(const std::string& user) {
  return user.empty() ? std::string(authz::kAnonymousCanonicalId) : CanonicalUserId(user);
}

ObjectAccess ObjectAccessOf(const std::string& bucket_owner, const pb::BucketConfig* config,
                            const pb::ObjectVersion& v) {
  ObjectAccess out;
  // ACLs disabled: the bucket's owner owns every object, whoever wrote it.
  if (AclsDisabled(config)) {
    out.owner = bucket_owner;
    return out;
  }
  out.owner = v.owner();
  if (v.has_acl()) out.acl = GrantsOfStored(v.acl());
  return out;
}

std::optional<std::vector<authz::Grant>> GrantsOf(const pb::BucketConfig& config) {
  if (!config.has_acl() || AclsDisabled(&config)) return std::nullopt;
  return GrantsOfStored(config.acl());
}

std::vector<authz::Grant> GrantsOfStored(const pb::StoredAcl& acl) {
  std::vector<authz::Grant> out;
  for (const pb::StoredGrant& g : acl.grants()) {
    const auto permission = authz::ParsePermission(g.permission());
    if (!permission) continue;  // written by a newer router: grants nothing here
    out.push_back(authz::Grant{g.group() ? authz::Grant::Kind::kGroup
                                         : authz::Grant::Kind::kCanonicalUser,
                               g.grantee(), *permission});
  }
  return out;
}

std::string StoredAclXml(const Owner& owner, const pb::StoredAcl& acl) {
  std::vector<AclGrant> grants;
  for (const pb::StoredGrant& g : acl.grants()) {
    AclGrant out;
    out.grantee_type = g.group() ? "Group" : "CanonicalUser";
    (g.group() ? out.uri : out.id) = g.grantee();
    out.permission = g.permission();
    grants.push_back(std::move(out));
  }
  return AccessControlPolicyXml(owner, grants);
}

void PutAcl(CallPtr call) {
  const authz::Action action =
      call->key.empty() ? authz::Action::kPutBucketAcl
                        : ByVersion(*call, authz::Action::kPutObjectAcl, authz::Action::kPutObjectVersionAcl);
  WithAuthorizedBucket(call, action, [call] {
    ReadSmallBody(call, limits::kS3XmlBodyBytesMax, [call](S3Result<std::string> body) {
      if (!body.ok()) return call->Fail(body.error());
      if (call->key.empty()) return PutBucketAcl(call, *body);
      if (const QueryParam* version = call->Param("versionId")) {
        if (version->value.empty() || !IsVersionIdSyntax(version->value)) {
          return call->Fail(VersionIdArgumentError(version->value));
        }
      }
      WithSubresourceVersion(call, [call, body = std::move(body).value()](
                                       const pb::ObjectVersion& v) { PutObjectAcl(call, body, v); });
    });
  });
}

}  // namespace tessera::s3::front
