// The typed values of policy conditions: booleans, numbers, dates (ISO 8601
// or seconds since the epoch) and IP addresses / CIDR blocks (IPv4 and
// IPv6), parsed from the text a policy or a request carries.
//
// Pure functions; thread safety: stateless.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera::s3::authz {

// "true" / "false", any case.
std::optional<bool> ParseBoolText(std::string_view text);
// A decimal number (integer or fraction, optional sign).
std::optional<double> ParseNumber(std::string_view text);
// Seconds since the epoch (may have a fraction): "2026-12-07",
// "2026-12-07T10:00:00Z", "2026-12-07T10:00:00.5+01:00", or digits
// (epoch seconds).
std::optional<double> ParseDate(std::string_view text);

// An address (IPv4 as its 4 bytes; an IPv4-mapped IPv6 address is IPv4)
// with a prefix length: a CIDR block, or one address at full length.
struct Cidr {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};
  unsigned prefix_bits = 0;
};
std::optional<Cidr> ParseCidr(std::string_view text);
// Whether the address `ip` (no prefix; "[::1]" brackets allowed) lies in `block`.
bool InCidr(std::string_view ip, const Cidr& block);

}  // namespace tessera::s3::authz
