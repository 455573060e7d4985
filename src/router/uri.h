// URI pieces of the router's HTTP KV API: percent-decoding of path segments
// and query values, the query string, and the /kv/{table}/{key} path.
// docs/router.md, "HTTP KV API", is the specification.
//
// Thread safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tessera::router {

// Decodes %XX escapes (hex digits of either case). `plus_is_space` decodes
// '+' as ' ' (query strings); path segments keep '+'. InvalidArgument for a
// '%' not followed by two hex digits.
Result<std::string> PercentDecode(std::string_view text, bool plus_is_space = false);

// Encodes every byte outside the RFC 3986 unreserved set as %XX (upper case).
std::string PercentEncode(std::string_view bytes);

// "a=1&b=x%20y" -> {a: "1", b: "x y"}; a repeated name keeps the last value;
// a name without '=' maps to "". InvalidArgument for a bad escape.
Result<std::map<std::string, std::string>> ParseQuery(std::string_view query);

// A request target of the KV API, split and decoded.
struct KvTarget {
  std::string table;
  std::optional<std::string> key;  // absent for /kv/{table} (range scans)
  std::map<std::string, std::string> query;
};

// Parses "/kv/{table}[/{key}][?query]". The key is everything after the
// table's '/', decoded as ONE segment (so an encoded "%2F" and a literal '/'
// both become '/' in the key). InvalidArgument for another prefix, an empty
// or oversized table, a table with characters outside [A-Za-z0-9_.-], an
// empty or oversized key, or a bad escape.
Result<KvTarget> ParseKvTarget(std::string_view target);

}  // namespace tessera::router
