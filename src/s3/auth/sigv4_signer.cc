// The SigV4 signer: header signing and presigned URLs, as the AWS SDKs
// produce them.
#include <algorithm>

#include "common/check.h"
#include "s3/auth/amz_time.h"
#include "s3/auth/request_parts.h"
#include "s3/auth/sigv4.h"
#include "s3/auth/sigv4_internal.h"

namespace tessera::s3::auth {
namespace {

using namespace sigv4_internal;  // NOLINT: this file implements them

// Sorted, de-duplicated, lowercased names of every header.
std::vector<std::string> AllHeaderNames(const HeaderList& headers) {
  std::vector<std::string> names;
  for (const auto& [name, value] : headers) names.push_back(ToLowerAscii(name));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out.push_back(';');
    out += n;
  }
  return out;
}

void RemoveHeader(HeaderList* headers, std::string_view name) {
  headers->erase(std::remove_if(headers->begin(), headers->end(),
                                [&](const auto& h) { return EqualsIgnoreCase(h.first, name); }),
                 headers->end());
}

}  // namespace

SigningState SignV4(RequestHead* request, const SigV4Credentials& credentials,
                    int64_t now_unix_s, std::string_view payload_sha256) {
  TESSERA_CHECK(FindHeader(request->headers, "host").has_value());
  for (std::string_view name : {"authorization", "x-amz-date", "x-amz-content-sha256"}) {
    RemoveHeader(&request->headers, name);
  }
  const std::string amz_date = FormatAmzDate(now_unix_s);
  request->headers.emplace_back("x-amz-date", amz_date);
  request->headers.emplace_back("x-amz-content-sha256", std::string(payload_sha256));

  const std::vector<std::string> names = AllHeaderNames(request->headers);
  const std::string date8 = amz_date.substr(0, 8);
  const std::string scope = date8 + "/" + credentials.region + "/s3/aws4_request";
  const std::string canonical = CanonicalRequest(
      *request, CanonicalQueryString(QueryOf(request->target), false), names, payload_sha256);
  const std::string key = DeriveSigningKey(credentials.secret_key, date8, credentials.region);
  const std::string signature = HmacSha256Hex(key, StringToSign(amz_date, scope, canonical));
  request->headers.emplace_back("Authorization", std::string(kAlgorithm) +
                                                     " Credential=" + credentials.access_key +
                                                     "/" + scope + ", SignedHeaders=" +
                                                     Join(names) + ", Signature=" + signature);
  return SigningState{key, amz_date, scope, signature};
}

std::string PresignV4(const RequestHead& request, const SigV4Credentials& credentials,
                      int64_t now_unix_s, int64_t expires_s) {
  TESSERA_CHECK(FindHeader(request.headers, "host").has_value());
  const std::string amz_date = FormatAmzDate(now_unix_s);
  const std::string date8 = amz_date.substr(0, 8);
  const std::string scope = date8 + "/" + credentials.region + "/s3/aws4_request";
  const std::vector<std::string> names = AllHeaderNames(request.headers);

  RequestHead presigned = request;
  const bool has_query = presigned.target.find('?') != std::string::npos;
  if (!has_query) {
    presigned.target += '?';
  } else if (presigned.target.back() != '?' && presigned.target.back() != '&') {
    presigned.target += '&';
  }
  presigned.target += "X-Amz-Algorithm=" + std::string(kAlgorithm) +
                      "&X-Amz-Credential=" + UriEncode(credentials.access_key + "/" + scope) +
                      "&X-Amz-Date=" + amz_date + "&X-Amz-Expires=" + std::to_string(expires_s) +
                      "&X-Amz-SignedHeaders=" + UriEncode(Join(names));
  const std::string canonical =
      CanonicalRequest(presigned, CanonicalQueryString(QueryOf(presigned.target), true), names,
                       kUnsignedPayload);
  const std::string key = DeriveSigningKey(credentials.secret_key, date8, credentials.region);
  return presigned.target +
         "&X-Amz-Signature=" + HmacSha256Hex(key, StringToSign(amz_date, scope, canonical));
}

}  // namespace tessera::s3::auth
