#include "s3/protocol/cors_rules.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace tessera::s3 {
namespace {

constexpr size_t kCorsRuleIdCharsMax = 255;
constexpr std::array<std::string_view, 5> kCorsMethods = {"GET", "PUT", "POST", "DELETE", "HEAD"};

char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool EqualChars(std::string_view a, std::string_view b, bool ignore_case) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ignore_case ? Lower(a[i]) != Lower(b[i]) : a[i] != b[i]) return false;
  }
  return true;
}

std::string Join(std::span<const std::string> items) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

S3Status TooManyWildcards(std::string_view element, std::string_view value) {
  return S3Error(S3ErrorCode::kInvalidRequest, std::string(element) + " \"" + std::string(value) +
                                                   "\" can not have more than one wildcard.");
}

S3Status ValidateRule(const CorsRule& rule) {
  if (rule.allowed_origins.empty() || rule.allowed_methods.empty()) {
    return S3Error(S3ErrorCode::kMalformedXML);
  }
  if (rule.id.size() > kCorsRuleIdCharsMax) {
    return S3Error(S3ErrorCode::kInvalidRequest,
                   "The ID of a CORS rule can be at most 255 characters long.");
  }
  for (const std::string& method : rule.allowed_methods) {
    if (std::find(kCorsMethods.begin(), kCorsMethods.end(), method) == kCorsMethods.end()) {
      return S3Error(S3ErrorCode::kInvalidRequest,
                     "Found unsupported HTTP method in CORS config. Unsupported method is " +
                         method);
    }
  }
  for (const std::string& origin : rule.allowed_origins) {
    if (std::count(origin.begin(), origin.end(), '*') > 1) {
      return TooManyWildcards("AllowedOrigin", origin);
    }
  }
  for (const std::string& header : rule.allowed_headers) {
    if (std::count(header.begin(), header.end(), '*') > 1) {
      return TooManyWildcards("AllowedHeader", header);
    }
  }
  if (rule.max_age_s && *rule.max_age_s < 0) {
    return S3Error(S3ErrorCode::kInvalidRequest, "MaxAgeSeconds must not be negative.");
  }
  return S3Status::Ok();
}

}  // namespace

S3Status ValidateCorsRules(std::span<const CorsRule> rules) {
  if (rules.empty()) return S3Error(S3ErrorCode::kMalformedXML);
  if (rules.size() > kCorsRulesMax) {
    return S3Error(S3ErrorCode::kInvalidRequest,
                   "The CORS configuration has more than 100 rules.");
  }
  for (const CorsRule& rule : rules) {
    if (S3Status st = ValidateRule(rule); !st.ok()) return st;
  }
  return S3Status::Ok();
}

bool CorsPatternMatches(std::string_view pattern, std::string_view text, bool ignore_case) {
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) return EqualChars(pattern, text, ignore_case);
  const std::string_view head = pattern.substr(0, star);
  const std::string_view tail = pattern.substr(star + 1);
  if (text.size() < head.size() + tail.size()) return false;
  return EqualChars(head, text.substr(0, head.size()), ignore_case) &&
         EqualChars(tail, text.substr(text.size() - tail.size()), ignore_case);
}

std::vector<std::string> SplitCorsHeaderList(std::string_view value) {
  std::vector<std::string> names;
  while (!value.empty()) {
    const size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (item.empty()) continue;
    std::string name(item);
    std::transform(name.begin(), name.end(), name.begin(), Lower);
    names.push_back(std::move(name));
  }
  return names;
}

std::optional<size_t> MatchCorsRule(std::span<const CorsRule> rules, std::string_view origin,
                                    std::string_view method,
                                    std::span<const std::string> request_headers) {
  for (size_t i = 0; i < rules.size(); ++i) {
    const CorsRule& rule = rules[i];
    const bool origin_ok =
        std::any_of(rule.allowed_origins.begin(), rule.allowed_origins.end(),
                    [&](const std::string& p) { return CorsPatternMatches(p, origin, false); });
    if (!origin_ok) continue;
    if (std::find(rule.allowed_methods.begin(), rule.allowed_methods.end(), method) ==
        rule.allowed_methods.end()) {
      continue;
    }
    const bool headers_ok = std::all_of(
        request_headers.begin(), request_headers.end(), [&](const std::string& name) {
          return std::any_of(
              rule.allowed_headers.begin(), rule.allowed_headers.end(),
              [&](const std::string& p) { return CorsPatternMatches(p, name, true); });
        });
    if (headers_ok) return i;
  }
  return std::nullopt;
}

std::vector<HeaderField> CorsResponseHeaders(const CorsRule& rule, std::string_view origin,
                                             std::span<const std::string> request_headers,
                                             bool preflight) {
  const bool any_origin = std::find(rule.allowed_origins.begin(), rule.allowed_origins.end(),
                                    "*") != rule.allowed_origins.end();
  std::vector<HeaderField> out;
  out.emplace_back("Access-Control-Allow-Origin", any_origin ? "*" : std::string(origin));
  out.emplace_back("Access-Control-Allow-Methods", Join(rule.allowed_methods));
  if (preflight && !request_headers.empty()) {
    out.emplace_back("Access-Control-Allow-Headers", Join(request_headers));
  }
  if (!rule.expose_headers.empty()) {
    out.emplace_back("Access-Control-Expose-Headers", Join(rule.expose_headers));
  }
  if (rule.max_age_s) out.emplace_back("Access-Control-Max-Age", std::to_string(*rule.max_age_s));
  if (!any_origin) out.emplace_back("Access-Control-Allow-Credentials", "true");
  out.emplace_back("Vary", "Origin, Access-Control-Request-Headers, Access-Control-Request-Method");
  return out;
}

}  // namespace tessera::s3
