// The little JSON the router's HTTP API speaks: writing strings and byte
// strings, and reading a flat object of string members (a PUT body
// {"value": "..."}). No general JSON library is among our dependencies
// (Boost.JSON arrived in 1.75; Debian ships 1.74).
//
// Thread safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tessera::router {

bool IsValidUtf8(std::string_view bytes);

// `text` (valid UTF-8) as a quoted JSON string, with ", \ and control
// characters escaped.
std::string JsonQuote(std::string_view text);

// A byte string as one JSON member: `"name":"<text>"` when the bytes are
// valid UTF-8, else `"name_base64":"<base64>"`.
std::string JsonBytesMember(std::string_view name, std::string_view bytes);

// {"error": message, "code": code_name} plus a newline.
std::string JsonError(std::string_view message, std::string_view code_name);

// Parses `{"a": "x", "b": "y"}`: an object whose members are all strings
// (escapes including \uXXXX and surrogate pairs decoded to UTF-8).
// InvalidArgument for anything else.
Result<std::map<std::string, std::string>> ParseJsonStringObject(std::string_view text);

}  // namespace tessera::router
