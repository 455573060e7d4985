#include "http/response_wire.h"

#include <boost/beast/http/status.hpp>

#include "common/http_field_chars.h"

namespace tessera::http {
namespace {

void AppendHeader(std::string& out, std::string_view name, std::string_view value) {
  out.append(name).append(": ").append(value).append("\r\n");
}

}  // namespace

std::string SerializeResponse(const Response& response, const ResponseFraming& framing,
                              size_t* dropped) {
  const unsigned status = response.status;
  const bool bodiless = status / 100 == 1 || status == 204 || status == 304;
  const bool send_body = !bodiless && !framing.head;
  std::string out;
  out.reserve(128 + response.content_type.size() + (send_body ? response.body.size() : 0));
  out.append(framing.version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
  out.append(std::to_string(status)).append(" ");
  const auto reason =
      boost::beast::http::obsolete_reason(static_cast<boost::beast::http::status>(status));
  out.append(reason.data(), reason.size());
  out.append("\r\n");
  AppendHeader(out, "Server", framing.server_name);
  size_t left_out = 0;
  if (!response.content_type.empty()) {
    if (IsWritableFieldValue(response.content_type)) {
      AppendHeader(out, "Content-Type", response.content_type);
    } else {
      ++left_out;
    }
  }
  for (const auto& [name, value] : response.headers) {
    if (!IsWritableFieldName(name) || !IsWritableFieldValue(value)) {
      ++left_out;
      continue;
    }
    AppendHeader(out, name, value);
  }
  if (framing.version == 10 && framing.keep_alive) AppendHeader(out, "Connection", "keep-alive");
  if (framing.version != 10 && !framing.keep_alive) AppendHeader(out, "Connection", "close");
  if (!bodiless) AppendHeader(out, "Content-Length", std::to_string(response.body.size()));
  out.append("\r\n");
  if (send_body) out.append(response.body);
  if (dropped != nullptr) *dropped = left_out;
  return out;
}

}  // namespace tessera::http
