// S3 errors as S3 shapes them: a code (the <Code> element), the HTTP status
// it travels with, and a message for people. Every failure the S3 front
// answers is an S3Error; Status values from lower layers are mapped here in
// one table (FromStatus), never ad hoc at call sites.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera::s3 {

enum class S3ErrorCode {
  kAccessDenied,
  kAuthorizationHeaderMalformed,
  kAuthorizationQueryParametersError,
  kBadDigest,
  kBucketAlreadyExists,
  kBucketAlreadyOwnedByYou,
  kBucketNotEmpty,
  kEntityTooLarge,
  kEntityTooSmall,
  kExpiredToken,
  kIllegalLocationConstraintException,
  kIncompleteBody,
  kInternalError,
  kInvalidAccessKeyId,
  kInvalidArgument,
  kInvalidBucketName,
  kInvalidDigest,
  kInvalidLocationConstraint,
  kInvalidPart,
  kInvalidPartNumber,
  kInvalidPartOrder,
  kInvalidRange,
  kInvalidRequest,
  kInvalidURI,
  kKeyTooLongError,
  kMalformedACLError,
  kMalformedXML,
  kMetadataTooLarge,
  kMethodNotAllowed,
  kMissingContentLength,
  kMissingSecurityHeader,
  kNoSuchBucket,
  kNoSuchBucketPolicy,
  kNoSuchCORSConfiguration,
  kNoSuchKey,
  kNoSuchLifecycleConfiguration,
  kNoSuchTagSet,
  kNoSuchUpload,
  kNoSuchVersion,
  kNotImplemented,
  kNotModified,
  kPreconditionFailed,
  kRequestHeaderSectionTooLarge,
  kRequestTimeTooSkewed,
  kRequestTimeout,
  kServiceUnavailable,
  kSignatureDoesNotMatch,
  kSlowDown,
  kXAmzContentSHA256Mismatch,
};

// The <Code> string, e.g. "NoSuchKey".
std::string_view CodeName(S3ErrorCode code);
// The HTTP status S3 answers with, e.g. 404 for NoSuchKey.
unsigned HttpStatus(S3ErrorCode code);
// S3's usual message for the code.
std::string_view DefaultMessage(S3ErrorCode code);

struct S3Error {
  S3ErrorCode code = S3ErrorCode::kInternalError;
  std::string message;  // empty: DefaultMessage(code)

  S3Error() = default;
  S3Error(S3ErrorCode c, std::string m = {}) : code(c), message(std::move(m)) {}  // NOLINT
  std::string_view Message() const { return message.empty() ? DefaultMessage(code) : message; }
};

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
