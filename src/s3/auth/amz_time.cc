#include "s3/auth/amz_time.h"

#include <array>
#include <cstdio>

namespace tessera::s3::auth {
namespace {

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<std::string_view, 7> kWeekdays = {"Thu", "Fri", "Sat", "Sun",
                                                       "Mon", "Tue", "Wed"};  // 1970-01-01 first

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

struct Civil {
  int64_t year;
  unsigned month, day;
};

Civil CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<int64_t>(yoe) + era * 400 + (m <= 2), m, d};
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned DaysInMonth(int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Parses exactly `width` decimal digits.
std::optional<unsigned> Digits(std::string_view text, size_t pos, size_t width) {
  if (pos + width > text.size()) return std::nullopt;
  unsigned v = 0;
  for (size_t i = pos; i < pos + width; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(text[i] - '0');
  }
  return v;
}

std::optional<int64_t> Compose(unsigned y, unsigned mo, unsigned d, unsigned h, unsigned mi,
                               unsigned s) {
  if (mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, mo)) return std::nullopt;
  if (h > 23 || mi > 59 || s > 60) return std::nullopt;  // 60: a leap second
  return DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
}

}  // namespace

std::optional<int64_t> ParseAmzDate(std::string_view t) {
  if (t.size() != 16 || t[8] != 'T' || t[15] != 'Z') return std::nullopt;
  auto y = Digits(t, 0, 4), mo = Digits(t, 4, 2), d = Digits(t, 6, 2);
  auto h = Digits(t, 9, 2), mi = Digits(t, 11, 2), s = Digits(t, 13, 2);
  if (!y || !mo || !d || !h || !mi || !s) return std::nullopt;
  return Compose(*y, *mo, *d, *h, *mi, *s);
}

std::string FormatAmzDate(int64_t unix_s) {
  const int64_t days = unix_s >= 0 ? unix_s / 86400 : (unix_s - 86399) / 86400;
  const int64_t secs = unix_s - days * 86400;
  const Civil c = CivilFromDays(days);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04lld%02u%02uT%02lld%02lld%02lldZ",
                static_cast<long long>(c.year), c.month, c.day,
                static_cast<long long>(secs / 3600), static_cast<long long>(secs / 60 % 60),
                static_cast<long long>(secs % 60));
  return buf;
}

std::optional<int64_t> ParseHttpDate(std::string_view t) {
  // "Fri, 24 May 2013 00:00:00 GMT": weekday and comma, then five fields
  // separated by single spaces (the day may have one digit).
  const size_t comma = t.find(", ");
  if (comma == std::string_view::npos || comma > 9) return std::nullopt;
  t.remove_prefix(comma + 2);
  std::array<std::string_view, 5> f;
  for (size_t i = 0; i < f.size(); ++i) {
    const size_t sp = i + 1 < f.size() ? t.find(' ') : t.size();
    if (sp == std::string_view::npos) return std::nullopt;
    f[i] = t.substr(0, sp);
    t.remove_prefix(sp == t.size() ? sp : sp + 1);
  }
  const std::string_view zone = f[4];
  if (zone != "GMT" && zone != "UTC" && zone != "Z" && zone != "+0000") return std::nullopt;
  auto d = Digits(f[0], 0, f[0].size());
  auto y = Digits(f[2], 0, 4);
  const std::string_view hms = f[3];
  if (f[0].empty() || f[0].size() > 2 || f[2].size() != 4 || hms.size() != 8 || hms[2] != ':' ||
      hms[5] != ':') {
    return std::nullopt;
  }
  auto h = Digits(hms, 0, 2), mi = Digits(hms, 3, 2), s = Digits(hms, 6, 2);
  unsigned mo = 0;
  for (unsigned i = 0; i < kMonths.size(); ++i) {
    if (kMonths[i] == f[1]) mo = i + 1;
  }
  if (!d || !y || !h || !mi || !s || mo == 0) return std::nullopt;
  return Compose(*y, mo, *d, *h, *mi, *s);
}

std::string FormatHttpDate(int64_t unix_s) {
  const int64_t days = unix_s >= 0 ? unix_s / 86400 : (unix_s - 86399) / 86400;
  const int64_t secs = unix_s - days * 86400;
  const Civil c = CivilFromDays(days);
  const int64_t wd = ((days % 7) + 7) % 7;
  char buf[80];
  std::snprintf(buf, sizeof(buf), "%s, %02u %s %04lld %02lld:%02lld:%02lld GMT",
                std::string(kWeekdays[wd]).c_str(), c.day,
                std::string(kMonths[c.month - 1]).c_str(), static_cast<long long>(c.year),
                static_cast<long long>(secs / 3600), static_cast<long long>(secs / 60 % 60),
                static_cast<long long>(secs % 60));
  return buf;
}

std::optional<int64_t> ParseAnyDate(std::string_view text) {
  if (auto t = ParseAmzDate(text)) return t;
  return ParseHttpDate(text);
}

}  // namespace tessera::s3::auth
