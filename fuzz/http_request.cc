// Fuzz target: an HTTP/1.1 request as the servers read it: Beast's request
// parser with the servers' head bound, fed in fuzz-chosen pieces, then the
// router's parsing of what it routes on: the KV API target
// (router/uri.h ParseKvTarget) and the S3 front's query and path decoding
// (s3/protocol/http_rules.h), and the S3 entry check on header characters.
// Byte 0 seeds the piece sizes; the rest is the request.
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/http_field_chars.h"
#include "common/limits.h"
#include "fuzz/fuzz_input.h"
#include "router/uri.h"
#include "s3/protocol/http_rules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace http = boost::beast::http;
  tessera::fuzz::FuzzInput in(data, size);
  uint32_t seed = in.Byte() | 1u;
  const std::string_view bytes = in.Rest();
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(tessera::limits::kHttpHeaderBytesMax));
  parser.body_limit(64 << 10);
  parser.eager(true);
  // As a connection reads: bytes arrive in pieces, and what the parser did
  // not consume yet (a head is parsed only once it is whole) is offered
  // again with the next piece.
  size_t fed = 0;     // consumed by the parser
  size_t window = 0;  // arrived, not consumed
  boost::beast::error_code ec;
  while (fed < bytes.size() && !parser.is_done()) {
    seed = seed * 1103515245u + 12345u;
    window = std::min<size_t>(window + 1 + (seed >> 16) % 512, bytes.size() - fed);
    const size_t used = parser.put(boost::asio::buffer(bytes.data() + fed, window), ec);
    fed += used;
    window -= used;
    if (ec == http::error::need_more) {
      ec = {};
      if (used == 0 && window == bytes.size() - fed) break;  // the rest is an incomplete message
      continue;
    }
    if (ec) return 0;
  }
  if (!parser.is_header_done()) return 0;
  const auto& request = parser.get();
  const std::string target(request.target());
  (void)tessera::router::ParseKvTarget(target);
  const size_t question = target.find('?');
  const std::string path = target.substr(0, question);
  const std::string query = question == std::string::npos ? "" : target.substr(question + 1);
  (void)tessera::s3::PercentDecode(path, /*plus_as_space=*/false);
  auto params = tessera::s3::ParseQuery(query);
  std::vector<tessera::s3::HeaderField> headers;
  for (const auto& field : request) {
    headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  if (params.ok()) {
    const bool accepted = tessera::s3::CheckFieldCharacters(headers, *params).ok();
    // What the entry check accepts can be written back as it came.
    if (accepted) {
      for (const auto& [name, value] : headers) {
        if (!tessera::IsWritableFieldName(name) || !tessera::IsWritableFieldValue(value)) __builtin_trap();
      }
      for (const auto& [name, value] : tessera::s3::ResponseHeaderOverrides(*params)) {
        if (!tessera::IsWritableFieldValue(value)) __builtin_trap();
      }
    }
  }
  return 0;
}
