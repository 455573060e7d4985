// The bodies of the S3 object workload: every body is derived from (key,
// write id), so every byte a GET returns can be checked without keeping
// what was written.
//
//   "tessera-experiment key=<key> write=<write id> bytes=<size>\n"
//   then a fill of pseudo-random bytes seeded by (key, write id)
//
// The size is drawn from [min_bytes, max_bytes] by the same seed (never
// less than the header line), so a HEAD's Content-Length is checkable too.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tessera::experiment {

// The size of the body of (key, write id) in [min_bytes, max_bytes]
// (raised to the header line's length when that is longer).
uint64_t ObjectBodySize(std::string_view key, std::string_view write_id, uint64_t min_bytes,
                        uint64_t max_bytes);

// The body of (key, write id), of ObjectBodySize bytes.
std::string ObjectBody(std::string_view key, std::string_view write_id, uint64_t min_bytes,
                       uint64_t max_bytes);

// The write id of a body read from `key`: Corruption when the header line
// is missing or malformed, names another key, states another size, or a
// byte of the fill differs (the message gives the first offset).
Result<std::string> VerifyObjectBody(std::string_view key, std::string_view body);

// CopyObject: a copy's write id is a source write id (a write id ending in
// kCopySourceMark), written first to its own source key under
// `sources_prefix` and copied from there, body and metadata alike; so the
// body an object holds after a copy names the source key.
inline constexpr char kCopySourceMark = 's';
bool IsCopySourceWriteId(std::string_view write_id);
std::string CopySourceKey(std::string_view sources_prefix, std::string_view write_id);
// The key the body of `write_id` names when read from `key`: the source
// key for a copy, `key` itself otherwise.
std::string BodyKeyOf(std::string_view key, std::string_view write_id,
                      std::string_view sources_prefix);

}  // namespace tessera::experiment
