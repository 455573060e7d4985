// S3 Object Ownership (see the ownership functions in s3_call.h):
// PUT/GET/DELETE ?ownershipControls keep the bucket's setting in its
// configuration record (BucketConfig.ownership_controls, one
// SetBucketConfigOp each), and what the setting means for the owner of
// what is written and for ACLs. No controls act as ObjectWriter (decision
// D110).
#include <utility>

#include "common/limits.h"
#include "s3/authz/public_access.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/front/small_body.h"
#include "s3/protocol/names.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {

// Stores `controls` (nullopt: removes them) and answers `status`.
void StoreControls(CallPtr call, std::optional<pb::ObjectOwnership> ownership, unsigned status) {
  pb::SetBucketConfigOp op;
  op.set_bucket_id(call->bucket_info.bucket_id());
  op.set_set_ownership_controls(true);
  if (ownership) op.mutable_ownership_controls()->set_object_ownership(*ownership);
  call->front.SetBucketConfig(std::move(op), [call, status](Result<pb::S3OpResult> result) {
    if (!result.ok()) return call->Fail(result.status());
    if (result->outcome() != pb::S3_OK) return call->Fail(OpOutcomeError(*call, *result, {}));
    call->Respond(status, {{"Content-Length", "0"}}, "");
  });
}

}  // namespace

std::optional<pb::ObjectOwnership> ParseObjectOwnership(std::string_view name) {
  if (name == "BucketOwnerEnforced") return pb::BUCKET_OWNER_ENFORCED;
  if (name == "BucketOwnerPreferred") return pb::BUCKET_OWNER_PREFERRED;
  if (name == "ObjectWriter") return pb::OBJECT_WRITER;
  return std::nullopt;
}

std::string_view ObjectOwnershipName(pb::ObjectOwnership ownership) {
  switch (ownership) {
    case pb::BUCKET_OWNER_ENFORCED: return "BucketOwnerEnforced";
    case pb::BUCKET_OWNER_PREFERRED: return "BucketOwnerPreferred";
    default: return "ObjectWriter";
  }
}

pb::ObjectOwnership ObjectOwnershipOf(const pb::BucketConfig* config) {
  if (config == nullptr || !config->has_ownership_controls()) return pb::OBJECT_WRITER;
  const pb::ObjectOwnership stored = config->ownership_controls().object_ownership();
  return stored == pb::OBJECT_OWNERSHIP_UNSET ? pb::OBJECT_WRITER : stored;
}

bool AclsDisabled(const pb::BucketConfig* config) {
  return ObjectOwnershipOf(config) == pb::BUCKET_OWNER_ENFORCED;
}

S3Status CheckAclAllowed(const pb::BucketConfig* config,
                         const std::optional<std::vector<authz::Grant>>& grants,
                         const std::string& bucket_owner_id) {
  if (!grants) return S3Status::Ok();
  if (AclsDisabled(config)) {
    const std::vector<authz::Grant> owner_full_control = {
        {authz::Grant::Kind::kCanonicalUser, bucket_owner_id, authz::Permission::kFullControl}};
    if (*grants == owner_full_control) return S3Status::Ok();
    return S3Error(S3ErrorCode::kAccessControlListNotSupported);
  }
  // BlockPublicAcls: an ACL granting AllUsers or AuthenticatedUsers is
  // refused, whether canned or spelled out.
  if (config != nullptr && config->public_access_block().block_public_acls() &&
      authz::IsPublicAcl(*grants)) {
    return S3Error(S3ErrorCode::kAccessDenied);
  }
  return S3Status::Ok();
}

void PutBucketOwnershipControls(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kPutBucketOwnershipControls, [call] {
    ReadSmallBody(call, limits::kS3XmlBodyBytesMax, [call](S3Result<std::string> body) {
      if (!body.ok()) return call->Fail(body.error());
      auto name = ParseOwnershipControls(*body);
      if (!name.ok()) return call->Fail(name.error());
      StoreControls(call, ParseObjectOwnership(*name), 200);
    });
  });
}

void GetBucketOwnershipControls(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kGetBucketOwnershipControls, [call] {
    // WithAuthorizedBucket read the record (through the cache).
    const pb::BucketConfig* config = call->bucket_config.get();
    if (!config->has_ownership_controls()) {
      return call->Fail(S3Error(S3ErrorCode::kOwnershipControlsNotFoundError)
                            .With("BucketName", call->bucket));
    }
    call->RespondXml(200, OwnershipControlsXml(ObjectOwnershipName(ObjectOwnershipOf(config))));
  });
}

void DeleteBucketOwnershipControls(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kPutBucketOwnershipControls,
                       [call] { StoreControls(call, std::nullopt, 204); });
}

}  // namespace tessera::s3::front
