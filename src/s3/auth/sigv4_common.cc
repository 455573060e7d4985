// The SigV4 pieces shared by header auth, query auth and the signer.
#include <algorithm>
#include <cctype>
#include <vector>

#include "common/limits.h"
#include "s3/auth/checksum.h"
#include "s3/auth/crypto.h"
#include "s3/auth/request_parts.h"
#include "s3/auth/sigv4.h"
#include "s3/auth/sigv4_internal.h"

namespace tessera::s3::auth {

std::string DeriveSigningKey(std::string_view secret_key, std::string_view date8,
                             std::string_view region, std::string_view service) {
  std::string key = HmacSha256("AWS4" + std::string(secret_key), date8);
  key = HmacSha256(key, region);
  key = HmacSha256(key, service);
  return HmacSha256(key, "aws4_request");
}

std::string HmacSha256Hex(std::string_view key, std::string_view data) {
  return HexEncode(HmacSha256(key, data));
}

std::string UriEncode(std::string_view raw) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(raw.size() * 3);
  for (unsigned char c : raw) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string CanonicalQueryString(std::string_view raw_query, bool presigned) {
  std::vector<std::pair<std::string, std::string>> params;
  for (const RawParam& p : SplitQuery(raw_query)) {
    // Decoded as the router decodes before routing (a raw '+' is a space,
    // as AWS and RGW read it), so what is signed is what is routed.
    std::string name = DecodeQueryComponent(p.name);
    if (presigned && name == "X-Amz-Signature") continue;
    params.emplace_back(UriEncode(name), UriEncode(DecodeQueryComponent(p.value)));
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out.push_back('&');
    out += name;
    out.push_back('=');
    out += value;
  }
  return out;
}

namespace sigv4_internal {
namespace {

S3Error Malformed(Form form, std::string_view detail) {
  if (form == Form::kHeader) {
    return S3Error(S3ErrorCode::kAuthorizationHeaderMalformed,
                   "The authorization header is malformed; " + std::string(detail));
  }
  return S3Error(S3ErrorCode::kAuthorizationQueryParametersError,
                 "Error parsing the X-Amz-Credential parameter; " + std::string(detail));
}

// A header value as SigV4 canonicalises it: trimmed, inner runs of spaces
// collapsed to one.
void AppendCanonicalValue(std::string_view value, std::string* out) {
  value = Trim(value);
  bool in_space = false;
  for (char c : value) {
    if (c == ' ') {
      if (!in_space) out->push_back(' ');
      in_space = true;
    } else {
      out->push_back(c);
      in_space = false;
    }
  }
}

}  // namespace

S3Result<Credential> ParseCredential(std::string_view text, Form form) {
  std::vector<std::string_view> parts;
  while (true) {
    const size_t slash = text.find('/');
    parts.push_back(text.substr(0, slash));
    if (slash == std::string_view::npos) break;
    text.remove_prefix(slash + 1);
  }
  const bool empty_part =
      std::any_of(parts.begin(), parts.end(), [](std::string_view p) { return p.empty(); });
  if (parts.size() != 5 || empty_part) {
    return Malformed(form,
                     "the Credential is mal-formed; expecting "
                     "\"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".");
  }
  return Credential{std::string(parts[0]), std::string(parts[1]), std::string(parts[2]),
                    std::string(parts[3]), std::string(parts[4])};
}

S3Status CheckScope(const Credential& credential, std::string_view amz_date,
                    const AuthConfig& config, Form form) {
  if (credential.terminal != "aws4_request") {
    return Malformed(form, "incorrect terminal \"" + credential.terminal +
                               "\". This endpoint uses \"aws4_request\".");
  }
  if (credential.service != "s3") {
    return Malformed(form, "incorrect service \"" + credential.service +
                               "\". This endpoint belongs to \"s3\".");
  }
  if (credential.region != config.region && credential.region != "us-east-1") {
    return Malformed(form, "the region '" + credential.region + "' is wrong; expecting '" +
                               config.region + "'");
  }
  if (amz_date.substr(0, 8) != credential.date8) {
    return Malformed(form, "Invalid credential date \"" + credential.date8 +
                               "\". This date is not the same as X-Amz-Date: \"" +
                               std::string(amz_date.substr(0, 8)) + "\".");
  }
  return S3Status::Ok();
}

std::string ScopeOf(const Credential& credential) {
  return credential.date8 + "/" + credential.region + "/" + credential.service + "/" +
         credential.terminal;
}

S3Result<PayloadMode> PayloadModeOf(std::string_view v) {
  if (IsLowerHex64(v)) return PayloadMode::kSignedHex;
  if (v == kUnsignedPayload) return PayloadMode::kUnsigned;
  if (v == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD") return PayloadMode::kStreamingSigned;
  if (v == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER") {
    return PayloadMode::kStreamingSignedTrailer;
  }
  if (v == "STREAMING-UNSIGNED-PAYLOAD-TRAILER") return PayloadMode::kStreamingUnsignedTrailer;
  if (v.substr(0, 21) == "STREAMING-AWS4-ECDSA-") {
    return S3Error(S3ErrorCode::kNotImplemented,
                   "SigV4a (ECDSA) streaming payloads are not implemented.");
  }
  return S3Error(S3ErrorCode::kInvalidArgument,
                 "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, "
                 "STREAMING-UNSIGNED-PAYLOAD-TRAILER, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, "
                 "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER or a valid sha256 value.");
}

S3Result<std::vector<std::string>> ParseSignedHeaders(std::string_view text, Form form) {
  std::vector<std::string> names;
  while (true) {
    const size_t semi = text.find(';');
    std::string_view name = text.substr(0, semi);
    if (name.empty() || names.size() == limits::kSigV4SignedHeadersMax) {
      if (form == Form::kHeader) {
        return Malformed(form, "the SignedHeaders list is invalid.");
      }
      return S3Error(S3ErrorCode::kAuthorizationQueryParametersError,
                     "X-Amz-SignedHeaders is invalid.");
    }
    names.push_back(ToLowerAscii(name));
    if (semi == std::string_view::npos) break;
    text.remove_prefix(semi + 1);
  }
  return names;
}

S3Status CheckSignedHeaders(const std::vector<std::string>& signed_headers,
                            const HeaderList& headers, Form form) {
  auto is_signed = [&](std::string_view name) {
    return std::any_of(signed_headers.begin(), signed_headers.end(),
                       [&](const std::string& s) { return EqualsIgnoreCase(s, name); });
  };
  if (!is_signed("host")) {
    if (form == Form::kHeader) return Malformed(form, "the SignedHeaders must include host.");
    return S3Status(S3ErrorCode::kAuthorizationQueryParametersError,
                    "X-Amz-SignedHeaders must include host.");
  }
  // Every x-amz-* header must be signed but the payload hash (and, in the
  // header form, x-amz-date, which the scope already pins); S3 names the
  // others in request order.
  std::vector<std::string> not_signed;
  for (const auto& [name, value] : headers) {
    if (!StartsWithIgnoreCase(name, "x-amz-")) continue;
    if (EqualsIgnoreCase(name, "x-amz-content-sha256")) continue;
    if (form == Form::kHeader && EqualsIgnoreCase(name, "x-amz-date")) continue;
    if (is_signed(name)) continue;
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (std::find(not_signed.begin(), not_signed.end(), lower) == not_signed.end()) {
      not_signed.push_back(std::move(lower));  // a repeated header is named once
    }
  }
  if (not_signed.empty()) return S3Status::Ok();
  std::string names;
  for (const std::string& n : not_signed) names += (names.empty() ? "" : ", ") + n;
  return S3Error(S3ErrorCode::kAccessDenied,
                 "There were headers present in the request which were not signed")
      .With("HeadersNotSigned", std::move(names));
}

std::string CanonicalRequest(const RequestHead& request, std::string_view canonical_query,
                             const std::vector<std::string>& signed_headers,
                             std::string_view payload_hash) {
  std::string path(PathOf(request.target));
  if (path.empty()) path = "/";
  std::string out = request.method + "\n" + path + "\n" + std::string(canonical_query) + "\n";
  for (const std::string& name : signed_headers) {
    out += name;
    out.push_back(':');
    bool first = true;
    for (const auto& [n, v] : request.headers) {
      if (!EqualsIgnoreCase(n, name)) continue;
      if (!first) out.push_back(',');
      AppendCanonicalValue(v, &out);
      first = false;
    }
    out.push_back('\n');
  }
  out.push_back('\n');
  for (size_t i = 0; i < signed_headers.size(); ++i) {
    if (i > 0) out.push_back(';');
    out += signed_headers[i];
  }
  out.push_back('\n');
  out += payload_hash;
  return out;
}

std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request) {
  return std::string(kAlgorithm) + "\n" + std::string(amz_date) + "\n" + std::string(scope) +
         "\n" + Sha256Hex(canonical_request);
}

S3Status RejectSecurityToken(const RequestHead& request) {
  if (FindHeader(request.headers, "x-amz-security-token") ||
      HasQueryParam(QueryOf(request.target), "X-Amz-Security-Token")) {
    return S3Status(S3ErrorCode::kInvalidArgument,
                    "Temporary credentials (security tokens) are not supported by this service.");
  }
  return S3Status::Ok();
}

S3Status CheckSignature(std::string_view expected_hex, std::string_view provided_hex,
                        std::string_view access_key, std::string_view string_to_sign,
                        std::string_view canonical_request) {
  if (ConstantTimeEquals(expected_hex, provided_hex)) return S3Status::Ok();
  return SignatureMismatchError(std::string(access_key), std::string(string_to_sign),
                                std::string(provided_hex), std::string(canonical_request));
}

}  // namespace sigv4_internal
}  // namespace tessera::s3::auth
