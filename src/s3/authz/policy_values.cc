#include "s3/authz/policy_values.h"

#include <arpa/inet.h>

#include <charconv>
#include <cmath>
#include <string>

#include "s3/protocol/http_rules.h"

namespace tessera::s3::authz {
namespace {

// `count` digits at text[*pos] as a number; advances *pos.
std::optional<unsigned> Digits(std::string_view text, size_t* pos, size_t count) {
  if (*pos + count > text.size()) return std::nullopt;
  unsigned value = 0;
  for (size_t i = 0; i < count; ++i) {
    const char c = text[*pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  *pos += count;
  return value;
}

bool Take(std::string_view text, size_t* pos, char c) {
  if (*pos < text.size() && text[*pos] == c) {
    ++*pos;
    return true;
  }
  return false;
}

// "[T]HH:MM[:SS[.fff]]" and the zone, after the date; seconds of the day
// minus the zone offset.
std::optional<double> TimeOfDay(std::string_view text, size_t pos) {
  if (pos == text.size()) return 0.0;
  if (!Take(text, &pos, 'T') && !Take(text, &pos, 't')) return std::nullopt;
  auto h = Digits(text, &pos, 2);
  if (!h || !Take(text, &pos, ':')) return std::nullopt;
  auto m = Digits(text, &pos, 2);
  if (!m || *h > 23 || *m > 59) return std::nullopt;
  double seconds = *h * 3600.0 + *m * 60.0;
  if (Take(text, &pos, ':')) {
    auto s = Digits(text, &pos, 2);
    if (!s || *s > 60) return std::nullopt;
    seconds += *s;
    if (Take(text, &pos, '.')) {
      double scale = 0.1;
      const size_t start = pos;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        seconds += (text[pos++] - '0') * scale;
        scale /= 10;
      }
      if (pos == start) return std::nullopt;
    }
  }
  if (Take(text, &pos, 'Z') || Take(text, &pos, 'z')) return pos == text.size() ? std::optional(seconds) : std::nullopt;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const double sign = text[pos++] == '+' ? 1 : -1;
    auto zh = Digits(text, &pos, 2);
    Take(text, &pos, ':');
    auto zm = Digits(text, &pos, 2);
    if (!zh || !zm || pos != text.size()) return std::nullopt;
    return seconds - sign * (*zh * 3600.0 + *zm * 60.0);
  }
  return pos == text.size() ? std::optional(seconds) : std::nullopt;
}

}  // namespace

std::optional<bool> ParseBoolText(std::string_view text) {
  if (text.size() == 4 && (text[0] | 0x20) == 't' && (text[1] | 0x20) == 'r' &&
      (text[2] | 0x20) == 'u' && (text[3] | 0x20) == 'e') {
    return true;
  }
  if (text.size() == 5 && (text[0] | 0x20) == 'f' && (text[1] | 0x20) == 'a' &&
      (text[2] | 0x20) == 'l' && (text[3] | 0x20) == 's' && (text[4] | 0x20) == 'e') {
    return false;
  }
  return std::nullopt;
}

std::optional<double> ParseNumber(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  if (text.front() == '+') text.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<double> ParseDate(std::string_view text) {
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos) {
    return ParseNumber(text);  // epoch seconds
  }
  size_t pos = 0;
  auto y = Digits(text, &pos, 4);
  if (!y || !Take(text, &pos, '-')) return std::nullopt;
  auto m = Digits(text, &pos, 2);
  if (!m || !Take(text, &pos, '-')) return std::nullopt;
  auto d = Digits(text, &pos, 2);
  if (!d || *m < 1 || *m > 12 || *d < 1 || *d > 31) return std::nullopt;
  auto time = TimeOfDay(text, pos);
  if (!time) return std::nullopt;
  return static_cast<double>(DaysFromCivil(*y, *m, *d)) * 86400.0 + *time;
}

std::optional<Cidr> ParseCidr(std::string_view text) {
  if (text.size() > 64) return std::nullopt;
  std::string address(text.substr(0, text.find('/')));
  if (address.size() > 2 && address.front() == '[' && address.back() == ']') {
    address = address.substr(1, address.size() - 2);
  }
  Cidr out;
  if (inet_pton(AF_INET, address.c_str(), out.bytes.data()) == 1) {
    out.prefix_bits = 32;
  } else if (inet_pton(AF_INET6, address.c_str(), out.bytes.data()) == 1) {
    static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::equal(kMapped, kMapped + 12, out.bytes.begin())) {
      std::copy(out.bytes.begin() + 12, out.bytes.end(), out.bytes.begin());
      std::fill(out.bytes.begin() + 4, out.bytes.end(), 0);
      out.prefix_bits = 32;
    } else {
      out.v6 = true;
      out.prefix_bits = 128;
    }
  } else {
    return std::nullopt;
  }
  const size_t slash = text.find('/');
  if (slash != std::string_view::npos) {
    const std::string_view bits = text.substr(slash + 1);
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(bits.data(), bits.data() + bits.size(), n);
    if (bits.empty() || ec != std::errc() || end != bits.data() + bits.size() ||
        n > out.prefix_bits) {
      return std::nullopt;
    }
    out.prefix_bits = n;
  }
  return out;
}

bool InCidr(std::string_view ip, const Cidr& block) {
  if (ip.find('/') != std::string_view::npos) return false;
  auto address = ParseCidr(ip);
  if (!address || address->v6 != block.v6) return false;
  for (unsigned bit = 0; bit < block.prefix_bits; ++bit) {
    const unsigned byte = bit / 8, mask = 0x80u >> (bit % 8);
    if ((address->bytes[byte] & mask) != (block.bytes[byte] & mask)) return false;
  }
  return true;
}

}  // namespace tessera::s3::authz
