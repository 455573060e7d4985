// SigV4 with the Authorization header, and the payload hash check.
#include "s3/auth/sigv4.h"

#include <algorithm>
#include <array>

#include "s3/auth/amz_time.h"
#include "s3/auth/request_parts.h"
#include "s3/auth/sigv4_internal.h"

namespace tessera::s3::auth {
namespace {

using namespace sigv4_internal;  // NOLINT: this file implements them

struct ParsedAuthorization {
  std::string credential;
  std::string signed_headers;
  std::string signature;
};

S3Error HeaderMalformed(std::string_view detail = {}) {
  if (detail.empty()) return S3Error(S3ErrorCode::kAuthorizationHeaderMalformed);
  return S3Error(S3ErrorCode::kAuthorizationHeaderMalformed,
                 "The authorization header is malformed; " + std::string(detail));
}

// "AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...": the
// three components in any order, separated by commas and/or spaces (none of
// the values can hold either).
S3Result<ParsedAuthorization> ParseAuthorization(std::string_view value) {
  value = Trim(value);
  if (value.substr(0, kAlgorithm.size()) != kAlgorithm) return HeaderMalformed();
  value.remove_prefix(kAlgorithm.size());
  if (value.empty() || (value.front() != ' ' && value.front() != '\t')) return HeaderMalformed();
  ParsedAuthorization parsed;
  std::array<bool, 3> seen = {false, false, false};
  while (!value.empty()) {
    const size_t end = value.find_first_of(", \t");
    const std::string_view token = value.substr(0, end);
    value.remove_prefix(end == std::string_view::npos ? value.size() : end + 1);
    if (token.empty()) continue;
    const size_t eq = token.find('=');
    if (eq == std::string_view::npos) return HeaderMalformed();
    const std::string_view key = token.substr(0, eq), v = token.substr(eq + 1);
    static constexpr std::array<std::string_view, 3> kKeys = {"Credential", "SignedHeaders",
                                                              "Signature"};
    const auto it = std::find(kKeys.begin(), kKeys.end(), key);
    if (it == kKeys.end()) return HeaderMalformed();
    const size_t index = static_cast<size_t>(it - kKeys.begin());
    if (seen[index]) return HeaderMalformed();
    seen[index] = true;
    std::string* slots[] = {&parsed.credential, &parsed.signed_headers, &parsed.signature};
    *slots[index] = std::string(v);
  }
  if (!seen[0] || !seen[1] || !seen[2]) {
    return HeaderMalformed(
        "the authorization header requires three components: Credential, SignedHeaders, and "
        "Signature.");
  }
  return parsed;
}

struct RequestTime {
  int64_t unix_s;
  std::string amz_date;  // as the string to sign carries it
  std::string sent;      // the header's value, as sent
};

// x-amz-date (ISO 8601 basic) or else Date (RFC 1123).
S3Result<RequestTime> RequestTimeOf(const HeaderList& headers) {
  const S3Error invalid(S3ErrorCode::kAccessDenied,
                        "AWS authentication requires a valid Date or x-amz-date header");
  if (auto amz = FindHeader(headers, "x-amz-date")) {
    auto t = ParseAmzDate(Trim(*amz));
    if (!t) return invalid;
    return RequestTime{*t, std::string(Trim(*amz)), std::string(Trim(*amz))};
  }
  if (auto date = FindHeader(headers, "date")) {
    auto t = ParseAnyDate(Trim(*date));
    if (!t) return invalid;
    return RequestTime{*t, FormatAmzDate(*t), std::string(Trim(*date))};
  }
  return invalid;
}

S3Result<PayloadMode> HeaderPayloadMode(const HeaderList& headers) {
  auto sha = FindHeader(headers, "x-amz-content-sha256");
  if (!sha) {
    return S3Error(S3ErrorCode::kInvalidRequest,
                   "Missing required header for this request: x-amz-content-sha256");
  }
  return PayloadModeOf(Trim(*sha));
}

}  // namespace

S3Result<AuthContext> VerifySigV4Header(const RequestHead& request, const AuthConfig& config,
                                        const CredentialLookup& lookup) {
  auto header = FindHeader(request.headers, "authorization");
  if (!header) return HeaderMalformed();
  S3Result<ParsedAuthorization> parsed = ParseAuthorization(*header);
  if (!parsed.ok()) return parsed.error();
  TESSERA_S3_RETURN_IF_ERROR(RejectSecurityToken(request));
  S3Result<PayloadMode> mode = HeaderPayloadMode(request.headers);
  if (!mode.ok()) return mode.error();
  S3Result<RequestTime> time = RequestTimeOf(request.headers);
  if (!time.ok()) return time.error();
  S3Result<Credential> credential = ParseCredential(parsed->credential, Form::kHeader);
  if (!credential.ok()) return credential.error();
  TESSERA_S3_RETURN_IF_ERROR(CheckScope(*credential, time->amz_date, config, Form::kHeader));
  TESSERA_S3_RETURN_IF_ERROR(
      CheckClockSkew(time->unix_s, time->sent, config.now_unix_s, config.skew_max_s));
  auto signed_headers = ParseSignedHeaders(parsed->signed_headers, Form::kHeader);
  if (!signed_headers.ok()) return signed_headers.error();
  TESSERA_S3_RETURN_IF_ERROR(CheckSignedHeaders(*signed_headers, request.headers, Form::kHeader));

  std::optional<std::string> secret = lookup(credential->access_key);
  if (!secret) return InvalidAccessKeyIdError(credential->access_key);
  const std::string payload_hash(Trim(*FindHeader(request.headers, "x-amz-content-sha256")));
  const std::string canonical = CanonicalRequest(
      request, CanonicalQueryString(QueryOf(request.target), false), *signed_headers,
      payload_hash);
  const std::string scope = ScopeOf(*credential);
  const std::string key =
      DeriveSigningKey(*secret, credential->date8, credential->region, credential->service);
  const std::string string_to_sign = StringToSign(time->amz_date, scope, canonical);
  const std::string expected = HmacSha256Hex(key, string_to_sign);
  TESSERA_S3_RETURN_IF_ERROR(CheckSignature(expected, parsed->signature, credential->access_key,
                                            string_to_sign, canonical));

  AuthContext context;
  context.access_key = credential->access_key;
  context.mode = *mode;
  if (*mode == PayloadMode::kSignedHex) context.payload_sha256_hex = payload_hash;
  context.signing = SigningState{key, time->amz_date, scope, expected};
  return context;
}

S3Status VerifyPayloadSha256(const AuthContext& context, std::string_view body_sha256_hex) {
  if (context.mode != PayloadMode::kSignedHex) return S3Status::Ok();
  if (ToLowerAscii(body_sha256_hex) == context.payload_sha256_hex) return S3Status::Ok();
  return S3Status(S3ErrorCode::kXAmzContentSHA256Mismatch,
                  "The provided 'x-amz-content-sha256' header does not match what was "
                  "computed.");
}

}  // namespace tessera::s3::auth
