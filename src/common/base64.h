// Standard base64 (RFC 4648: '+' '/', '=' padding), the encoding of S3
// checksum values in headers, XML and stored records.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace tessera {

std::string Base64Encode(std::string_view raw);
// Strict: length a multiple of 4, the standard alphabet, correct padding,
// zero unused bits. Anything else -> InvalidArgument.
Result<std::string> Base64Decode(std::string_view text);

}  // namespace tessera
