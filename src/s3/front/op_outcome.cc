// The one mapping from a partition's refusal of an S3 op (pb::S3Outcome) to
// the S3 error document, with the elements S3 names in it.
#include "s3/front/s3_call.h"

namespace tessera::s3::front {

std::string ConditionHeaderOf(const S3Call& call) {
  if (call.Header("if-none-match")) return "If-None-Match";
  if (call.Header("if-match")) return "If-Match";
  if (call.Header("x-amz-if-match-last-modified-time")) return "x-amz-if-match-last-modified-time";
  if (call.Header("x-amz-if-match-size")) return "x-amz-if-match-size";
  return {};
}

S3Error OpOutcomeError(const S3Call& call, const pb::S3OpResult& r, const OutcomeContext& ctx) {
  switch (r.outcome()) {
    case pb::S3_PRECONDITION_FAILED: {
      const std::string condition = ConditionHeaderOf(call);
      if (condition.empty()) return S3Error(S3ErrorCode::kPreconditionFailed);
      return PreconditionFailedError(condition);
    }
    case pb::S3_NO_SUCH_KEY: return S3Error(S3ErrorCode::kNoSuchKey);
    case pb::S3_NO_SUCH_VERSION: {
      const QueryParam* version = call.Param("versionId");
      return S3Error(S3ErrorCode::kNoSuchVersion)
          .With("Key", call.key)
          .With("VersionId", version ? version->value : std::string());
    }
    case pb::S3_DELETE_MARKER: return DeleteMarkerMethodError(call.head().method);
    case pb::S3_NO_SUCH_UPLOAD:
      return NoSuchUploadError(ctx.upload_id);
    case pb::S3_INVALID_PART_ORDER:
      return S3Error(S3ErrorCode::kInvalidPartOrder).With("UploadId", ctx.upload_id);
    case pb::S3_INVALID_PART:
      return InvalidPartError(ctx.upload_id, r.part_number(), r.part_etag());
    case pb::S3_ENTITY_TOO_SMALL:
      return S3Error(S3ErrorCode::kEntityTooSmall)
          .With("ProposedSize", std::to_string(r.part_size()))
          .With("MinSizeAllowed", std::to_string(ctx.min_part_bytes))
          .With("PartNumber", std::to_string(r.part_number()))
          .With("ETag", r.part_etag());
    case pb::S3_CONDITIONAL_CONFLICT:
      return S3Error(S3ErrorCode::kConditionalRequestConflict)
          .With("Condition", ConditionHeaderOf(call))
          .With("Key", call.key);
    case pb::S3_BAD_DIGEST: return S3Error(S3ErrorCode::kBadDigest, r.message());
    default: return S3Error(S3ErrorCode::kInvalidRequest, r.message());
  }
}

}  // namespace tessera::s3::front
