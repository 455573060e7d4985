// The bytes of one HttpServer response: status line, headers and body,
// in one contiguous buffer, written with one send instead of going through
// Beast's serializer (D38).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "http/http_server.h"

namespace tessera::http {

struct ResponseFraming {
  unsigned version = 11;   // of the request: 10 or 11
  bool keep_alive = true;  // Connection header as HTTP/1.0 or 1.1 needs it
  bool head = false;       // a HEAD answer: Content-Length of the body, no body
  std::string_view server_name;
};

// HTTP/1.x response: "HTTP/1.1 <status> <reason>", Server, Content-Type
// (unless empty), `response.headers` in order, Connection when the version's
// default differs from `keep_alive`, Content-Length (not for 1xx, 204 and
// 304, which also carry no body), a blank line and the body. A header that
// fails IsWritableFieldName/Value (common/http_field_chars.h; Content-Type
// too) is left out (no response splitting) and counted in `*dropped` when it
// is not null.
std::string SerializeResponse(const Response& response, const ResponseFraming& framing,
                              size_t* dropped = nullptr);

}  // namespace tessera::http
