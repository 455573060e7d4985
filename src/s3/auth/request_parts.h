// Internal to s3/auth: splitting a request target into path and query,
// percent-decoding, and the small string helpers the signers share.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::s3::auth {

// The path part of a target (before '?'), and the raw query (after the
// first '?', empty if none).
std::string_view PathOf(std::string_view target);
std::string_view QueryOf(std::string_view target);

// One query parameter as sent (not decoded).
struct RawParam {
  std::string_view name;
  std::string_view value;  // empty when the parameter has no '='
  bool has_equals = false;  // "name=" or "name=value", not just "name"
};
// The '&'-separated parameters of a raw query; empty pieces are skipped.
std::vector<RawParam> SplitQuery(std::string_view raw_query);

// Decodes %XX (either hex case); '+' stays '+'; a '%' not followed by two
// hex digits is kept literally.
std::string PercentDecode(std::string_view text);

// A query name or value as the S3 router reads it (ParseQuery in
// s3/protocol/http_rules.h): '+' is a space, %XX its byte. SigV2 signs
// sub-resources in this form, so what is signed is what is routed.
std::string DecodeQueryComponent(std::string_view text);

// The decoded value of the first parameter whose raw name equals `name`
// (case-sensitive, as S3 treats X-Amz-*), or nullopt.
std::optional<std::string> FindQueryParam(std::string_view raw_query, std::string_view name);
bool HasQueryParam(std::string_view raw_query, std::string_view name);

// Without leading and trailing spaces and tabs.
std::string_view Trim(std::string_view text);
std::string ToLowerAscii(std::string_view text);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix);
// True if text is exactly 64 lowercase hex digits.
bool IsLowerHex64(std::string_view text);
// Parses a non-negative decimal integer (no sign, no spaces, <= 18 digits).
std::optional<int64_t> ParseDecimal(std::string_view text);

}  // namespace tessera::s3::auth
