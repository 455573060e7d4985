// Signature Version 2: header and query verification, and the signer.
#include "s3/auth/sigv2.h"

#include <algorithm>
#include <array>
#include <optional>

#include "common/check.h"
#include "common/limits.h"
#include "s3/auth/amz_time.h"
#include "s3/auth/checksum.h"
#include "s3/auth/crypto.h"
#include "s3/auth/request_parts.h"

namespace tessera::s3::auth {
namespace {

// Query parameters that are part of the CanonicalizedResource: the SigV2
// documentation's list plus the later ones botocore's HmacV1 signs
// (accelerate ... storageClass), so that boto3's V2 signatures verify.
constexpr std::array<std::string_view, 35> kSubResources = {
    "accelerate", "acl", "analytics", "cors", "defaultObjectAcl", "delete", "inventory",
    "lifecycle", "location", "logging", "metrics", "notification", "object-lock", "partNumber",
    "policy", "replication", "requestPayment", "response-cache-control",
    "response-content-disposition", "response-content-encoding", "response-content-language",
    "response-content-type", "response-expires", "restore", "select", "select-type",
    "storageClass", "tagging", "torrent", "uploadId", "uploads", "versionId", "versioning",
    "versions", "website"};

bool IsSubResource(std::string_view name) {
  return std::find(kSubResources.begin(), kSubResources.end(), name) != kSubResources.end();
}

std::string CanonicalizedAmzHeaders(const HeaderList& headers) {
  std::vector<std::pair<std::string, std::string>> amz;  // (lowercase name, value)
  for (const auto& [name, value] : headers) {
    if (StartsWithIgnoreCase(name, "x-amz-")) amz.emplace_back(ToLowerAscii(name), Trim(value));
  }
  std::stable_sort(amz.begin(), amz.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (size_t i = 0; i < amz.size(); ++i) {
    if (i > 0 && amz[i].first == amz[i - 1].first) {
      out.back() = ',';  // repeated header: join its values
    } else {
      out += amz[i].first;
      out.push_back(':');
    }
    out += amz[i].second;
    out.push_back('\n');
  }
  return out;
}

std::string CanonicalizedResource(std::string_view target, std::string_view bucket) {
  std::string out;
  if (!bucket.empty()) {
    out = "/" + std::string(bucket);
  }
  std::string_view path = PathOf(target);
  out += path.empty() ? std::string_view("/") : path;
  std::vector<std::pair<std::string, std::optional<std::string>>> subs;
  for (const RawParam& p : SplitQuery(QueryOf(target))) {
    // Names and values as the router reads them (D63): "%76ersionId=1" is
    // routed as versionId, so it is signed as versionId (and fails a
    // signature made without it); a raw '+' is routed as a space.
    std::string name = DecodeQueryComponent(p.name);
    if (!IsSubResource(name)) continue;
    subs.emplace_back(std::move(name),
                      p.has_equals ? std::optional(DecodeQueryComponent(p.value)) : std::nullopt);
  }
  std::stable_sort(subs.begin(), subs.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < subs.size(); ++i) {
    out.push_back(i == 0 ? '?' : '&');
    out += subs[i].first;
    if (subs[i].second) out += "=" + *subs[i].second;
  }
  return out;
}

std::string Sign(std::string_view secret, std::string_view string_to_sign) {
  return Base64Encode(HmacSha1(secret, string_to_sign));
}


// botocore signs a path-style bucket request "/bucket" with the resource
// "/bucket/" (its HmacV1 canonical resource ends bucket paths with '/'),
// while AWS's own examples use "/bucket". For such a request the other form
// is accepted too; for anything else nullopt.
std::optional<RequestHead> WithBucketSlash(const RequestHead& request,
                                           std::string_view virtual_host_bucket) {
  if (!virtual_host_bucket.empty()) return std::nullopt;
  const std::string_view path = PathOf(request.target);
  if (path.size() < 2 || path.find('/', 1) != std::string_view::npos) return std::nullopt;
  RequestHead alternative = request;
  alternative.target = std::string(path) + "/" + std::string(request.target.substr(path.size()));
  return alternative;
}

// Checks `signature` against the request's string to sign (and the
// bucket-slash form, see WithBucketSlash).
S3Status CheckV2(const std::string& access_key, const std::string& secret,
                 const RequestHead& request, std::string_view virtual_host_bucket,
                 std::string_view date_line, std::string_view signature) {
  const std::string string_to_sign = SigV2StringToSign(request, virtual_host_bucket, date_line);
  if (ConstantTimeEquals(Sign(secret, string_to_sign), signature)) return S3Status::Ok();
  if (auto alternative = WithBucketSlash(request, virtual_host_bucket)) {
    if (ConstantTimeEquals(
            Sign(secret, SigV2StringToSign(*alternative, virtual_host_bucket, date_line)),
            signature)) {
      return S3Status::Ok();
    }
  }
  return SignatureMismatchError(access_key, string_to_sign, std::string(signature));
}

}  // namespace

std::string SigV2StringToSign(const RequestHead& request, std::string_view virtual_host_bucket,
                              std::string_view date_line) {
  const auto md5 = FindHeader(request.headers, "content-md5");
  const auto type = FindHeader(request.headers, "content-type");
  std::string out = request.method + "\n";
  out += md5 ? Trim(*md5) : std::string_view();
  out += "\n";
  out += type ? Trim(*type) : std::string_view();
  out += "\n";
  out += date_line;
  out += "\n";
  out += CanonicalizedAmzHeaders(request.headers);
  out += CanonicalizedResource(request.target, virtual_host_bucket);
  return out;
}

S3Result<AuthContext> VerifySigV2Header(const RequestHead& request,
                                        std::string_view virtual_host_bucket,
                                        const AuthConfig& config, const CredentialLookup& lookup) {
  const S3Error malformed(S3ErrorCode::kInvalidArgument,
                          "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature");
  auto header = FindHeader(request.headers, "authorization");
  if (!header) return malformed;
  std::string_view value = Trim(*header);
  if (value.substr(0, 4) != "AWS ") return malformed;
  value = Trim(value.substr(4));
  const size_t colon = value.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == value.size()) return malformed;
  const std::string access_key(value.substr(0, colon));
  const std::string_view signature = value.substr(colon + 1);

  const auto amz_date = FindHeader(request.headers, "x-amz-date");
  const auto date = FindHeader(request.headers, "date");
  std::optional<int64_t> t;
  if (amz_date) {
    t = ParseAnyDate(Trim(*amz_date));
  } else if (date) {
    t = ParseAnyDate(Trim(*date));
  }
  // AWS refuses a date before the epoch as invalid, not as skewed.
  if (!t || *t < 0) {
    return S3Error(S3ErrorCode::kAccessDenied,
                   "AWS authentication requires a valid Date or x-amz-date header");
  }
  TESSERA_S3_RETURN_IF_ERROR(CheckClockSkew(*t, Trim(amz_date ? *amz_date : *date),
                                            config.now_unix_s, config.skew_max_s));

  std::optional<std::string> secret = lookup(access_key);
  if (!secret) return InvalidAccessKeyIdError(access_key);
  const std::string date_line = amz_date ? std::string() : std::string(Trim(*date));
  TESSERA_S3_RETURN_IF_ERROR(
      CheckV2(access_key, *secret, request, virtual_host_bucket, date_line, signature));
  AuthContext context;
  context.access_key = access_key;
  context.sigv2 = true;
  return context;
}

S3Result<AuthContext> VerifySigV2Query(const RequestHead& request,
                                       std::string_view virtual_host_bucket,
                                       const AuthConfig& config, const CredentialLookup& lookup) {
  const std::string_view query = QueryOf(request.target);
  auto access_key = FindQueryParam(query, "AWSAccessKeyId");
  auto expires = FindQueryParam(query, "Expires");
  auto signature = FindQueryParam(query, "Signature");
  if (!access_key || !expires || !signature || access_key->empty()) {
    return S3Error(S3ErrorCode::kAccessDenied,
                   "Query-string authentication requires the Signature, Expires and "
                   "AWSAccessKeyId parameters");
  }
  auto expires_s = ParseDecimal(*expires);
  if (!expires_s) {
    return S3Error(S3ErrorCode::kAccessDenied,
                   "Invalid date (should be seconds since epoch): " + *expires);
  }
  if (config.now_unix_s > *expires_s) {
    return S3Error(S3ErrorCode::kAccessDenied, "Request has expired")
        .With("Expires", FormatIsoSeconds(*expires_s))
        .With("ServerTime", FormatIsoSeconds(config.now_unix_s));
  }
  // A leaked URL must not grant access for ever: at most SigV4's week.
  if (*expires_s - config.now_unix_s > limits::kPresignExpiresSecondsMax) {
    return S3Error(S3ErrorCode::kAccessDenied,
                   "Expires must be less than a week (604800 seconds) from now")
        .With("Expires", FormatIsoSeconds(*expires_s))
        .With("ServerTime", FormatIsoSeconds(config.now_unix_s));
  }
  std::optional<std::string> secret = lookup(*access_key);
  if (!secret) return InvalidAccessKeyIdError(*access_key);
  TESSERA_S3_RETURN_IF_ERROR(
      CheckV2(*access_key, *secret, request, virtual_host_bucket, *expires, *signature));
  AuthContext context;
  context.access_key = *access_key;
  context.sigv2 = true;
  context.presigned = true;
  return context;
}

void SignV2(RequestHead* request, std::string_view virtual_host_bucket,
            std::string_view access_key, std::string_view secret_key) {
  const auto amz_date = FindHeader(request->headers, "x-amz-date");
  const auto date = FindHeader(request->headers, "date");
  TESSERA_CHECK(amz_date.has_value() || date.has_value());
  const std::string date_line = amz_date ? std::string() : std::string(Trim(*date));
  const std::string signature =
      Sign(secret_key, SigV2StringToSign(*request, virtual_host_bucket, date_line));
  request->headers.emplace_back("Authorization",
                                "AWS " + std::string(access_key) + ":" + signature);
}

std::string PresignV2(const RequestHead& request, std::string_view virtual_host_bucket,
                      std::string_view access_key, std::string_view secret_key,
                      int64_t expires_unix_s) {
  const std::string expires = std::to_string(expires_unix_s);
  const std::string signature =
      Sign(secret_key, SigV2StringToSign(request, virtual_host_bucket, expires));
  std::string target = request.target;
  target += target.find('?') == std::string::npos ? "?" : "&";
  // Signature is base64: '+', '/' and '=' must be percent-encoded.
  std::string encoded;
  for (char c : signature) {
    if (c == '+') encoded += "%2B";
    else if (c == '/') encoded += "%2F";
    else if (c == '=') encoded += "%3D";
    else encoded.push_back(c);
  }
  return target + "AWSAccessKeyId=" + std::string(access_key) + "&Expires=" + expires +
         "&Signature=" + encoded;
}

}  // namespace tessera::s3::auth
