// Service- and bucket-level operations: ListBuckets, CreateBucket,
// DeleteBucket, HeadBucket and the bucket sub-resources clients probe
// (s3cmd info, rclone): location, acl, versioning, policy, cors, ...
#include <spdlog/spdlog.h>

#include "common/limits.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/front/small_body.h"
#include "s3/protocol/bucket_listing.h"
#include "s3/protocol/names.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {


VersioningState VersioningOf(const pb::BucketDescriptor& bucket) {
  switch (bucket.versioning()) {
    case pb::VERSIONING_ENABLED: return VersioningState::kEnabled;
    case pb::VERSIONING_SUSPENDED: return VersioningState::kSuspended;
    default: return VersioningState::kNeverEnabled;
  }
}

// A region name the client asked for is acceptable when it is ours; AWS
// treats "" (and us-east-1's legacy "US") as us-east-1, and refuses
// "us-east-1" itself as a LocationConstraint (InvalidLocationConstraint).
bool RegionMatches(const std::string& asked, const std::string& ours) {
  if (asked.empty() || asked == "US") return ours == "us-east-1";
  return asked == ours && asked != "us-east-1";
}

// Shaped like an AWS region name ("eu-west-1", "us-gov-east-1",
// "ap-southeast-5"), or the legacy "EU": a region that exists elsewhere, not
// a made-up constraint. Only the shape is checked, so new regions pass.
bool LooksLikeRegion(const std::string& name) {
  if (name == "EU") return true;
  const size_t last_dash = name.rfind('-');
  if (last_dash == std::string::npos || last_dash + 1 == name.size() || name.size() > 32) {
    return false;
  }
  for (size_t i = last_dash + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
  }
  size_t words = 0;
  size_t start = 0;
  while (start < last_dash) {
    const size_t dash = name.find('-', start);
    if (dash == start) return false;
    for (size_t i = start; i < dash; ++i) {
      if (name[i] < 'a' || name[i] > 'z') return false;
    }
    ++words;
    start = dash + 1;
  }
  return words >= 2 && name.find('-') == 2;
}

// Why a LocationConstraint the cluster cannot serve is refused, as a
// regional AWS endpoint refuses it: IllegalLocationConstraintException for
// none (outside us-east-1) or another real region, InvalidLocationConstraint
// for "us-east-1" named explicitly and for names that are not regions.
S3Error LocationConstraintError(const std::string& asked) {
  if (asked.empty()) return S3Error(S3ErrorCode::kIllegalLocationConstraintException);
  if (asked != "us-east-1" && LooksLikeRegion(asked)) {
    return S3Error(S3ErrorCode::kIllegalLocationConstraintException,
                   "The " + asked +
                       " location constraint is incompatible for the region specific endpoint "
                       "this request was sent to.");
  }
  return S3Error(S3ErrorCode::kInvalidLocationConstraint).With("LocationConstraint", asked);
}

}  // namespace

void ListBuckets(CallPtr call) {
  if (!Authorized(*call, authz::Action::kListAllMyBuckets, "", "", "")) return;
  auto query = ParseListBucketsQuery(call->query, call->front.options().region);
  if (!query.ok()) return call->Fail(query.error());
  call->front.registry().ListBuckets(
      call->user, [call, query = std::move(query).value()](
                      Result<std::vector<pb::BucketDescriptor>> buckets) {
        if (!buckets.ok()) return call->Fail(buckets.status());
        std::vector<BucketEntry> entries;
        entries.reserve(buckets->size());
        for (const pb::BucketDescriptor& b : *buckets) {
          entries.push_back(BucketEntry{b.name(), b.created_ms(), b.region()});
        }
        call->RespondXml(200,
                         ListAllMyBucketsXml(SelectBuckets(entries, query, OwnerOfUser(*call, call->user))));
      });
}

namespace {

// The ACL and ownership controls CreateBucket asked for, into the new
// bucket's configuration record. Should the op fail, the bucket exists
// with the private ACL and no controls (the safe default for the ACL) and
// the client learns the error. `reset_acl`: the ACL is replaced even when
// none was asked for (then private), as re-creating an owned bucket in
// us-east-1 does.
void StoreCreatedBucketConfig(CallPtr call, uint64_t bucket_id,
                              const std::optional<std::vector<authz::Grant>>& grants,
                              std::optional<pb::ObjectOwnership> ownership,
                              bool reset_acl = false) {
  pb::SetBucketConfigOp op;
  op.set_bucket_id(bucket_id);
  if (grants || reset_acl) op.set_set_acl(true);  // no acl: cleared, the private one
  if (grants) *op.mutable_acl() = StoredAclOf(*grants);
  if (ownership) {
    op.set_set_ownership_controls(true);
    op.mutable_ownership_controls()->set_object_ownership(*ownership);
  }
  call->front.SetBucketConfig(std::move(op), [call](Result<pb::S3OpResult> result) {
    if (!result.ok()) return call->Fail(result.status());
    if (result->outcome() != pb::S3_OK) return call->Fail(OpOutcomeError(*call, *result));
    call->Respond(200, {{"Location", "/" + call->bucket}}, "");
  });
}

// Creates the bucket in the registry, then stores what CreateBucket asked
// for in its configuration record (StoreCreatedBucketConfig).
void RegisterBucket(CallPtr call, std::optional<std::vector<authz::Grant>> acl,
                    std::optional<pb::ObjectOwnership> ownership) {
  pb::CreateBucketRequest request;
  request.set_name(call->bucket);
  request.set_owner(call->user);
  request.set_region(call->front.options().region);
  call->front.registry().CreateBucket(request, [call, acl = std::move(acl), ownership](
                                                   Result<router::CreatedBucket> created) {
    if (!created.ok()) {
      if (created.status().code() == StatusCode::kConflict) {
        return call->Fail(S3Error(S3ErrorCode::kBucketAlreadyExists));
      }
      return call->Fail(created.status());
    }
    if (created->already_owned_by_you) {
      // AWS's legacy answer in us-east-1: 200, the bucket's ACL reset to
      // what this request asks (private when nothing); 409 elsewhere (D85).
      if (call->front.options().region != "us-east-1") {
        return call->Fail(S3Error(S3ErrorCode::kBucketAlreadyOwnedByYou));
      }
      return StoreCreatedBucketConfig(call, created->bucket.bucket_id(), acl, std::nullopt,
                                      /*reset_acl=*/true);
    }
    if (created->too_many_buckets) return call->Fail(S3Error(S3ErrorCode::kTooManyBuckets));
    if (!acl && !ownership) return call->Respond(200, {{"Location", "/" + call->bucket}}, "");
    StoreCreatedBucketConfig(call, created->bucket.bucket_id(), acl, ownership);
  });
}

}  // namespace

void CreateBucket(CallPtr call) {
  if (auto valid = ValidateBucketName(call->bucket); !valid.ok()) return call->Fail(valid.error());
  if (!Authorized(*call, authz::Action::kCreateBucket, call->bucket, "", "")) return;
  // Read as every small document is: checked against the signed payload
  // hash, Content-MD5 and declared checksums.
  ReadSmallBody(call, limits::kS3XmlBodyBytesMax, [call](S3Result<std::string> body) {
    if (!body.ok()) return call->Fail(body.error());
    auto config = ParseCreateBucketConfiguration(*body);
    if (!config.ok()) return call->Fail(config.error());
    const std::string& region = call->front.options().region;
    if (!RegionMatches(config->location_constraint, region)) {
      return call->Fail(LocationConstraintError(config->location_constraint));
    }
    // x-amz-acl / x-amz-grant-*: checked before the bucket exists, stored
    // in its configuration record once it does (the private ACL is the
    // default and needs no record).
    // x-amz-object-ownership: stored with the ACL (none: no controls).
    std::optional<pb::ObjectOwnership> ownership;
    if (auto header = call->Header("x-amz-object-ownership")) {
      ownership = ParseObjectOwnership(*header);
      if (!ownership) {
        return call->Fail(InvalidArgumentError("Invalid x-amz-object-ownership header",
                                               "x-amz-object-ownership", std::string(*header)));
      }
    }
    const std::string owner_id = CanonicalUserId(call->user);
    WithRequestedAcl(call, "", owner_id, owner_id,
                     [call, owner_id, ownership](std::optional<std::vector<authz::Grant>> acl) {
                       if (acl && *acl == *authz::CannedAcl("private", owner_id, owner_id)) {
                         acl.reset();
                       }
                       if (acl && ownership == pb::BUCKET_OWNER_ENFORCED) {
                         return call->Fail(
                             S3Error(S3ErrorCode::kInvalidBucketAclWithObjectOwnership));
                       }
                       RegisterBucket(call, std::move(acl), ownership);
                     });
  });
}

namespace {

// After the registry dropped the bucket: its configuration record goes
// too (one op in the partition holding it). Bucket ids are never reused,
// so a record this fails to remove (the router died, the op timed out) is
// never read again; it is only bytes.
void RemoveBucketConfig(CallPtr call) {
  pb::SetBucketConfigOp op;
  op.set_bucket_id(call->bucket_info.bucket_id());
  op.set_delete_record(true);
  call->front.SetBucketConfig(std::move(op), [call](Result<pb::S3OpResult> removed) {
    if (!removed.ok()) {
      spdlog::warn("s3.bucket_config_left bucket_id={} status={}",
                   call->bucket_info.bucket_id(), removed.status().ToString());
    }
    call->Respond(204, {}, "");
  });
}

}  // namespace

void DeleteBucket(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kDeleteBucket, [call] {
    // Empty means no version at all: noncurrent versions and delete
    // markers are data too (S3 refuses with BucketNotEmpty). Uploads in
    // progress do not count, as in S3. An ordered walk of the stored keys
    // whatever the layout: any record of the bucket will do.
    ListQuery query;
    query.bucket_id = call->bucket_info.bucket_id();
    query.versions = true;
    query.max_items = 1;
    call->front.index().List(query, [call](Result<ListPage> page) {
      if (!page.ok()) return call->Fail(page.status());
      if (!page->items.empty()) {
        // S3 tells the owner of a versioned bucket why it is not empty.
        if (call->bucket_info.versioning() == pb::VERSIONING_UNSET) {
          return call->Fail(S3Error(S3ErrorCode::kBucketNotEmpty));
        }
        return call->Fail(S3Error(S3ErrorCode::kBucketNotEmpty,
                                  "The bucket you tried to delete is not empty. You must delete "
                                  "all versions in the bucket."));
      }
      call->front.registry().DeleteBucket(
          call->bucket, call->user, call->bucket_info.bucket_id(),
          [call](Result<pb::BucketDescriptor> deleted) {
            if (!deleted.ok()) {
              if (deleted.status().code() == StatusCode::kNotFound) {
                return call->Fail(S3Error(S3ErrorCode::kNoSuchBucket));
              }
              return call->Fail(deleted.status());
            }
            RemoveBucketConfig(call);
          });
    });
  });
}

void HeadBucket(CallPtr call) {
  WithAuthorizedBucket(call, authz::Action::kListBucket, [call] {
    call->Respond(200,
                  {{"x-amz-bucket-region", call->bucket_info.region()},
                   {"x-amz-access-point-alias", "false"},
                   {"Content-Length", "0"}},
                  "");
  });
}

void GetBucketSubresource(CallPtr call) {
  // Dispatch sends a GET here for a sub-resource parameter; the first
  // present names the action.
  authz::Action action = authz::Action::kGetBucketConfiguration;
  for (const QueryParam& p : call->query) {
    if (authz::BucketSubresourceAction(p.name) != authz::Action::kGetBucketConfiguration) {
      action = authz::BucketSubresourceAction(p.name);
      break;
    }
  }
  WithAuthorizedBucket(call, action, [call] {
    if (call->HasParam("location")) {
      const std::string& region = call->bucket_info.region();
      return call->RespondXml(200, LocationConstraintXml(region == "us-east-1" ? "" : region));
    }
    if (call->HasParam("acl")) {
      const Owner owner = OwnerOfUser(*call, call->bucket_info.owner());
      if (call->bucket_config && call->bucket_config->has_acl() &&
          !AclsDisabled(call->bucket_config.get())) {
        return call->RespondXml(200, StoredAclXml(owner, call->bucket_config->acl()));
      }
      return call->RespondXml(200, AccessControlPolicyXml(owner));
    }
    if (call->HasParam("versioning")) {
      return call->RespondXml(200, VersioningConfigurationXml(VersioningOf(call->bucket_info)));
    }
    if (call->HasParam("cors")) return call->Fail(S3Error(S3ErrorCode::kNoSuchCORSConfiguration));
    if (call->HasParam("tagging")) return call->Fail(S3Error(S3ErrorCode::kNoSuchTagSet));
    if (call->HasParam("lifecycle")) {
      return call->Fail(S3Error(S3ErrorCode::kNoSuchLifecycleConfiguration));
    }
    if (call->HasParam("logging")) {
      return call->RespondXml(200,
                              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<BucketLoggingStatus "
                              "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"/>");
    }
    if (call->HasParam("requestPayment")) {
      return call->RespondXml(200,
                              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<RequestPaymentConfiguration "
                              "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Payer>BucketOwner"
                              "</Payer></RequestPaymentConfiguration>");
    }
    call->Fail(S3Error(S3ErrorCode::kNotImplemented));
  });
}

}  // namespace tessera::s3::front
