// ACLs: PUT ?acl on buckets and objects, the ACL a CreateBucket asks for,
// and the conversions between stored ACLs (pb::StoredAcl in the bucket's
// configuration record) and authz grants (see the ACL functions in
// s3_call.h).
#include <algorithm>

#include "common/limits.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/front/small_body.h"
#include "s3/protocol/names.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {

constexpr std::string_view kOnlyPrivate =
    "Only the private ACL (the owner's full control, nobody else's access) is supported";
constexpr std::string_view kNoEmailGrants =
    "Grants by email address are not supported yet; grant by canonical user id";

bool GrantsOwnerOnly(const std::vector<AclGrant>& grants, const std::string& owner_id) {
  return std::all_of(grants.begin(), grants.end(), [&](const AclGrant& g) {
    return g.grantee_type == "CanonicalUser" && g.id == owner_id && g.permission == "FULL_CONTROL";
  });
}

bool IsCanonicalId(std::string_view id) {
  return id.size() == 64 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool HasGrantHeader(const S3Call& call) {
  return std::any_of(std::begin(authz::kGrantHeaders), std::end(authz::kGrantHeaders),
                     [&](const authz::GrantHeader& h) { return call.Header(h.name).has_value(); });
}

// A grant as the request named it, checked: canonical ids are 64 hex
// digits, groups are S3's, emails are not resolvable yet.
S3Result<authz::Grant> Resolve(const authz::RequestedGrant& requested) {
  using Kind = authz::RequestedGrant::Kind;
  switch (requested.kind) {
    case Kind::kCanonicalUser:
      if (!IsCanonicalId(requested.value)) {
        return S3Error(S3ErrorCode::kInvalidArgument, "Invalid id")
            .With("ArgumentName", "CanonicalUser/ID")
            .With("ArgumentValue", requested.value);
      }
      return authz::Grant{authz::Grant::Kind::kCanonicalUser, requested.value, requested.permission};
    case Kind::kGroup:
      if (S3Status group = authz::CheckGroupUri(requested.value); !group.ok()) return group.error();
      return authz::Grant{authz::Grant::Kind::kGroup, requested.value, requested.permission};
    case Kind::kEmail: break;
  }
  return S3Error(S3ErrorCode::kNotImplemented, std::string(kNoEmailGrants));
}

S3Result<std::vector<authz::Grant>> GrantsOfHeaders(const S3Call& call) {
  std::vector<authz::Grant> out;
  for (const authz::GrantHeader& header : authz::kGrantHeaders) {
    const auto value = call.Header(header.name);
    if (!value) continue;
    auto requested = authz::ParseGrantHeader(header.name, *value, header.permission);
    if (!requested.ok()) return requested.error();
    for (const authz::RequestedGrant& r : *requested) {
      auto grant = Resolve(r);
      if (!grant.ok()) return grant.error();
      out.push_back(std::move(grant).value());
    }
  }
  return out;
}

S3Result<std::vector<authz::Grant>> GrantsOfBody(std::string_view body) {
  auto grants = ParseAccessControlPolicy(body);
  if (!grants.ok()) return grants.error();
  std::vector<authz::Grant> out;
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
    auto grant = Resolve(requested);
    if (!grant.ok()) return grant.error();
    out.push_back(std::move(grant).value());
  }
  return out;
}

// The ACL the request asks for is the private one (objects: nothing else
// is stored yet). NotImplemented for any other ACL.
S3Status CheckPrivateAcl(const S3Call& call, std::string_view body) {
  if (HasGrantHeader(call)) return S3Error(S3ErrorCode::kNotImplemented, std::string(kOnlyPrivate));
  if (auto canned = call.Header("x-amz-acl")) {
    if (!body.empty()) {
      return S3Error(S3ErrorCode::kInvalidRequest,
                     "Specify either an x-amz-acl header or an AccessControlPolicy body, not both");
    }
    if (*canned != "private") return S3Error(S3ErrorCode::kNotImplemented, std::string(kOnlyPrivate));
    return S3Status::Ok();
  }
  auto grants = ParseAccessControlPolicy(body);
  if (!grants.ok()) return grants.error();
  if (!GrantsOwnerOnly(*grants, call.principal.canonical_id)) {
    return S3Error(S3ErrorCode::kNotImplemented, std::string(kOnlyPrivate));
  }
  return S3Status::Ok();
}

void PutBucketAcl(CallPtr call, std::string_view body) {
  auto grants = RequestedAcl(*call, body, CanonicalUserId(call->bucket_info.owner()));
  if (!grants.ok()) return call->Fail(grants.error());
  if (!*grants) return call->Fail(S3Error(S3ErrorCode::kMissingSecurityHeader));
  if (S3Status block = CheckPublicAclAllowed(*call, **grants); !block.ok()) {
    return call->Fail(block.error());  // BlockPublicAcls
  }
  pb::SetBucketConfigOp op;
  op.set_bucket_id(call->bucket_info.bucket_id());
  op.set_set_acl(true);
  *op.mutable_acl() = StoredAclOf(**grants);
  call->front.SetBucketConfig(std::move(op), [call](Result<pb::S3OpResult> result) {
    if (!result.ok()) return call->Fail(result.status());
    if (result->outcome() != pb::S3_OK) return call->Fail(OpOutcomeError(*call, *result));
    call->Respond(200, {{"Content-Length", "0"}}, "");
  });
}

}  // namespace

S3Result<std::optional<std::vector<authz::Grant>>> RequestedAcl(const S3Call& call,
                                                                std::string_view body,
                                                                const std::string& owner_id) {
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
  std::vector<authz::Grant> grants;
  if (canned) {
    auto acl = authz::CannedAcl(*canned, owner_id, owner_id);
    if (!acl) {
      return S3Error(S3ErrorCode::kInvalidArgument)
          .With("ArgumentName", "x-amz-acl")
          .With("ArgumentValue", std::string(*canned));
    }
    grants = std::move(*acl);
  } else if (headers) {
    auto parsed = GrantsOfHeaders(call);
    if (!parsed.ok()) return parsed.error();
    grants = std::move(parsed).value();
  } else if (!body.empty()) {
    auto parsed = GrantsOfBody(body);
    if (!parsed.ok()) return parsed.error();
    grants = std::move(parsed).value();
  } else {
    return std::optional<std::vector<authz::Grant>>();
  }
  if (grants.size() > limits::kS3AclGrantsMax) return S3Error(S3ErrorCode::kMalformedACLError);
  return std::optional<std::vector<authz::Grant>>(std::move(grants));
}

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

std::optional<std::vector<authz::Grant>> GrantsOf(const pb::BucketConfig& config) {
  if (!config.has_acl()) return std::nullopt;
  std::vector<authz::Grant> out;
  for (const pb::StoredGrant& g : config.acl().grants()) {
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
      if (S3Status acl = CheckPrivateAcl(*call, *body); !acl.ok()) return call->Fail(acl.error());
      WithSubresourceVersion(call, [call](const pb::ObjectVersion& v) {
        http::Headers headers;
        if (call->HasParam("versionId")) headers.emplace_back("x-amz-version-id", v.version_id());
        call->Respond(200, std::move(headers), "");
      });
    });
  });
}

}  // namespace tessera::s3::front
