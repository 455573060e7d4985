// PUT ?acl on buckets and objects (see PutAcl in s3_call.h).
#include <algorithm>

#include "common/limits.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/front/small_body.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {

constexpr std::string_view kOnlyPrivate =
    "Only the private ACL (the owner's full control, nobody else's access) is supported";

bool GrantsOwnerOnly(const std::vector<AclGrant>& grants, const std::string& owner_id) {
  return std::all_of(grants.begin(), grants.end(), [&](const AclGrant& g) {
    return g.grantee_type == "CanonicalUser" && g.id == owner_id && g.permission == "FULL_CONTROL";
  });
}

// The ACL the request asks for is the private one: x-amz-acl: private, or
// an AccessControlPolicy body granting the owner FULL_CONTROL and nothing
// to anyone else. NotImplemented for any other ACL.
S3Status CheckPrivateAcl(const S3Call& call, std::string_view body) {
  for (const char* grant : {"x-amz-grant-full-control", "x-amz-grant-read", "x-amz-grant-write",
                            "x-amz-grant-read-acp", "x-amz-grant-write-acp"}) {
    if (call.Header(grant)) return S3Error(S3ErrorCode::kNotImplemented, std::string(kOnlyPrivate));
  }
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

}  // namespace

void PutAcl(CallPtr call) {
  const authz::Action action =
      call->key.empty() ? authz::Action::kPutBucketAcl
                        : ByVersion(*call, authz::Action::kPutObjectAcl, authz::Action::kPutObjectVersionAcl);
  WithAuthorizedBucket(call, action, [call] {
    ReadSmallBody(call, limits::kS3XmlBodyBytesMax, [call](S3Result<std::string> body) {
      if (!body.ok()) return call->Fail(body.error());
      if (S3Status acl = CheckPrivateAcl(*call, *body); !acl.ok()) return call->Fail(acl.error());
      if (call->key.empty()) return call->Respond(200, {}, "");
      WithSubresourceVersion(call, [call](const pb::ObjectVersion& v) {
        http::Headers headers;
        if (call->HasParam("versionId")) headers.emplace_back("x-amz-version-id", v.version_id());
        call->Respond(200, std::move(headers), "");
      });
    });
  });
}

}  // namespace tessera::s3::front
