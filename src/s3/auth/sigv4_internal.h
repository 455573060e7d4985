// Internal to s3/auth: the SigV4 pieces the header verifier, the query
// verifier and the signer share (sigv4.cc, sigv4_query.cc).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "s3/auth/auth_context.h"
#include "s3/auth/s3_result.h"

namespace tessera::s3::auth::sigv4_internal {

inline constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";
inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";

// Which form of SigV4 a check serves: errors differ (AuthorizationHeader-
// Malformed vs AuthorizationQueryParametersError).
enum class Form { kHeader, kQuery };

struct Credential {
  std::string access_key, date8, region, service, terminal;
};

// "AK/yyyymmdd/region/s3/aws4_request".
S3Result<Credential> ParseCredential(std::string_view text, Form form);
// Terminal, service, region (config.region or us-east-1) and date (the
// request day) of a credential scope.
S3Status CheckScope(const Credential& credential, std::string_view amz_date,
                    const AuthConfig& config, Form form);
std::string ScopeOf(const Credential& credential);

// The payload mode an x-amz-content-sha256 value names.
S3Result<PayloadMode> PayloadModeOf(std::string_view content_sha256);

// Lowercased names of a SignedHeaders value (';'-separated).
S3Result<std::vector<std::string>> ParseSignedHeaders(std::string_view text, Form form);
// host must be signed; every x-amz-* header present (but x-amz-date and
// x-amz-content-sha256, which the string to sign covers anyway) must be.
S3Status CheckSignedHeaders(const std::vector<std::string>& signed_headers,
                            const HeaderList& headers, Form form);

// The canonical request of `request` with the given canonical query, signed
// header names and payload hash.
std::string CanonicalRequest(const RequestHead& request, std::string_view canonical_query,
                             const std::vector<std::string>& signed_headers,
                             std::string_view payload_hash);
// "AWS4-HMAC-SHA256\n" amz_date "\n" scope "\n" hex(sha256(canonical_request)).
std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request);

// x-amz-security-token in a header or X-Amz-Security-Token in the query:
// Tessera has no temporary credentials.
S3Status RejectSecurityToken(const RequestHead& request);

// Compares signatures in constant time; a mismatch is SignatureDoesNotMatch
// naming the access key, string to sign and canonical request (as S3 does).
S3Status CheckSignature(std::string_view expected_hex, std::string_view provided_hex,
                        std::string_view access_key, std::string_view string_to_sign,
                        std::string_view canonical_request);

}  // namespace tessera::s3::auth::sigv4_internal
