#include "s3/protocol/http_rules.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <map>

#include "common/http_field_chars.h"
#include "common/limits.h"

namespace tessera::s3 {

// Howard Hinnant's days_from_civil: exact for every int64 day count we can
// meet, no time zone, no libc state.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

namespace {

// ---- Calendar arithmetic (proleptic Gregorian, UTC) -------------------------

struct Civil {
  int64_t year;
  unsigned month;  // 1..12
  unsigned day;    // 1..31
};

Civil CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<int64_t>(yoe) + era * 400 + (m <= 2), m, d};
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
unsigned DaysInMonth(int64_t y, unsigned m) {
  constexpr std::array<unsigned, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

constexpr int64_t kMsPerDay = 86'400'000;
constexpr std::array<std::string_view, 7> kWeekdays = {"Sun", "Mon", "Tue", "Wed",
                                                       "Thu", "Fri", "Sat"};
constexpr std::array<std::string_view, 7> kLongWeekdays = {
    "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// A broken-down UTC time; Split/Join convert from/to unix ms.
struct DateTime {
  int64_t year = 1970;
  unsigned month = 1, day = 1, hour = 0, minute = 0, second = 0, millis = 0;
  unsigned weekday = 4;  // 0 = Sunday; set by Split only
};

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

DateTime Split(int64_t unix_ms) {
  const int64_t days = FloorDiv(unix_ms, kMsPerDay);
  const int64_t ms_of_day = unix_ms - days * kMsPerDay;
  const Civil c = CivilFromDays(days);
  DateTime t;
  t.year = c.year;
  t.month = c.month;
  t.day = c.day;
  t.hour = static_cast<unsigned>(ms_of_day / 3'600'000);
  t.minute = static_cast<unsigned>(ms_of_day / 60'000 % 60);
  t.second = static_cast<unsigned>(ms_of_day / 1000 % 60);
  t.millis = static_cast<unsigned>(ms_of_day % 1000);
  t.weekday = static_cast<unsigned>((days % 7 + 11) % 7);  // 1970-01-01 was a Thursday
  return t;
}

std::optional<int64_t> Join(const DateTime& t) {
  if (t.month < 1 || t.month > 12 || t.day < 1 || t.day > DaysInMonth(t.year, t.month) ||
      t.hour > 23 || t.minute > 59 || t.second > 60 || t.millis > 999) {
    return std::nullopt;
  }
  // A leap second (:60) is read as the next second's start, as most
  // HTTP stacks do.
  return DaysFromCivil(t.year, t.month, t.day) * kMsPerDay +
         (int64_t{t.hour} * 3600 + t.minute * 60 + t.second) * 1000 + t.millis;
}

// A cursor over date text; every Read* consumes only on success.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}
  bool done() const { return pos_ == text_.size(); }
  bool Literal(std::string_view s) {
    if (text_.substr(pos_, s.size()) != s) return false;
    pos_ += s.size();
    return true;
  }
  // Exactly `width` digits.
  bool Digits(size_t width, unsigned* out) {
    if (pos_ + width > text_.size()) return false;
    unsigned v = 0;
    for (size_t i = 0; i < width; ++i) {
      const char c = text_[pos_ + i];
      if (c < '0' || c > '9') return false;
      v = v * 10 + static_cast<unsigned>(c - '0');
    }
    pos_ += width;
    *out = v;
    return true;
  }
  // One of `names`, returning its index.
  template <size_t N>
  bool OneOf(const std::array<std::string_view, N>& names, unsigned* index) {
    for (size_t i = 0; i < N; ++i) {
      if (Literal(names[i])) {
        *index = static_cast<unsigned>(i);
        return true;
      }
    }
    return false;
  }
  bool Time(DateTime* t) {
    return Digits(2, &t->hour) && Literal(":") && Digits(2, &t->minute) && Literal(":") &&
           Digits(2, &t->second);
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

// "Sun, 06 Nov 1994 08:49:37 GMT"
std::optional<int64_t> ParseImfFixdate(std::string_view text) {
  Scanner s(text);
  DateTime t;
  unsigned ignored = 0, year = 0;
  if (!s.OneOf(kWeekdays, &ignored) || !s.Literal(", ") || !s.Digits(2, &t.day) ||
      !s.Literal(" ") || !s.OneOf(kMonths, &t.month) || !s.Literal(" ") || !s.Digits(4, &year) ||
      !s.Literal(" ") || !s.Time(&t) || !s.Literal(" GMT") || !s.done()) {
    return std::nullopt;
  }
  t.month += 1;
  t.year = year;
  return Join(t);
}

// "Sunday, 06-Nov-94 08:49:37 GMT". Two-digit years: 70..99 -> 19xx, else
// 20xx (RFC 7231 asks for "50 years in the future" against a clock we do
// not consult; this fixed pivot agrees with it until 2070).
std::optional<int64_t> ParseRfc850(std::string_view text) {
  Scanner s(text);
  DateTime t;
  unsigned ignored = 0, yy = 0;
  if (!s.OneOf(kLongWeekdays, &ignored) || !s.Literal(", ") || !s.Digits(2, &t.day) ||
      !s.Literal("-") || !s.OneOf(kMonths, &t.month) || !s.Literal("-") || !s.Digits(2, &yy) ||
      !s.Literal(" ") || !s.Time(&t) || !s.Literal(" GMT") || !s.done()) {
    return std::nullopt;
  }
  t.month += 1;
  t.year = yy >= 70 ? 1900 + yy : 2000 + yy;
  return Join(t);
}

// "Sun Nov  6 08:49:37 1994" (day space-padded).
std::optional<int64_t> ParseAsctime(std::string_view text) {
  Scanner s(text);
  DateTime t;
  unsigned ignored = 0, year = 0;
  if (!s.OneOf(kWeekdays, &ignored) || !s.Literal(" ") || !s.OneOf(kMonths, &t.month) ||
      !s.Literal(" ")) {
    return std::nullopt;
  }
  if (s.Literal(" ")) {
    if (!s.Digits(1, &t.day)) return std::nullopt;
  } else if (!s.Digits(2, &t.day)) {
    return std::nullopt;
  }
  if (!s.Literal(" ") || !s.Time(&t) || !s.Literal(" ") || !s.Digits(4, &year) || !s.done()) {
    return std::nullopt;
  }
  t.month += 1;
  t.year = year;
  return Join(t);
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

char LowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string LowerCopy(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = LowerAscii(c);
  return out;
}

}  // namespace

// ---- Dates ------------------------------------------------------------------

std::string FormatHttpDate(int64_t unix_ms) {
  const DateTime t = Split(unix_ms);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s, %02u %s %04lld %02u:%02u:%02u GMT",
                kWeekdays[t.weekday].data(), t.day, kMonths[t.month - 1].data(),
                static_cast<long long>(t.year), t.hour, t.minute, t.second);
  return buf;
}

std::optional<int64_t> ParseHttpDate(std::string_view text) {
  text = TrimOws(text);
  if (auto v = ParseImfFixdate(text)) return v;
  if (auto v = ParseRfc850(text)) return v;
  return ParseAsctime(text);
}

void AppendIso8601(std::string* out, int64_t unix_ms) {
  const DateTime t = Split(unix_ms);
  if (t.year < 0 || t.year > 9999) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%04lld-%02u-%02uT%02u:%02u:%02u.%03uZ",
                  static_cast<long long>(t.year), t.month, t.day, t.hour, t.minute, t.second,
                  t.millis);
    out->append(buf);
    return;
  }
  // Every listing entry carries one: formatted by hand into the document,
  // not by snprintf nor through a string of its own.
  char text[] = "0000-00-00T00:00:00.000Z";
  const auto put = [&text](size_t at, unsigned value, size_t digits) {
    for (size_t i = digits; i-- > 0; value /= 10) text[at + i] = static_cast<char>('0' + value % 10);
  };
  put(0, static_cast<unsigned>(t.year), 4);
  put(5, t.month, 2);
  put(8, t.day, 2);
  put(11, t.hour, 2);
  put(14, t.minute, 2);
  put(17, t.second, 2);
  put(20, t.millis, 3);
  out->append(text, sizeof(text) - 1);
}

std::string FormatIso8601(int64_t unix_ms) {
  std::string out;
  AppendIso8601(&out, unix_ms);
  return out;
}

std::optional<int64_t> ParseIso8601(std::string_view text) {
  Scanner s(text);
  DateTime t;
  unsigned year = 0;
  if (!s.Digits(4, &year) || !s.Literal("-") || !s.Digits(2, &t.month) || !s.Literal("-") ||
      !s.Digits(2, &t.day) || !s.Literal("T") || !s.Time(&t)) {
    return std::nullopt;
  }
  t.year = year;
  if (s.Literal(".")) {
    // 1..9 fraction digits; milliseconds kept, the rest truncated.
    unsigned digit = 0, scale = 100, count = 0;
    while (s.Digits(1, &digit)) {
      if (++count > 9) return std::nullopt;
      t.millis += digit * scale;
      scale /= 10;
    }
    if (count == 0) return std::nullopt;
  }
  if (!s.Literal("Z") || !s.done()) return std::nullopt;
  return Join(t);
}

std::optional<int64_t> ParseIso8601Basic(std::string_view text) {
  Scanner s(text);
  DateTime t;
  unsigned year = 0;
  if (!s.Digits(4, &year) || !s.Digits(2, &t.month) || !s.Digits(2, &t.day) ||
      !s.Literal("T") || !s.Digits(2, &t.hour) || !s.Digits(2, &t.minute) ||
      !s.Digits(2, &t.second) || !s.Literal("Z") || !s.done()) {
    return std::nullopt;
  }
  t.year = year;
  return Join(t);
}

std::string FormatIso8601Basic(int64_t unix_ms) {
  const DateTime t = Split(unix_ms);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04lld%02u%02uT%02u%02u%02uZ", static_cast<long long>(t.year),
                t.month, t.day, t.hour, t.minute, t.second);
  return buf;
}

// ---- Range ------------------------------------------------------------------
namespace {

// Decimal digits, saturating at UINT64_MAX (a first-byte-pos beyond any
// object is then unsatisfiable, a last-byte-pos is clamped, as RFC 7233
// asks). nullopt when `s` is empty or not all digits.
std::optional<uint64_t> ParseRangeNumber(std::string_view s) {
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) {
      v = std::numeric_limits<uint64_t>::max();
    } else {
      v = v * 10 + d;
    }
  }
  return v;
}

}  // namespace

// AWS behaviour (GetObject "Range" and RFC 7233/9110 as S3 applies them):
// a header that does not parse, or that names several ranges (S3 "doesn't
// support retrieving multiple ranges of data per GET request"), is ignored
// and the whole object is served with 200. A first-byte-pos at or beyond the
// size is 416 InvalidRange (s3-tests test_ranged_request_invalid_range and
// test_ranged_request_empty_object: "bytes=40-50" on 11 and 0 bytes). On a
// 0-byte object every "a-b"/"a-" range is 416 (no byte can be selected), but
// a suffix range "-n" with n > 0 is served as the whole, empty object with
// 200: RFC 9110 14.1.1 counts it satisfiable, no valid 206 Content-Range
// exists for it, and AWS answers 200 (Trino's empty-file tail reads rely
// on it). "bytes=-0" selects nothing: 416.
S3Result<std::optional<ByteRange>> ResolveRange(std::string_view header, uint64_t object_size) {
  // S3 names what was asked of what: RangeRequested, ActualObjectSize.
  auto unsatisfiable = [&] {
    return S3Error(S3ErrorCode::kInvalidRange)
        .With("RangeRequested", std::string(TrimOws(header)))
        .With("ActualObjectSize", std::to_string(object_size));
  };
  using Ignored = std::optional<ByteRange>;
  std::string_view spec = TrimOws(header);
  constexpr std::string_view kUnit = "bytes=";
  if (spec.size() < kUnit.size() || LowerCopy(spec.substr(0, kUnit.size())) != kUnit) {
    return Ignored();
  }
  spec = TrimOws(spec.substr(kUnit.size()));
  if (spec.find(',') != std::string_view::npos) return Ignored();
  const size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return Ignored();
  const std::string_view first_text = TrimOws(spec.substr(0, dash));
  const std::string_view last_text = TrimOws(spec.substr(dash + 1));

  if (first_text.empty()) {  // suffix range "-n"
    const auto suffix = ParseRangeNumber(last_text);
    if (!suffix) return Ignored();
    if (*suffix == 0) return unsatisfiable();
    if (object_size == 0) return Ignored();
    const uint64_t length = std::min(*suffix, object_size);
    return Ignored(ByteRange{object_size - length, object_size - 1});
  }
  const auto first = ParseRangeNumber(first_text);
  if (!first) return Ignored();
  std::optional<uint64_t> last;
  if (!last_text.empty()) {
    last = ParseRangeNumber(last_text);
    if (!last || *last < *first) return Ignored();
  }
  if (*first >= object_size) return unsatisfiable();
  const uint64_t end = last ? std::min(*last, object_size - 1) : object_size - 1;
  return Ignored(ByteRange{*first, end});
}

std::string ContentRange(const ByteRange& range, uint64_t object_size) {
  return "bytes " + std::to_string(range.first) + "-" + std::to_string(range.last) + "/" +
         std::to_string(object_size);
}

std::string UnsatisfiedContentRange(uint64_t object_size) {
  return "bytes */" + std::to_string(object_size);
}

// ---- ETags ------------------------------------------------------------------

std::string QuoteEtag(std::string_view hex_md5) { return "\"" + std::string(hex_md5) + "\""; }

std::string MultipartEtag(std::string_view hex_md5_of_part_md5s, size_t part_count) {
  return "\"" + std::string(hex_md5_of_part_md5s) + "-" + std::to_string(part_count) + "\"";
}

std::string_view UnquoteEtag(std::string_view etag) {
  etag = TrimOws(etag);
  if (etag.starts_with("W/")) etag.remove_prefix(2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return etag;
}

bool EtagsMatch(std::string_view a, std::string_view b) { return UnquoteEtag(a) == UnquoteEtag(b); }

// ---- Conditional requests -------------------------------------------------
namespace {

// True when an If-Match / If-None-Match list names `etag` or is "*".
// Entries are split on ',' outside quotes.
bool EtagListMatches(std::string_view list, std::string_view etag) {
  size_t start = 0;
  bool in_quotes = false;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] == '"') in_quotes = !in_quotes;
    if (i == list.size() || (list[i] == ',' && !in_quotes)) {
      const std::string_view item = TrimOws(list.substr(start, i - start));
      if (item == "*" || (!item.empty() && EtagsMatch(item, etag))) return true;
      start = i + 1;
    }
  }
  return false;
}

// An HTTP date header in whole seconds; nullopt when absent or unparseable
// (such headers are ignored, as RFC 7232 3.3/3.4 and AWS do).
std::optional<int64_t> HeaderSeconds(const std::optional<std::string>& header) {
  if (!header) return std::nullopt;
  const auto ms = ParseHttpDate(*header);
  if (!ms) return std::nullopt;
  return FloorDiv(*ms, 1000);
}

}  // namespace

// RFC 7232 section 6 order. AWS documents two combinations for GetObject
// and HeadObject, both implied by it: If-Match true + If-Unmodified-Since
// false -> 200; If-None-Match false + If-Modified-Since true -> 304.
// Last-Modified is sent with second precision, so it compares in seconds.
ConditionOutcome EvaluateReadConditions(const ReadConditions& conditions, std::string_view etag,
                                        int64_t last_modified_ms, int64_t now_ms) {
  const int64_t modified_s = FloorDiv(last_modified_ms, 1000);
  const int64_t now_s = FloorDiv(now_ms, 1000);
  if (conditions.if_match) {
    if (!EtagListMatches(*conditions.if_match, etag)) return ConditionOutcome::kPreconditionFailed;
  } else if (const auto since = HeaderSeconds(conditions.if_unmodified_since)) {
    if (modified_s > *since) return ConditionOutcome::kPreconditionFailed;
  }
  if (conditions.if_none_match) {
    if (EtagListMatches(*conditions.if_none_match, etag)) return ConditionOutcome::kNotModified;
  } else if (const auto since = HeaderSeconds(conditions.if_modified_since);
             since && *since <= now_s) {
    if (modified_s <= *since) return ConditionOutcome::kNotModified;
  }
  return ConditionOutcome::kProceed;
}

std::string_view DecidingCondition(const ReadConditions& conditions, ConditionOutcome outcome) {
  switch (outcome) {
    case ConditionOutcome::kPreconditionFailed:
      return conditions.if_match ? "If-Match" : "If-Unmodified-Since";
    case ConditionOutcome::kNotModified:
      return conditions.if_none_match ? "If-None-Match" : "If-Modified-Since";
    case ConditionOutcome::kProceed: break;
  }
  return {};
}

S3Status CheckWriteConditionHeaders(std::optional<std::string_view> if_match,
                                    std::optional<std::string_view> if_none_match) {
  auto refuse = [](std::string header, std::string why) {
    return S3Error(S3ErrorCode::kNotImplemented)
        .With("Header", std::move(header))
        .With("additionalMessage", std::move(why));
  };
  if (if_match && if_none_match) {
    return refuse("If-Match,If-None-Match",
                  "Multiple conditional request headers present in the request");
  }
  if (if_none_match && TrimOws(*if_none_match) != "*") {
    return refuse("If-None-Match",
                  "We don't accept the provided value of If-None-Match header for this API");
  }
  if (if_match && TrimOws(*if_match) == "*") {
    return refuse("If-Match", "We don't accept the provided value of If-Match header for this API");
  }
  return S3Status::Ok();
}

// CopyObject docs: x-amz-copy-source-if-none-match false together with
// x-amz-copy-source-if-modified-since true -> 412 (not 304), and
// if-match true with if-unmodified-since false -> the copy proceeds.
S3Status CheckCopySourceConditions(const ReadConditions& conditions, std::string_view etag,
                                   int64_t last_modified_ms, int64_t now_ms) {
  const ConditionOutcome outcome =
      EvaluateReadConditions(conditions, etag, last_modified_ms, now_ms);
  if (outcome == ConditionOutcome::kProceed) return S3Status::Ok();
  return PreconditionFailedError("x-amz-copy-source-" +
                                 std::string(DecidingCondition(conditions, outcome)));
}

// ---- Percent-encoding and query strings ------------------------------------
namespace {

constexpr std::string_view kHexUpper = "0123456789ABCDEF";

bool IsAlnum(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

void AppendEscaped(std::string* out, char c) {
  const auto b = static_cast<unsigned char>(c);
  out->push_back('%');
  out->push_back(kHexUpper[b >> 4]);
  out->push_back(kHexUpper[b & 0xF]);
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

// AWS's set, as measured against S3 (keys "a b.txt" -> "a+b.txt",
// "a+b.txt" -> "a%2Bb.txt", "100%.csv" -> "100%25.csv", UTF-8 bytes as
// %XX) and as MinIO's s3URLEncode reproduces it (Go's QueryEscape, but
// '/' and '*' kept and '~' escaped).
std::string UrlEncodeForListing(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (IsAlnum(c) || c == '-' || c == '_' || c == '.' || c == '/' || c == '*') {
      out.push_back(c);
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      AppendEscaped(&out, c);
    }
  }
  return out;
}

// AWS answers a malformed escape in the request URI with 400 InvalidURI
// ("Couldn't parse the specified URI.").
S3Result<std::string> PercentDecode(std::string_view text, bool plus_as_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return S3ErrorCode::kInvalidURI;
      const int hi = HexValue(text[i + 1]);
      const int lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return S3ErrorCode::kInvalidURI;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_as_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string PercentEncode(std::string_view text, bool keep_slash) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (IsAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || (keep_slash && c == '/')) {
      out.push_back(c);
    } else {
      AppendEscaped(&out, c);
    }
  }
  return out;
}

// Query strings decode '+' as a space (form encoding, as S3 reads its
// parameters: "prefix=a+b" lists "a b"); clients that mean a literal '+'
// send %2B.
S3Result<std::vector<QueryParam>> ParseQuery(std::string_view raw) {
  std::vector<QueryParam> params;
  size_t start = 0;
  while (start <= raw.size()) {
    size_t end = raw.find('&', start);
    if (end == std::string_view::npos) end = raw.size();
    const std::string_view part = raw.substr(start, end - start);
    start = end + 1;
    if (part.empty()) continue;
    if (params.size() == limits::kS3QueryParamsMax) {
      return S3Error(S3ErrorCode::kInvalidArgument, "Too many query parameters.");
    }
    QueryParam param;
    const size_t eq = part.find('=');
    param.has_equals = eq != std::string_view::npos;
    auto name = PercentDecode(part.substr(0, eq), /*plus_as_space=*/true);
    if (!name.ok()) return name.error();
    param.name = std::move(name).value();
    if (param.has_equals) {
      auto value = PercentDecode(part.substr(eq + 1), /*plus_as_space=*/true);
      if (!value.ok()) return value.error();
      param.value = std::move(value).value();
    }
    params.push_back(std::move(param));
  }
  return params;
}

const QueryParam* FindQueryParam(std::span<const QueryParam> params, std::string_view name) {
  for (const QueryParam& p : params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// ---- Metadata and headers --------------------------------------------------

bool HeaderNameEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

// AWS: "Within the PUT request header, the user-defined metadata is limited
// to 2 KB in size. The size of user-defined metadata is measured by taking
// the sum of the number of bytes in the UTF-8 encoding of each key and
// value." We count the key without its "x-amz-meta-" prefix (the key as the
// SDKs expose it); the limit is limits::kS3UserMetadataBytesMax.
S3Result<std::vector<HeaderField>> CollectUserMetadata(std::span<const HeaderField> headers) {
  constexpr std::string_view kPrefix = "x-amz-meta-";
  std::map<std::string, std::string> joined;
  for (const auto& [name, value] : headers) {
    const bool is_meta =
        name.size() >= kPrefix.size() && HeaderNameEquals(name.substr(0, kPrefix.size()), kPrefix);
    if (!is_meta) continue;
    if (name.size() == kPrefix.size()) {
      return S3Error(S3ErrorCode::kInvalidArgument, "User metadata names must not be empty.");
    }
    std::string lower = LowerCopy(name);
    auto [it, inserted] = joined.try_emplace(std::move(lower), value);
    if (!inserted) it->second += "," + value;
  }
  size_t bytes = 0;
  std::vector<HeaderField> out;
  out.reserve(joined.size());
  for (auto& [name, value] : joined) {
    bytes += name.size() - kPrefix.size() + value.size();
    out.emplace_back(name, std::move(value));
  }
  if (bytes > limits::kS3UserMetadataBytesMax) {
    return S3Error(S3ErrorCode::kMetadataTooLarge)
        .With("Size", std::to_string(bytes))
        .With("MaxSizeAllowed", std::to_string(limits::kS3UserMetadataBytesMax));
  }
  return out;
}

std::vector<HeaderField> ResponseHeaderOverrides(std::span<const QueryParam> params) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kOverrides = {{
      {"response-content-type", "Content-Type"},
      {"response-content-language", "Content-Language"},
      {"response-expires", "Expires"},
      {"response-cache-control", "Cache-Control"},
      {"response-content-disposition", "Content-Disposition"},
      {"response-content-encoding", "Content-Encoding"},
  }};
  std::vector<HeaderField> out;
  for (const QueryParam& p : params) {
    for (const auto& [param, header_name] : kOverrides) {
      if (p.name != param) continue;
      const std::string_view header = header_name;  // a binding clang 14 cannot capture
      const bool seen = std::any_of(out.begin(), out.end(),
                                    [&](const HeaderField& h) { return h.first == header; });
      if (!seen) out.emplace_back(std::string(header), p.value);
    }
  }
  return out;
}

S3Status CheckFieldCharacters(std::span<const HeaderField> headers,
                              std::span<const QueryParam> params) {
  const auto refuse = [](std::string_view what, std::string_view name) {
    return S3Error(S3ErrorCode::kInvalidArgument, std::string(what) + " contains a control character.")
        .With("ArgumentName", IsWritableFieldName(name) ? std::string(name) : std::string("(header name)"));
  };
  for (const auto& [name, value] : headers) {
    if (!IsWritableFieldName(name)) return refuse("A header name", name);
    if (!IsWritableFieldValue(value)) return refuse("The value of a header", name);
  }
  for (const auto& [header, value] : ResponseHeaderOverrides(params)) {
    if (!IsWritableFieldValue(value)) return refuse("A response header override", header);
  }
  return S3Status::Ok();
}

namespace {

// Calls `fn(item)` for each trimmed, non-empty item of a comma list.
template <typename Fn>
void ForEachListItem(std::string_view list, Fn&& fn) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    const std::string_view item = TrimOws(list.substr(start, end - start));
    if (!item.empty()) fn(item);
    start = end + 1;
  }
}

}  // namespace

bool HasAwsChunked(std::string_view content_encoding) {
  bool found = false;
  ForEachListItem(content_encoding, [&](std::string_view item) {
    if (HeaderNameEquals(item, "aws-chunked")) found = true;
  });
  return found;
}

std::optional<std::string> StripAwsChunked(std::string_view content_encoding) {
  if (!HasAwsChunked(content_encoding)) {
    const std::string_view trimmed = TrimOws(content_encoding);
    if (trimmed.empty()) return std::nullopt;
    return std::string(trimmed);
  }
  std::string out;
  ForEachListItem(content_encoding, [&](std::string_view item) {
    if (HeaderNameEquals(item, "aws-chunked")) return;
    if (!out.empty()) out += ",";
    out += item;
  });
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace tessera::s3
