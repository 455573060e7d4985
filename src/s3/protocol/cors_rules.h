// A bucket's CORS rules as S3 evaluates them, with no I/O: which rule (if
// any) admits a cross-origin request, and the Access-Control-* headers the
// answer then carries. The S3 front stores the rules with the bucket
// (PutBucketCors), answers preflight OPTIONS requests from them and adds the
// headers to actual responses (src/s3/front/cors.cc).
//
// Evaluation (AWS "How Amazon S3 evaluates the CORS configuration"): the
// first rule, in document order, whose AllowedOrigin matches the Origin
// header (case-sensitive; one `*` in a pattern matches any run of
// characters), whose AllowedMethod lists the method (the preflight's
// Access-Control-Request-Method, or the actual request's method), and, for
// a preflight, whose AllowedHeader patterns match every header named in
// Access-Control-Request-Headers (case-insensitive, one `*` each).
//
// Thread safety: stateless functions; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/limits.h"
#include "s3/protocol/http_rules.h"
#include "s3/protocol/s3_result.h"

namespace tessera::s3 {

// One CORSRule of a CORSConfiguration, as PutBucketCors received it.
struct CorsRule {
  std::string id;                            // ID, at most 255 characters; may be empty
  std::vector<std::string> allowed_origins;  // at least one
  std::vector<std::string> allowed_methods;  // GET PUT POST DELETE HEAD, at least one
  std::vector<std::string> allowed_headers;
  std::vector<std::string> expose_headers;
  std::optional<int64_t> max_age_s;
  bool operator==(const CorsRule&) const = default;
};

// Checks what S3 checks of a configuration beyond its XML shape: at least
// one and at most kCorsRulesMax rules; each with an origin and a method;
// only the five methods S3 knows; at most one `*` per AllowedOrigin and per
// AllowedHeader; an ID of at most 255 characters; MaxAgeSeconds not
// negative. InvalidRequest (or MalformedXML for a missing element) with
// AWS's message otherwise.
inline constexpr size_t kCorsRulesMax = limits::kS3CorsRulesMax;
S3Status ValidateCorsRules(std::span<const CorsRule> rules);

// `pattern` (with at most one `*`) against `text`; case-insensitive for
// header names.
bool CorsPatternMatches(std::string_view pattern, std::string_view text, bool ignore_case);

// The header names of an Access-Control-Request-Headers value: split at
// commas, trimmed, lowercased, empty names dropped.
std::vector<std::string> SplitCorsHeaderList(std::string_view value);

// The index of the first rule that admits the request, or nullopt.
// `request_headers` are the preflight's (SplitCorsHeaderList); empty for an
// actual request.
std::optional<size_t> MatchCorsRule(std::span<const CorsRule> rules, std::string_view origin,
                                    std::string_view method,
                                    std::span<const std::string> request_headers);

// The headers an admitted request's answer carries: Access-Control-Allow-
// Origin (`*` when the rule's origin is `*`, else the request's Origin, with
// Access-Control-Allow-Credentials: true), -Allow-Methods (the rule's),
// -Expose-Headers and -Max-Age (when the rule has them), Vary; a preflight
// answer also echoes the requested headers in -Allow-Headers.
std::vector<HeaderField> CorsResponseHeaders(const CorsRule& rule, std::string_view origin,
                                             std::span<const std::string> request_headers,
                                             bool preflight);

}  // namespace tessera::s3
