// Internal to s3/auth: the dates of S3 authentication in unix SECONDS, as
// thin wrappers over the one implementation of civil-date arithmetic and
// date parsing in s3/protocol/http_rules.h (which works in milliseconds).
// What auth adds is leniency the Date header needs in practice: RFC 1123
// with a zone of UTC, Z or a numeric offset (s3cmd and AWS's own SigV2
// examples send +0000, `date -R` outside UTC sends e.g. +0800, botocore a
// Date set by the caller -0000) and a one-digit day, each read as the
// instant it means.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "s3/protocol/s3_result.h"

namespace tessera::s3::auth {

// "20130524T000000Z" (ISO 8601 basic, as x-amz-date and X-Amz-Date carry).
std::optional<int64_t> ParseAmzDate(std::string_view text);
std::string FormatAmzDate(int64_t unix_s);

// RFC 1123 "Fri, 24 May 2013 00:00:00 GMT" (the Date header), also with
// the zone UTC, Z or +hhmm/-hhmm or a one-digit day; the RFC 850 and asctime
// forms http_rules accepts are accepted too. Sub-second parts never occur.
std::optional<int64_t> ParseHttpDate(std::string_view text);
std::string FormatHttpDate(int64_t unix_s);

// "2013-05-24T00:20:00Z": the times S3's auth errors name (ServerTime,
// Expires).
std::string FormatIsoSeconds(int64_t unix_s);

// Either of the two formats.
std::optional<int64_t> ParseAnyDate(std::string_view text);

// RequestTimeTooSkewed when the request's time (`request_s`, sent as
// `request_time`) is more than `max_skew_s` from `now_s`, naming
// RequestTime, ServerTime and MaxAllowedSkewMilliseconds as S3 does.
S3Status CheckClockSkew(int64_t request_s, std::string_view request_time, int64_t now_s,
                        int64_t max_skew_s);

}  // namespace tessera::s3::auth
