// AWS Signature Version 2 for S3 (still used by s3cmd's defaults and by
// boto3's presigned URLs in us-east-1): Authorization "AWS AK:signature" and
// query auth (AWSAccessKeyId, Expires, Signature). The signature is
// base64(HMAC-SHA1(secret, StringToSign)) with
//
//   StringToSign = Method \n Content-MD5 \n Content-Type \n Date \n
//                  CanonicalizedAmzHeaders CanonicalizedResource
//
// Date: the Date header, or empty when x-amz-date is present (x-amz-date is
// then among the amz headers); for query auth the Expires value.
// CanonicalizedAmzHeaders: each x-amz-* header as "name:value\n", names
// lowercased and sorted, values trimmed, repeated headers joined by ','.
// CanonicalizedResource: "/" + virtual_host_bucket + path when the bucket
// came from the Host header, else the path as sent; then the sub-resources
// of the query (acl, cors, delete, lifecycle, location, logging,
// notification, partNumber, policy, requestPayment, restore, tagging,
// torrent, uploadId, uploads, versionId, versioning, versions, website, the
// response-* overrides, and botocore's later additions accelerate,
// analytics, inventory, metrics, object-lock, replication, select,
// select-type, defaultObjectAcl, storageClass), sorted by name, as "?name"
// or "?name=value" joined by '&'. Names and values are decoded as the
// router decodes them before routing ('+' a space, %XX its byte), so a
// sub-resource whose name is percent-encoded is signed under the name it
// is routed by; botocore's HmacV1 signs the same form (it never sends a
// raw '+' or an encoded sub-resource name).
//
// Errors: malformed Authorization -> InvalidArgument; missing query
// parameters -> AccessDenied "Query-string authentication requires the
// Signature, Expires and AWSAccessKeyId parameters"; no date ->
// AccessDenied; skew -> RequestTimeTooSkewed; expired -> AccessDenied
// "Request has expired"; Expires more than
// limits::kPresignExpiresSecondsMax (a week, SigV4's bound) after now ->
// AccessDenied; unknown key -> InvalidAccessKeyId; bad signature ->
// SignatureDoesNotMatch. The payload is never signed (mode kUnsigned).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "s3/auth/auth_context.h"
#include "s3/auth/s3_result.h"

namespace tessera::s3::auth {

// Precondition: the Authorization header starts with "AWS ".
// `virtual_host_bucket`: the bucket named by the Host header (virtual-hosted
// style), empty for path-style requests.
S3Result<AuthContext> VerifySigV2Header(const RequestHead& request,
                                        std::string_view virtual_host_bucket,
                                        const AuthConfig& config, const CredentialLookup& lookup);

// Precondition: the query has AWSAccessKeyId or Signature.
S3Result<AuthContext> VerifySigV2Query(const RequestHead& request,
                                       std::string_view virtual_host_bucket,
                                       const AuthConfig& config, const CredentialLookup& lookup);

// The StringToSign, with `date_line` as its Date line.
std::string SigV2StringToSign(const RequestHead& request, std::string_view virtual_host_bucket,
                              std::string_view date_line);

// ---- signer ----

// Adds "Authorization: AWS access_key:signature". The request must already
// carry a Date or x-amz-date header.
void SignV2(RequestHead* request, std::string_view virtual_host_bucket,
            std::string_view access_key, std::string_view secret_key);

// request.target with AWSAccessKeyId, Expires (absolute unix seconds) and
// Signature appended.
std::string PresignV2(const RequestHead& request, std::string_view virtual_host_bucket,
                      std::string_view access_key, std::string_view secret_key,
                      int64_t expires_unix_s);

}  // namespace tessera::s3::auth
