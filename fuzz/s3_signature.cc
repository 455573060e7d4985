// Fuzz target: S3 request authentication (src/s3/auth/authenticate.h):
// SigV4 headers and presigned queries, SigV2 headers and presigned queries,
// with the canonicalisations beneath them.
// Input: byte 0 picks the method; then the request target up to '\n'; then
// header lines "name:value" up to an empty line; the rest is ignored.
// Checked: a request built from the input that SignV4 can sign (a Host
// header, names of token characters, printable values, no query parameter
// or header that the signature itself uses) verifies after signing, and
// fails once its target is changed.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_input.h"
#include "s3/auth/authenticate.h"
#include "s3/auth/request_parts.h"
#include "s3/auth/sigv2.h"
#include "s3/auth/sigv4.h"

namespace {

using namespace tessera::s3::auth;

constexpr int64_t kNow = 1369353600;  // 2013-05-24, the AWS examples' day
const SigV4Credentials kCredentials{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                    "us-east-1"};

bool Token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
}

bool Printable(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
}

// Whether SignV4 may sign `request` and its verification must then succeed.
bool SignableAsIs(const RequestHead& request) {
  if (request.target.empty() || request.target.front() != '/' || !Printable(request.target)) return false;
  // A query naming a presigned form's parameters is authenticated as that
  // form, not by the Authorization header SignV4 adds.
  for (const char* presigned : {"X-Amz-", "AWSAccessKeyId", "Signature", "Expires"}) {
    if (request.target.find(presigned) != std::string::npos) return false;
  }
  if (request.target.find('#') != std::string::npos) return false;
  bool host = false;
  for (const auto& [name, value] : request.headers) {
    if (!Token(name) || !Printable(value)) return false;
    if (StartsWithIgnoreCase(name, "authorization") || StartsWithIgnoreCase(name, "x-amz-")) return false;
    host = host || EqualsIgnoreCase(name, "host");
  }
  return host;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const kMethods[] = {"GET", "PUT", "POST", "DELETE", "HEAD"};
  tessera::fuzz::FuzzInput in(data, size);
  RequestHead request;
  request.method = kMethods[in.Byte() % 5];
  request.target = std::string(in.Until('\n'));
  while (!in.empty()) {
    const std::string_view line = in.Until('\n');
    if (line.empty()) break;
    const size_t colon = line.find(':');
    request.headers.emplace_back(std::string(line.substr(0, colon)),
                                 colon == std::string_view::npos ? "" : std::string(line.substr(colon + 1)));
  }
  AuthConfig config;
  config.now_unix_s = kNow;
  const auto lookup = [](std::string_view key) -> std::optional<std::string> {
    if (key == kCredentials.access_key) return kCredentials.secret_key;
    return std::nullopt;
  };
  (void)Authenticate(request, "", config, lookup);
  (void)Authenticate(request, "bucket", config, lookup);
  (void)SigV2StringToSign(request, "bucket", "date");
  (void)CanonicalQueryString(QueryOf(request.target), true);

  if (SignableAsIs(request)) {
    RequestHead signed_request = request;
    SignV4(&signed_request, kCredentials, kNow);
    if (!Authenticate(signed_request, "", config, lookup).ok()) __builtin_trap();
    RequestHead changed = signed_request;
    changed.target += changed.target.find('?') == std::string::npos ? "?fuzz-changed" : "&fuzz-changed";
    if (Authenticate(changed, "", config, lookup).ok()) __builtin_trap();
  }
  return 0;
}
