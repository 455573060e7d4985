// Internal to s3/auth: the date formats of S3 authentication, converted
// without a clock or time zone database (UTC only).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::s3::auth {

// "20130524T000000Z" (ISO 8601 basic, as x-amz-date and X-Amz-Date carry).
std::optional<int64_t> ParseAmzDate(std::string_view text);
std::string FormatAmzDate(int64_t unix_s);

// RFC 1123 "Fri, 24 May 2013 00:00:00 GMT" (the Date header). The zone may
// be GMT, UTC, Z or +0000 (s3cmd sends +0000); the weekday is not checked.
std::optional<int64_t> ParseHttpDate(std::string_view text);
std::string FormatHttpDate(int64_t unix_s);

// Either of the two formats.
std::optional<int64_t> ParseAnyDate(std::string_view text);

}  // namespace tessera::s3::auth
