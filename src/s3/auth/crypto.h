// Internal to s3/auth: the hash and MAC primitives (OpenSSL) that SigV4,
// SigV2 and the aws-chunked verifier share. Raw byte strings in and out.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace tessera::s3::auth {

std::string Sha256(std::string_view data);                          // 32 bytes
std::string HmacSha256(std::string_view key, std::string_view data);  // 32 bytes
std::string HmacSha1(std::string_view key, std::string_view data);    // 20 bytes
// Equality whose running time does not depend on where a and b differ
// (only on their lengths).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace tessera::s3::auth
