// SigV4 presigned (query-string) authentication.
#include <optional>

#include "common/limits.h"
#include "s3/auth/amz_time.h"
#include "s3/auth/request_parts.h"
#include "s3/auth/sigv4.h"
#include "s3/auth/sigv4_internal.h"

namespace tessera::s3::auth {
namespace {

using namespace sigv4_internal;  // NOLINT: this file implements them

S3Error QueryError(std::string message) {
  return S3Error(S3ErrorCode::kAuthorizationQueryParametersError, std::move(message));
}

struct QueryAuth {
  std::string credential, amz_date, signed_headers, signature;
  int64_t date_s = 0;
  int64_t expires_s = 0;
};

S3Result<QueryAuth> ParseQueryAuth(std::string_view query) {
  auto algorithm = FindQueryParam(query, "X-Amz-Algorithm");
  auto credential = FindQueryParam(query, "X-Amz-Credential");
  auto date = FindQueryParam(query, "X-Amz-Date");
  auto expires = FindQueryParam(query, "X-Amz-Expires");
  auto signed_headers = FindQueryParam(query, "X-Amz-SignedHeaders");
  auto signature = FindQueryParam(query, "X-Amz-Signature");
  if (algorithm && *algorithm != kAlgorithm) {
    if (algorithm->substr(0, 11) == "AWS4-ECDSA-") {
      return S3Error(S3ErrorCode::kNotImplemented, "SigV4a (ECDSA) is not implemented.");
    }
    return QueryError("X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"");
  }
  if (!algorithm || !credential || !date || !expires || !signed_headers || !signature) {
    return QueryError(
        "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, "
        "X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.");
  }
  auto date_s = ParseAmzDate(*date);
  if (!date_s) {
    return QueryError("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"");
  }
  auto expires_s = ParseDecimal(*expires);
  if (!expires_s) {
    if (!expires->empty() && (*expires)[0] == '-') {
      return QueryError("X-Amz-Expires must be non-negative");
    }
    return QueryError("X-Amz-Expires should be a number");
  }
  if (*expires_s < 1) return QueryError("X-Amz-Expires must be at least 1");
  if (*expires_s > limits::kPresignExpiresSecondsMax) {
    return QueryError("X-Amz-Expires must be less than a week (in seconds) that is 604800");
  }
  return QueryAuth{*credential, *date, *signed_headers, *signature, *date_s, *expires_s};
}

S3Status CheckValidity(const QueryAuth& auth, const AuthConfig& config) {
  if (auth.date_s - config.now_unix_s > config.skew_max_s) {
    return S3Status(S3ErrorCode::kAccessDenied, "Request is not valid yet");
  }
  if (config.now_unix_s > auth.date_s + auth.expires_s) {
    return S3Error(S3ErrorCode::kAccessDenied, "Request has expired")
        .With("X-Amz-Expires", std::to_string(auth.expires_s))
        .With("Expires", FormatIsoSeconds(auth.date_s + auth.expires_s))
        .With("ServerTime", FormatIsoSeconds(config.now_unix_s));
  }
  return S3Status::Ok();
}

// x-amz-content-sha256 header, else an X-Amz-Content-Sha256 parameter (any
// case), else UNSIGNED-PAYLOAD.
std::string QueryPayloadHash(const RequestHead& request) {
  if (auto header = FindHeader(request.headers, "x-amz-content-sha256")) {
    return std::string(Trim(*header));
  }
  for (const RawParam& p : SplitQuery(QueryOf(request.target))) {
    if (EqualsIgnoreCase(PercentDecode(p.name), "x-amz-content-sha256")) {
      return PercentDecode(p.value);
    }
  }
  return std::string(kUnsignedPayload);
}

}  // namespace

S3Result<AuthContext> VerifySigV4Query(const RequestHead& request, const AuthConfig& config,
                                       const CredentialLookup& lookup) {
  const std::string_view query = QueryOf(request.target);
  S3Result<QueryAuth> auth = ParseQueryAuth(query);
  if (!auth.ok()) return auth.error();
  TESSERA_S3_RETURN_IF_ERROR(RejectSecurityToken(request));
  S3Result<Credential> credential = ParseCredential(auth->credential, Form::kQuery);
  if (!credential.ok()) return credential.error();
  TESSERA_S3_RETURN_IF_ERROR(CheckScope(*credential, auth->amz_date, config, Form::kQuery));
  TESSERA_S3_RETURN_IF_ERROR(CheckValidity(*auth, config));
  auto signed_headers = ParseSignedHeaders(auth->signed_headers, Form::kQuery);
  if (!signed_headers.ok()) return signed_headers.error();
  TESSERA_S3_RETURN_IF_ERROR(CheckSignedHeaders(*signed_headers, request.headers, Form::kQuery));
  const std::string payload_hash = QueryPayloadHash(request);
  S3Result<PayloadMode> mode = PayloadModeOf(payload_hash);
  if (!mode.ok()) return mode.error();

  std::optional<std::string> secret = lookup(credential->access_key);
  if (!secret) return InvalidAccessKeyIdError(credential->access_key);
  const std::string canonical = CanonicalRequest(request, CanonicalQueryString(query, true),
                                                 *signed_headers, payload_hash);
  const std::string scope = ScopeOf(*credential);
  const std::string key =
      DeriveSigningKey(*secret, credential->date8, credential->region, credential->service);
  const std::string string_to_sign = StringToSign(auth->amz_date, scope, canonical);
  const std::string expected = HmacSha256Hex(key, string_to_sign);
  TESSERA_S3_RETURN_IF_ERROR(CheckSignature(expected, auth->signature, credential->access_key,
                                            string_to_sign, canonical));

  AuthContext context;
  context.access_key = credential->access_key;
  context.mode = *mode;
  if (*mode == PayloadMode::kSignedHex) context.payload_sha256_hex = payload_hash;
  context.presigned = true;
  context.signing = SigningState{key, auth->amz_date, scope, expected};
  return context;
}

}  // namespace tessera::s3::auth
