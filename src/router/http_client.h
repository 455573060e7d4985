// HttpClient: a small synchronous HTTP/1.1 client on Boost.Beast, for the
// `tessera kv ...` commands and tests. One keep-alive connection, reopened
// when the server closed it.
//
// Thread safety: none; one client per thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace tessera::router {

struct HttpReply {
  unsigned status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The first header named `name` (case-insensitive), or "".
  std::string Header(std::string_view name) const;
};

class HttpClient {
 public:
  HttpClient(std::string host, uint16_t port,
             std::chrono::milliseconds timeout = std::chrono::seconds(10));
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends one request and reads the reply. Unavailable when the server
  // cannot be reached, Timeout when it does not answer within the timeout.
  // A failure's send_outcome (common/status.h) is kNotSent when no byte of
  // the request was handed to any connection (the server cannot have seen
  // it), else kSentOutcomeUnknown.
  Result<HttpReply> Request(const std::string& method, const std::string& target,
                            const std::vector<std::pair<std::string, std::string>>& headers = {},
                            const std::string& body = "");

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::router
