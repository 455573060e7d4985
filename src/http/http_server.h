// HttpServer: a small HTTP/1.1 server on Boost.Beast for metrics, health,
// admin pages and the routers' HTTP APIs (S3, KV).
//
// Contract:
//  1. Start binds host:port (port 0: any free port, see port()) and accepts
//     in the background on the io_context the caller runs.
//  2. Each request is read whole (header, then body) and handed to the one
//     Handler with a Respond. Requests of one connection are handled one at
//     a time, in order (keep-alive; the next request is read after the
//     response is written). Different connections are handled concurrently
//     on the io threads. The handler must not block; it may answer later,
//     from any thread, by calling Respond exactly once (a second call is a
//     bug, CHECKed). A Respond destroyed unanswered sends 500.
//  3. Bounds (limits.h, "http"): a request line + header above
//     header_bytes_max gets 431, a body above body_bytes_max (by
//     Content-Length or as it streams) gets 413, an unparsable request 400;
//     the connection is then closed. Beyond connections_max open
//     connections, new ones are closed at once. An idle connection (no
//     request bytes for idle_timeout_ms) is closed.
//  4. "Expect: 100-continue" is answered with "100 Continue" before the
//     body is read (S3 clients send it on PUT). HEAD responses carry the
//     Content-Length of the body but not the body.
//  5. Responses carry Content-Length; "Connection: close" from either side
//     closes the connection after the response.
//  6. Stop (also run by the destructor) closes the listening socket and
//     every connection and returns once they are gone: afterwards no handler
//     starts, and Responds still held become no-ops. A handler already
//     running when Stop is called finishes first.
//  7. With a head_check, every request's head (method, target, headers; no
//     body) is first given to it, before "100 Continue" and before any body
//     byte is read: a Response it returns is sent instead, and the
//     connection closes after it without reading the body (authentication
//     before the body: an unauthenticated client cannot make the server
//     buffer body_bytes_max).
//  8. With tls, the server speaks only TLS (1.2 or 1.3, tls_context.h):
//     each connection completes its handshake within idle_timeout_ms
//     before its first request is read, or is closed. Run a second server
//     for a plain listener beside it.
//
// Thread safety: Start once, from one thread; port, stats and Respond from
// any thread; Stop and the destructor from any thread that is not running
// the io_context, while the io_context runs (or after it has stopped).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/limits.h"
#include "common/status.h"
#include "http/headers.h"
#include "http/tls_context.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace tessera::http {

namespace internal {
class HttpServerCore;
}  // namespace internal

struct Request {
  std::string method;          // "GET", "PUT"... as sent
  std::string target;          // request target as sent: "/path?query"
  std::string path;            // target before '?', not percent-decoded
  std::string query;           // target after '?', not decoded; empty if none
  Headers headers;             // in order received, names as sent
  std::string body;
  std::string remote_address;  // "ip:port"

  // The first header named `name` (case-insensitive), or nullopt.
  std::optional<std::string_view> Header(std::string_view name) const;
};

struct Response {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";  // empty: no Content-Type
  Headers headers;  // extra headers (not Content-Length, which the server sets)
  std::string body;
  bool close = false;  // close the connection after this response

  static Response Text(unsigned status, std::string body);
  static Response Json(unsigned status, std::string body);
};

// Answers one request. Copyable; copies share the one answer.
using Respond = std::function<void(Response)>;
using Handler = std::function<void(Request, Respond)>;
// Contract 7: nullopt to read the body and call the Handler. Runs on the
// connection's executor: must not block.
using HeadCheck = std::function<std::optional<Response>(const Request& head)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";  // an IP address literal
  uint16_t port = 0;               // 0: any free port
  size_t header_bytes_max = limits::kHttpHeaderBytesMax;  // <= the limit
  size_t body_bytes_max = limits::kHttpBodyBytesMax;      // <= the limit
  size_t connections_max = limits::kHttpConnectionsMax;   // <= the limit
  uint32_t idle_timeout_ms = 60'000;   // waiting for (the rest of) a request
  uint32_t write_timeout_ms = 30'000;  // writing one response
  std::string server_name = "tessera";  // the Server header
  // How many threads run the io_context: exactly 1 lets connections use its
  // executor instead of a strand each (ConnectionExecutor); 0: unknown.
  unsigned io_threads = 0;
  HeadCheck head_check;  // contract 7; empty: none
  // Contract 8: every connection is TLS with this certificate and key.
  std::optional<TlsFiles> tls;
};

// Monotonic counters since Start, and current levels.
struct HttpServerStats {
  uint64_t connections_accepted = 0;
  uint64_t connections_refused = 0;  // beyond connections_max
  uint64_t connections_open = 0;
  uint64_t requests = 0;             // handed to the handler
  uint64_t rejected = 0;             // answered 400/413/431 by the server
  uint64_t refused_at_head = 0;      // answered by head_check, body unread
};

class HttpServer {
 public:
  // `io` must outlive the server; `handler` must be non-empty.
  HttpServer(boost::asio::io_context& io, HttpServerOptions options, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Validates the options, binds and listens. InvalidArgument for bad
  // options or a second call, IOError when the address cannot be bound.
  Status Start();
  // The bound port after a successful Start; 0 before.
  uint16_t port() const;
  HttpServerStats stats() const;
  // See contract 6. Idempotent.
  void Stop();

 private:
  std::shared_ptr<internal::HttpServerCore> impl_;
};

}  // namespace tessera::http
