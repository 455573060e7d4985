// AWS Signature Version 4 for S3: verification of Authorization-header and
// presigned (query) requests, and a signer (used by tests and by anything
// that must produce presigned URLs).
//
// Canonicalisation (docs/formats/s3-auth.md has the full rules):
//  - canonical URI: the path exactly as sent (S3 signs it without
//    normalisation or re-encoding); an empty path is "/".
//  - canonical query: every parameter percent-decoded (%XX only; '+' stays a
//    literal '+'), re-encoded with AWS UriEncode (A-Za-z0-9-._~ kept,
//    everything else %XX uppercase), sorted by encoded name then value,
//    "name=value" joined by '&'. Presigned: X-Amz-Signature is left out.
//  - canonical headers: the signed headers in SignedHeaders order, name
//    lowercased, value trimmed with inner runs of spaces collapsed to one,
//    repeated headers joined with ','.
//  - payload hash: x-amz-content-sha256 as sent (presigned: UNSIGNED-PAYLOAD
//    unless the header or an X-Amz-Content-Sha256 parameter says otherwise).
//
// Errors (S3's codes and, where clients rely on them, S3's messages):
// malformed header -> AuthorizationHeaderMalformed; missing/invalid query
// parameters -> AuthorizationQueryParametersError; wrong region ->
// AuthorizationHeaderMalformed "The authorization header is malformed; the
// region 'X' is wrong; expecting 'Y'"; unknown key -> InvalidAccessKeyId;
// bad signature -> SignatureDoesNotMatch; clock skew -> RequestTimeTooSkewed;
// expired presigned URL -> AccessDenied "Request has expired"; missing
// x-amz-content-sha256 -> InvalidRequest; bad x-amz-content-sha256 ->
// InvalidArgument (STREAMING-AWS4-ECDSA-* -> NotImplemented); x-amz-* headers
// present but not signed -> AccessDenied "There were headers present in the
// request which were not signed"; a security token (STS) -> InvalidArgument.
//
// Thread safety: pure functions; the lookup is called on the calling thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "s3/auth/auth_context.h"
#include "s3/auth/s3_result.h"

namespace tessera::s3::auth {

// Precondition: the request has an Authorization header starting with
// "AWS4-HMAC-SHA256". On success the context has mode, payload hash and the
// SigningState for aws-chunked bodies.
S3Result<AuthContext> VerifySigV4Header(const RequestHead& request, const AuthConfig& config,
                                        const CredentialLookup& lookup);

// Precondition: the query has X-Amz-Algorithm (or other X-Amz-* auth
// parameters). Checks X-Amz-Expires (1..604800) and expiry at
// config.now_unix_s.
S3Result<AuthContext> VerifySigV4Query(const RequestHead& request, const AuthConfig& config,
                                       const CredentialLookup& lookup);

// For mode kSignedHex: the body's SHA-256 (lowercase hex) must equal the
// declared one, else XAmzContentSHA256Mismatch. OK for every other mode.
S3Status VerifyPayloadSha256(const AuthContext& context, std::string_view body_sha256_hex);

// ---- building blocks, exposed for the chunk verifier and for tests ----

// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date8), region), service),
// "aws4_request"); 32 raw bytes.
std::string DeriveSigningKey(std::string_view secret_key, std::string_view date8,
                             std::string_view region, std::string_view service = "s3");
// Lowercase hex of HMAC-SHA256(key, data).
std::string HmacSha256Hex(std::string_view key, std::string_view data);
// AWS UriEncode of one query name or value (also encodes '/').
std::string UriEncode(std::string_view raw);
// The canonical query string of a raw query (the part after '?'), dropping
// X-Amz-Signature when `presigned`. Names and values are decoded as the
// router decodes them (DecodeQueryComponent: a raw '+' is a space, as AWS
// and RGW read it), then UriEncoded.
std::string CanonicalQueryString(std::string_view raw_query, bool presigned);

// ---- signer ----

struct SigV4Credentials {
  std::string access_key;
  std::string secret_key;
  std::string region = "us-east-1";
};

// Signs `request` in place the way the AWS SDKs do: sets x-amz-date (from
// now_unix_s) and x-amz-content-sha256 = payload_sha256 (replacing any
// already present), then adds an Authorization header signing every header
// present (names lowercased, sorted). Precondition: a Host header is present.
// Returns the SigningState whose seed signature starts an aws-chunked body.
SigningState SignV4(RequestHead* request, const SigV4Credentials& credentials,
                    int64_t now_unix_s, std::string_view payload_sha256 = "UNSIGNED-PAYLOAD");

// A presigned request target: request.target with X-Amz-Algorithm,
// X-Amz-Credential, X-Amz-Date, X-Amz-Expires, X-Amz-SignedHeaders and
// X-Amz-Signature appended, signing every header of `request` (at least
// Host, a precondition). Payload: UNSIGNED-PAYLOAD.
std::string PresignV4(const RequestHead& request, const SigV4Credentials& credentials,
                      int64_t now_unix_s, int64_t expires_s);

}  // namespace tessera::s3::auth
