#include "s3/protocol/s3_error.h"

#include <array>

namespace tessera::s3 {
namespace {

struct ErrorInfo {
  S3ErrorCode code;
  std::string_view name;
  unsigned status;
  std::string_view message;
};

// One row per S3ErrorCode, in enum order (checked below).
constexpr std::array kErrors = {
    ErrorInfo{S3ErrorCode::kAccessControlListNotSupported, "AccessControlListNotSupported", 400,
              "The bucket does not allow ACLs"},
    ErrorInfo{S3ErrorCode::kAccessDenied, "AccessDenied", 403, "Access Denied"},
    ErrorInfo{S3ErrorCode::kAccessForbidden, "AccessForbidden", 403,
              "CORSResponse: This CORS request is not allowed. This is usually because the "
              "evalution of Origin, request method / Access-Control-Request-Method or "
              "Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."},
    ErrorInfo{S3ErrorCode::kAuthorizationHeaderMalformed, "AuthorizationHeaderMalformed", 400,
              "The authorization header is malformed."},
    ErrorInfo{S3ErrorCode::kAuthorizationQueryParametersError, "AuthorizationQueryParametersError",
              400, "Error parsing the X-Amz-Credential parameter."},
    ErrorInfo{S3ErrorCode::kBadDigest, "BadDigest", 400,
              "The Content-MD5 or checksum value that you specified did not match what the "
              "server received."},
    ErrorInfo{S3ErrorCode::kBadRequest, "BadRequest", 400,
              "Insufficient information. Origin request header needed."},
    ErrorInfo{S3ErrorCode::kBucketAlreadyExists, "BucketAlreadyExists", 409,
              "The requested bucket name is not available. The bucket namespace is shared by all "
              "users of the system. Please select a different name and try again."},
    ErrorInfo{S3ErrorCode::kBucketAlreadyOwnedByYou, "BucketAlreadyOwnedByYou", 409,
              "Your previous request to create the named bucket succeeded and you already own "
              "it."},
    ErrorInfo{S3ErrorCode::kBucketNotEmpty, "BucketNotEmpty", 409,
              "The bucket you tried to delete is not empty"},
    ErrorInfo{S3ErrorCode::kConditionalRequestConflict, "ConditionalRequestConflict", 409,
              "The conditional request cannot succeed due to a conflicting operation against "
              "this resource."},
    ErrorInfo{S3ErrorCode::kEntityTooLarge, "EntityTooLarge", 400,
              "Your proposed upload exceeds the maximum allowed size"},
    ErrorInfo{S3ErrorCode::kEntityTooSmall, "EntityTooSmall", 400,
              "Your proposed upload is smaller than the minimum allowed size"},
    ErrorInfo{S3ErrorCode::kExpiredToken, "ExpiredToken", 400,
              "The provided token has expired."},
    ErrorInfo{S3ErrorCode::kIllegalLocationConstraintException,
              "IllegalLocationConstraintException", 400,
              "The unspecified location constraint is incompatible for the region specific "
              "endpoint this request was sent to."},
    ErrorInfo{S3ErrorCode::kIllegalVersioningConfigurationException,
              "IllegalVersioningConfigurationException", 400,
              "The Versioning element must be specified"},
    ErrorInfo{S3ErrorCode::kIncompleteBody, "IncompleteBody", 400,
              "You did not provide the number of bytes specified by the Content-Length HTTP "
              "header."},
    ErrorInfo{S3ErrorCode::kInternalError, "InternalError", 500,
              "We encountered an internal error. Please try again."},
    ErrorInfo{S3ErrorCode::kInvalidAccessKeyId, "InvalidAccessKeyId", 403,
              "The AWS Access Key Id you provided does not exist in our records."},
    ErrorInfo{S3ErrorCode::kInvalidArgument, "InvalidArgument", 400, "Invalid Argument"},
    ErrorInfo{S3ErrorCode::kInvalidBucketAclWithObjectOwnership,
              "InvalidBucketAclWithObjectOwnership", 400,
              "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting"},
    ErrorInfo{S3ErrorCode::kInvalidBucketName, "InvalidBucketName", 400,
              "The specified bucket is not valid."},
    ErrorInfo{S3ErrorCode::kInvalidDigest, "InvalidDigest", 400,
              "The Content-MD5 you specified is not valid."},
    ErrorInfo{S3ErrorCode::kInvalidLocationConstraint, "InvalidLocationConstraint", 400,
              "The specified location-constraint is not valid"},
    ErrorInfo{S3ErrorCode::kIncorrectNumberOfFilesInPostRequest,
              "IncorrectNumberOfFilesInPostRequest", 400,
              "POST requires exactly one file upload per request."},
    ErrorInfo{S3ErrorCode::kInvalidPart, "InvalidPart", 400,
              "One or more of the specified parts could not be found.  The part may not have "
              "been uploaded, or the specified entity tag may not match the part's entity tag."},
    ErrorInfo{S3ErrorCode::kInvalidPartNumber, "InvalidPartNumber", 416,
              "The requested partnumber is not satisfiable"},
    ErrorInfo{S3ErrorCode::kInvalidPartOrder, "InvalidPartOrder", 400,
              "The list of parts was not in ascending order. Parts must be ordered by part "
              "number."},
    ErrorInfo{S3ErrorCode::kInvalidPolicyDocument, "InvalidPolicyDocument", 400,
              "The content of the form does not meet the conditions specified in the policy "
              "document."},
    ErrorInfo{S3ErrorCode::kInvalidRange, "InvalidRange", 416,
              "The requested range is not satisfiable"},
    ErrorInfo{S3ErrorCode::kInvalidRequest, "InvalidRequest", 400, "Invalid Request"},
    ErrorInfo{S3ErrorCode::kInvalidTag, "InvalidTag", 400,
              "The TagKey you have provided is invalid"},
    ErrorInfo{S3ErrorCode::kInvalidURI, "InvalidURI", 400, "Couldn't parse the specified URI."},
    ErrorInfo{S3ErrorCode::kKeyTooLongError, "KeyTooLongError", 400, "Your key is too long"},
    ErrorInfo{S3ErrorCode::kMalformedACLError, "MalformedACLError", 400,
              "The XML you provided was not well-formed or did not validate against our "
              "published schema"},
    ErrorInfo{S3ErrorCode::kMalformedPOSTRequest, "MalformedPOSTRequest", 400,
              "The body of your POST request is not well-formed multipart/form-data."},
    ErrorInfo{S3ErrorCode::kMalformedPolicy, "MalformedPolicy", 400, "Policies must be valid JSON"},
    ErrorInfo{S3ErrorCode::kMalformedXML, "MalformedXML", 400,
              "The XML you provided was not well-formed or did not validate against our "
              "published schema"},
    ErrorInfo{S3ErrorCode::kMaxPostPreDataLengthExceededError,
              "MaxPostPreDataLengthExceededError", 400,
              "Your POST request fields preceding the upload file were too large."},
    ErrorInfo{S3ErrorCode::kMetadataTooLarge, "MetadataTooLarge", 400,
              "Your metadata headers exceed the maximum allowed metadata size"},
    ErrorInfo{S3ErrorCode::kMethodNotAllowed, "MethodNotAllowed", 405,
              "The specified method is not allowed against this resource."},
    ErrorInfo{S3ErrorCode::kMissingContentLength, "MissingContentLength", 411,
              "You must provide the Content-Length HTTP header."},
    ErrorInfo{S3ErrorCode::kMissingSecurityHeader, "MissingSecurityHeader", 400,
              "Your request was missing a required header"},
    ErrorInfo{S3ErrorCode::kNoSuchBucket, "NoSuchBucket", 404,
              "The specified bucket does not exist"},
    ErrorInfo{S3ErrorCode::kNoSuchBucketPolicy, "NoSuchBucketPolicy", 404,
              "The bucket policy does not exist"},
    ErrorInfo{S3ErrorCode::kNoSuchCORSConfiguration, "NoSuchCORSConfiguration", 404,
              "The CORS configuration does not exist"},
    ErrorInfo{S3ErrorCode::kNoSuchKey, "NoSuchKey", 404, "The specified key does not exist."},
    ErrorInfo{S3ErrorCode::kNoSuchLifecycleConfiguration, "NoSuchLifecycleConfiguration", 404,
              "The lifecycle configuration does not exist"},
    ErrorInfo{S3ErrorCode::kNoSuchPublicAccessBlockConfiguration,
              "NoSuchPublicAccessBlockConfiguration", 404,
              "The public access block configuration was not found"},
    ErrorInfo{S3ErrorCode::kNoSuchTagSet, "NoSuchTagSet", 404, "The TagSet does not exist"},
    ErrorInfo{S3ErrorCode::kNoSuchUpload, "NoSuchUpload", 404,
              "The specified upload does not exist. The upload ID may be invalid, or the upload "
              "may have been aborted or completed."},
    ErrorInfo{S3ErrorCode::kNoSuchVersion, "NoSuchVersion", 404,
              "The specified version does not exist."},
    ErrorInfo{S3ErrorCode::kNotImplemented, "NotImplemented", 501,
              "A header you provided implies functionality that is not implemented"},
    ErrorInfo{S3ErrorCode::kNotModified, "NotModified", 304, "Not Modified"},
    ErrorInfo{S3ErrorCode::kOwnershipControlsNotFoundError, "OwnershipControlsNotFoundError", 404,
              "The bucket ownership controls were not found"},
    ErrorInfo{S3ErrorCode::kPreconditionFailed, "PreconditionFailed", 412,
              "At least one of the pre-conditions you specified did not hold"},
    ErrorInfo{S3ErrorCode::kRequestHeaderSectionTooLarge, "RequestHeaderSectionTooLarge", 400,
              "Your request header section exceeds the maximum allowed size."},
    ErrorInfo{S3ErrorCode::kRequestTimeTooSkewed, "RequestTimeTooSkewed", 403,
              "The difference between the request time and the current time is too large."},
    ErrorInfo{S3ErrorCode::kRequestTimeout, "RequestTimeout", 400,
              "Your socket connection to the server was not read from or written to within the "
              "timeout period."},
    ErrorInfo{S3ErrorCode::kServiceUnavailable, "ServiceUnavailable", 503,
              "Service is unable to handle request."},
    ErrorInfo{S3ErrorCode::kSignatureDoesNotMatch, "SignatureDoesNotMatch", 403,
              "The request signature we calculated does not match the signature you provided. "
              "Check your key and signing method."},
    ErrorInfo{S3ErrorCode::kSlowDown, "SlowDown", 503, "Please reduce your request rate."},
    ErrorInfo{S3ErrorCode::kTooManyBuckets, "TooManyBuckets", 400,
              "You have attempted to create more buckets than allowed."},
    ErrorInfo{S3ErrorCode::kUnresolvableGrantByEmailAddress, "UnresolvableGrantByEmailAddress",
              400, "The email address you provided does not match any account on record."},
    ErrorInfo{S3ErrorCode::kXAmzContentSHA256Mismatch, "XAmzContentSHA256Mismatch", 400,
              "The provided 'x-amz-content-sha256' header does not match what was computed."},
};

constexpr bool TableInEnumOrder() {
  for (size_t i = 0; i < kErrors.size(); ++i) {
    if (static_cast<size_t>(kErrors[i].code) != i) return false;
  }
  return true;
}
static_assert(TableInEnumOrder(), "kErrors rows must follow S3ErrorCode order");
static_assert(kErrors.size() == static_cast<size_t>(S3ErrorCode::kXAmzContentSHA256Mismatch) + 1,
              "every S3ErrorCode needs a row");

const ErrorInfo& Info(S3ErrorCode code) { return kErrors[static_cast<size_t>(code)]; }

}  // namespace

std::string_view CodeName(S3ErrorCode code) { return Info(code).name; }
unsigned HttpStatus(S3ErrorCode code) { return Info(code).status; }
std::string_view DefaultMessage(S3ErrorCode code) { return Info(code).message; }

bool S3Error::HasDetail(std::string_view name) const {
  for (const auto& [n, v] : details) {
    if (n == name) return true;
  }
  return false;
}

S3Error InvalidArgumentError(std::string message, std::string argument_name,
                             std::optional<std::string> argument_value) {
  S3Error error(S3ErrorCode::kInvalidArgument, std::move(message));
  error.details.emplace_back("ArgumentName", std::move(argument_name));
  if (argument_value) error.details.emplace_back("ArgumentValue", std::move(*argument_value));
  return error;
}

S3Error MethodNotAllowedError(std::string method, std::string resource_type) {
  return S3Error(S3ErrorCode::kMethodNotAllowed)
      .With("Method", std::move(method))
      .With("ResourceType", std::move(resource_type));
}

S3Error PartNumberArgumentError(std::string value) {
  return InvalidArgumentError("Part number must be an integer between 1 and 10000, inclusive",
                              "partNumber", std::move(value));
}

S3Error VersionIdArgumentError(std::string value) {
  if (value.empty()) {
    return InvalidArgumentError("Version id cannot be the empty string", "versionId");
  }
  return InvalidArgumentError("Invalid version id specified", "versionId", std::move(value));
}

namespace {

std::string SpacedHex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 3);
  for (unsigned char c : bytes) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

}  // namespace

S3Error SignatureMismatchError(std::string access_key, std::string string_to_sign,
                               std::string signature_provided, std::string canonical_request) {
  S3Error error = S3Error(S3ErrorCode::kSignatureDoesNotMatch)
                      .With("AWSAccessKeyId", std::move(access_key))
                      .With("StringToSign", string_to_sign)
                      .With("SignatureProvided", std::move(signature_provided))
                      .With("StringToSignBytes", SpacedHex(string_to_sign));
  if (!canonical_request.empty()) {
    error.details.emplace_back("CanonicalRequest", canonical_request);
    error.details.emplace_back("CanonicalRequestBytes", SpacedHex(canonical_request));
  }
  return error;
}

S3Error PreconditionFailedError(std::string condition) {
  return S3Error(S3ErrorCode::kPreconditionFailed).With("Condition", std::move(condition));
}

S3Error FromStatus(const Status& status) {
  switch (status.code()) {
    case StatusCode::kThrottled:
    case StatusCode::kThroughputExceeded: return S3Error(S3ErrorCode::kSlowDown);
    case StatusCode::kUnavailable:
    case StatusCode::kTimeout:
    case StatusCode::kNotLeader:
    case StatusCode::kStaleEpoch:
    case StatusCode::kWrongPartition:
    case StatusCode::kAborted: return S3Error(S3ErrorCode::kServiceUnavailable);
    case StatusCode::kInvalidArgument: return S3Error(S3ErrorCode::kInvalidArgument, status.message());
    default: return S3Error(S3ErrorCode::kInternalError);
  }
}

S3Error FromBlobStatus(const Status& status) {
  if (status.code() == StatusCode::kThrottled) return S3Error(S3ErrorCode::kSlowDown);
  return S3Error(S3ErrorCode::kServiceUnavailable,
                 "Service is unable to handle request: the object's bytes could not be stored "
                 "or read (" + status.message() + ").");
}

}  // namespace tessera::s3
