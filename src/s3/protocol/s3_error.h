// S3 errors as S3 shapes them: a code (the <Code> element), the HTTP status
// it travels with, and a message for people. Every failure the S3 front
// answers is an S3Error; Status values from lower layers are mapped here in
// one table (FromStatus), never ad hoc at call sites.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tessera::s3 {

enum class S3ErrorCode {
  kAccessControlListNotSupported,  // an ACL where ownership controls disable ACLs
  kAccessDenied,
  kAccessForbidden,  // a CORS preflight no rule admits
  kAuthorizationHeaderMalformed,
  kAuthorizationQueryParametersError,
  kBadDigest,
  kBadRequest,  // a CORS preflight without Origin or Access-Control-Request-Method
  kBucketAlreadyExists,
  kBucketAlreadyOwnedByYou,
  kBucketNotEmpty,
  kConditionalRequestConflict,
  kEntityTooLarge,
  kEntityTooSmall,
  kExpiredToken,
  kIllegalLocationConstraintException,
  kIllegalVersioningConfigurationException,
  kIncompleteBody,
  kInternalError,
  kInvalidAccessKeyId,
  kInvalidArgument,
  kInvalidBucketAclWithObjectOwnership,
  kInvalidBucketName,
  kInvalidDigest,
  kInvalidLocationConstraint,
  kIncorrectNumberOfFilesInPostRequest,
  kInvalidPart,
  kInvalidPartNumber,
  kInvalidPartOrder,
  kInvalidPolicyDocument,
  kInvalidRange,
  kInvalidRequest,
  kInvalidTag,
  kInvalidURI,
  kKeyTooLongError,
  kMalformedACLError,
  kMalformedPOSTRequest,
  kMalformedPolicy,
  kMalformedXML,
  kMaxPostPreDataLengthExceededError,
  kMetadataTooLarge,
  kMethodNotAllowed,
  kMissingContentLength,
  kMissingSecurityHeader,
  kNoSuchBucket,
  kNoSuchBucketPolicy,
  kNoSuchCORSConfiguration,
  kNoSuchKey,
  kNoSuchLifecycleConfiguration,
  kNoSuchPublicAccessBlockConfiguration,
  kNoSuchTagSet,
  kNoSuchUpload,
  kNoSuchVersion,
  kNotImplemented,
  kNotModified,
  kOwnershipControlsNotFoundError,
  kPreconditionFailed,
  kRequestHeaderSectionTooLarge,
  kRequestTimeTooSkewed,
  kRequestTimeout,
  kServiceUnavailable,
  kSignatureDoesNotMatch,
  kSlowDown,
  kTooManyBuckets,
  kUnresolvableGrantByEmailAddress,
  kXAmzContentSHA256Mismatch,
};

// The <Code> string, e.g. "NoSuchKey".
std::string_view CodeName(S3ErrorCode code);
// The HTTP status S3 answers with, e.g. 404 for NoSuchKey.
unsigned HttpStatus(S3ErrorCode code);
// S3's usual message for the code.
std::string_view DefaultMessage(S3ErrorCode code);

// An element S3 adds to an error document after <Message> to say what
// failed: {"ArgumentName", "max-keys"}, {"Condition", "If-Match"},
// {"ProposedSize", "6"}, ... (per code in the S3 API reference's "Error
// responses"; the values as AWS records them).
using S3ErrorDetail = std::pair<std::string, std::string>;

struct S3Error {
  S3ErrorCode code = S3ErrorCode::kInternalError;
  std::string message;  // empty: DefaultMessage(code)
  std::vector<S3ErrorDetail> details;  // in document order

  S3Error() = default;
  S3Error(S3ErrorCode c, std::string m = {}) : code(c), message(std::move(m)) {}  // NOLINT
  std::string_view Message() const { return message.empty() ? DefaultMessage(code) : message; }

  // Adds a detail element: S3Error(kInvalidArgument, "...").With("ArgumentName", "x").
  S3Error&& With(std::string name, std::string value) && {
    details.emplace_back(std::move(name), std::move(value));
    return std::move(*this);
  }
  bool HasDetail(std::string_view name) const;
};

// InvalidArgument naming the argument (a header or query parameter) and, when
// S3 echoes it, its value: the shape of every InvalidArgument S3 answers.
S3Error InvalidArgumentError(std::string message, std::string argument_name,
                             std::optional<std::string> argument_value = std::nullopt);
// MethodNotAllowed naming the method and what it was sent to: "SERVICE",
// "BUCKET", "OBJECT", or "DeleteMarker" (a delete marker read or changed by
// id, which S3 answers with this error).
S3Error MethodNotAllowedError(std::string method, std::string resource_type);
inline S3Error DeleteMarkerMethodError(std::string method) {
  return MethodNotAllowedError(std::move(method), "DeleteMarker");
}
// InvalidArgument for a partNumber outside 1..10000 or not a number.
S3Error PartNumberArgumentError(std::string value);
// InvalidArgument for a versionId that is empty or not one this store
// hands out (the two messages S3 answers).
S3Error VersionIdArgumentError(std::string value);
// InvalidAccessKeyId naming the key the request was signed with.
inline S3Error InvalidAccessKeyIdError(std::string access_key) {
  return S3Error(S3ErrorCode::kInvalidAccessKeyId).With("AWSAccessKeyId", std::move(access_key));
}
// NoSuchUpload naming the upload id asked for.
inline S3Error NoSuchUploadError(std::string upload_id) {
  return S3Error(S3ErrorCode::kNoSuchUpload).With("UploadId", std::move(upload_id));
}
// InvalidPart naming the upload and the listed part (its ETag unquoted).
inline S3Error InvalidPartError(std::string upload_id, uint32_t part_number, std::string etag) {
  return S3Error(S3ErrorCode::kInvalidPart)
      .With("UploadId", std::move(upload_id))
      .With("PartNumber", std::to_string(part_number))
      .With("ETag", std::move(etag));
}
// SignatureDoesNotMatch with what S3 shows a client to debug its signer:
// AWSAccessKeyId, StringToSign, SignatureProvided, StringToSignBytes and,
// for SigV4 (non-empty `canonical_request`), CanonicalRequest and
// CanonicalRequestBytes (bytes as space-separated lowercase hex pairs).
// None of it is secret: the client sent or can compute all of it.
S3Error SignatureMismatchError(std::string access_key, std::string string_to_sign,
                               std::string signature_provided,
                               std::string canonical_request = {});
// PreconditionFailed naming the condition that failed ("If-Match",
// "If-None-Match", "x-amz-copy-source-If-Match", ...).
S3Error PreconditionFailedError(std::string condition);

// The one mapping from lower layers' Status to S3 errors: Throttled ->
// SlowDown, Unavailable/Timeout -> ServiceUnavailable (503, clients retry),
// InvalidArgument -> InvalidArgument, anything else -> InternalError. The
// status's message is kept for logs, not shown to clients for InternalError.
S3Error FromStatus(const Status& status);

// A failed blob read or write: SlowDown when a node refused it for load,
// otherwise ServiceUnavailable (retryable: a retry may find the nodes back or
// with room), whose message names the cause (a full disk, a node down) so an
// operator reading the client's error knows what to fix.
S3Error FromBlobStatus(const Status& status);

}  // namespace tessera::s3
