#include "s3/auth/amz_time.h"

#include "common/check.h"
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

// An RFC 1123 date whose zone is not "GMT", rewritten as the IMF-fixdate
// of the same wall-clock time plus the zone's offset east of UTC.
struct ZonedDate {
  std::string imf_fixdate;
  int64_t offset_s = 0;  // UTC = the fixdate's time - offset_s
};

// "+hhmm" / "-hhmm" (RFC 5322 numeric zone: hh <= 23, mm <= 59; "-0000"
// means UTC as well) to seconds east of UTC.
std::optional<int64_t> NumericZoneOffset(std::string_view zone) {
  if (zone.size() != 5 || (zone[0] != '+' && zone[0] != '-')) return std::nullopt;
  for (char c : zone.substr(1)) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  const int hours = (zone[1] - '0') * 10 + (zone[2] - '0');
  const int minutes = (zone[3] - '0') * 10 + (zone[4] - '0');
  if (hours > 23 || minutes > 59) return std::nullopt;
  const int64_t offset = hours * 3600 + minutes * 60;
  return zone[0] == '-' ? -offset : offset;
}

// "Tue, 27 Mar 2007 19:36:42 +0000" / "... UTC" / "... Z" / "... +0800" /
// "Tue, 7 Mar ..." -> the IMF-fixdate "Tue, 27 Mar 2007 19:36:42 GMT" /
// "Tue, 07 Mar ..." with the zone's offset. Other text comes back
// unchanged (http_rules then decides). AWS accepts any numeric zone
// (`date -R` on a machine outside UTC sends one).
ZonedDate AsImfFixdate(std::string_view text) {
  ZonedDate out{std::string(text), 0};
  std::string& date = out.imf_fixdate;
  const size_t last_space = date.rfind(' ');
  if (last_space != std::string::npos && last_space + 1 < date.size()) {
    const std::string_view zone = std::string_view(date).substr(last_space + 1);
    std::optional<int64_t> offset;
    if (zone == "UTC" || zone == "Z") offset = 0;
    if (!offset) offset = NumericZoneOffset(zone);
    if (offset) {
      out.offset_s = *offset;
      date.resize(last_space);
      date += " GMT";
    }
  }
  const size_t comma = date.find(", ");
  if (comma != std::string::npos && comma + 3 < date.size() && date[comma + 3] == ' ' &&
      date[comma + 2] >= '0' && date[comma + 2] <= '9') {
    date.insert(comma + 2, "0");
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
  const ZonedDate zoned = AsImfFixdate(text);
  const std::optional<int64_t> local = ToSeconds(s3::ParseHttpDate(zoned.imf_fixdate));
  if (!local) return std::nullopt;
  return *local - zoned.offset_s;
}

std::string FormatHttpDate(int64_t unix_s) { return s3::FormatHttpDate(unix_s * 1000); }

std::optional<int64_t> ParseAnyDate(std::string_view text) {
  if (auto t = ParseAmzDate(text)) return t;
  return ParseHttpDate(text);
}

std::string FormatIsoSeconds(int64_t unix_s) {
  std::string text = s3::FormatIso8601(unix_s * 1000);  // "...T00:20:00.000Z"
  TESSERA_CHECK(text.size() > 5);
  return text.replace(text.size() - 5, 5, "Z");
}

S3Status CheckClockSkew(int64_t request_s, std::string_view request_time, int64_t now_s,
                        int64_t max_skew_s) {
  const int64_t skew = request_s > now_s ? request_s - now_s : now_s - request_s;
  if (skew <= max_skew_s) return S3Status::Ok();
  return S3Error(S3ErrorCode::kRequestTimeTooSkewed)
      .With("RequestTime", std::string(request_time))
      .With("ServerTime", FormatIsoSeconds(now_s))
      .With("MaxAllowedSkewMilliseconds", std::to_string(max_skew_s * 1000));
}

}  // namespace tessera::s3::auth
