#include "s3/auth/amz_time.h"


#include "s3/protocol/http_rules.h"

namespace tessera::s3::auth {
namespace {

// Milliseconds since the epoch to whole seconds, rounding down (dates
// before 1970 included).
int64_t FloorSeconds(int64_t unix_ms) {
  return unix_ms / 1000 - ((unix_ms % 1000 != 0) && (unix_ms < 0));
}

std::optional<int64_t> ToSeconds(std::optional<int64_t> unix_ms) {
  if (!unix_ms) return std::nullopt;
  return FloorSeconds(*unix_ms);
}

// "Tue, 27 Mar 2007 19:36:42 +0000" / "... UTC" / "... Z" / "Tue, 7 Mar ..."
// -> the IMF-fixdate "Tue, 27 Mar 2007 19:36:42 GMT" / "Tue, 07 Mar ...".
// Other text comes back unchanged (http_rules then decides).
std::string AsImfFixdate(std::string_view text) {
  std::string out(text);
  for (std::string_view zone : {std::string_view(" +0000"), std::string_view(" UTC"),
                                std::string_view(" Z")}) {
    if (out.size() > zone.size() && out.ends_with(zone)) {
      out.resize(out.size() - zone.size());
      out += " GMT";
      break;
    }
  }
  const size_t comma = out.find(", ");
  if (comma != std::string::npos && comma + 3 < out.size() && out[comma + 3] == ' ' &&
      out[comma + 2] >= '0' && out[comma + 2] <= '9') {
    out.insert(comma + 2, "0");
  }
  return out;
}

}  // namespace

std::optional<int64_t> ParseAmzDate(std::string_view text) {
  return ToSeconds(s3::ParseIso8601Basic(text));
}

std::string FormatAmzDate(int64_t unix_s) { return s3::FormatIso8601Basic(unix_s * 1000); }

std::optional<int64_t> ParseHttpDate(std::string_view text) {
  if (auto t = s3::ParseHttpDate(text)) return FloorSeconds(*t);
  return ToSeconds(s3::ParseHttpDate(AsImfFixdate(text)));
}

std::string FormatHttpDate(int64_t unix_s) { return s3::FormatHttpDate(unix_s * 1000); }

std::optional<int64_t> ParseAnyDate(std::string_view text) {
  if (auto t = ParseAmzDate(text)) return t;
  return ParseHttpDate(text);
}

}  // namespace tessera::s3::auth
