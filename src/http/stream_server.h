// StreamServer: an HTTP/1.1 server (plain and/or TLS) that never buffers a
// whole request or response body. The S3 front serves objects of up to
// 5 GiB through it with bounded memory per request. (HttpServer, beside it,
// reads whole bodies and stays the server for metrics, health and the KV
// JSON API.)
//
// Contract:
//  1. Start binds the plain listener (options.http_port) and/or the TLS
//     listener (options.https_port, certificate and key from PEM files,
//     TLS 1.2 or later) on host; port 0 picks any free port (see
//     http_port()/https_port()), nullopt disables that listener. At least
//     one listener must be enabled.
//  2. Per connection, requests are handled one at a time: the handler is
//     called with a fresh Exchange as soon as a request head (request line +
//     header fields) has been read, before any of its body. The next request
//     of the connection is read only after this exchange's response finished
//     (keep-alive) and its request body was consumed (see 5).
//  3. The handler reads the body piecewise with Exchange::ReadBody and
//     answers with either Respond (small, whole body) or StartResponse +
//     WriteBody* + FinishResponse (streamed, with backpressure). Exactly one
//     of Respond / StartResponse per exchange. An Exchange dropped without a
//     response answers 500; one dropped mid-stream closes the connection
//     (the client sees a truncated response, never a complete wrong one).
//  4. Request body: chunked transfer-encoding is decoded; Content-Length is
//     enforced (a client closing early is an error to ReadBody); a request
//     with neither has an empty body. "Expect: 100-continue" is answered
//     with "100 Continue" by the FIRST ReadBody call, never earlier (the S3
//     front authenticates first), and never once a response was started.
//     Bodies above body_bytes_max: 413 (by Content-Length, before the
//     handler) or a ReadBody error (chunked, as it streams).
//  5. A response finished before the request body was fully read: if the
//     rest is known (Content-Length) and at most drain_bytes_max, it is read
//     and discarded after the response and the connection is kept;
//     otherwise the response carries "Connection: close", and after it the
//     server discards incoming bytes for a short bounded linger
//     (limits.h) and closes. A leftover body is never parsed as a request.
//  6. Bounds (limits.h, "http streaming and TLS"): a request head above
//     header_bytes_max, an unparsable head, an unsupported transfer coding
//     or a too large Content-Length get an error response rendered by
//     options.on_protocol_error (the S3 front answers its XML) and the
//     connection closes; the handler is not called. Beyond connections_max
//     open connections (both listeners together) new ones are closed at
//     once. Any single read or write (TLS handshake, next request head, one
//     body piece, one response write) not done within idle_timeout_ms
//     closes the connection: pending calls then fail (Timeout). While the
//     handler does neither (e.g. waits for storage), no timer runs.
//  7. Responses: the server sets Content-Length (Respond; StartResponse with
//     a length) or "Transfer-Encoding: chunked" (StartResponse without a
//     length; an HTTP/1.0 client instead gets a body delimited by close),
//     and the Server header unless the handler gave one. Content-Length and
//     Transfer-Encoding given by the handler are dropped, except for a HEAD
//     request where a handler's Content-Length is sent as given. For HEAD
//     no body bytes are written (WriteBody pieces are discarded). A handler
//     header "Connection: close" closes the connection after the response.
//     With a length, WriteBody beyond it fails, and FinishResponse short of
//     it fails and closes the connection (framing would be broken).
//  8. Stop (also run by the destructor) closes the listeners and every
//     connection and returns once they are gone. Calls pending at that
//     moment complete with Aborted before Stop returns; later calls on old
//     exchanges complete with Aborted; no handler starts after Stop
//     returns (a handler running when Stop is called finishes first).
//
// Threads: everything runs on the io_context the caller runs (any number of
// threads). Each connection has a strand: the handler and every callback
// of its exchanges run on it, so they never run concurrently with one
// another for one connection; different connections run in parallel.
// Exchange methods may be called from any thread; they never invoke the
// callback inline (it is posted to the strand), so a callback may call the
// exchange again. Every callback given to an Exchange is called exactly
// once, provided the io_context keeps running until it has been (a call
// made after the io_context has stopped completes inline with Aborted).
// Start once from one thread; ports and stats from any thread; Stop and the
// destructor from a thread that does not run the io_context, while it runs
// (or after it has stopped).
//
// TLS setup (see docs/http.md): the certificate file holds the server's
// certificate (chain); clients trust the CA that issued it
// (pki/certificates.h): AWS_CA_BUNDLE=ca.pem or `aws --ca-bundle ca.pem`,
// boto3 `verify="ca.pem"`, curl `--cacert ca.pem`, Python
// `ssl.create_default_context(cafile="ca.pem")`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/limits.h"
#include "common/result.h"
#include "common/shared_bytes.h"
#include "common/status.h"
#include "http/headers.h"
#include "http/tls_context.h"
#include "knobs/knobs.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace tessera::http {

namespace internal {
class StreamServerCore;
}  // namespace internal

// The request head, as read before the body.
struct RequestHead {
  std::string method;          // "GET", "PUT"... as sent
  std::string target;          // request target as sent: "/path?query"
  std::string path;            // target before '?', not percent-decoded
  std::string query;           // target after '?', not decoded; empty if none
  Headers headers;             // in order received, names as sent
  unsigned version = 11;       // 10 or 11
  std::string remote_address;  // "ip:port"
  bool tls = false;            // came through the TLS listener
  std::optional<uint64_t> content_length;  // the Content-Length, if sent
  bool chunked = false;        // Transfer-Encoding: chunked
  bool expect_continue = false;  // Expect: 100-continue

  // The first header named `name` (case-insensitive), or nullopt.
  std::optional<std::string_view> Header(std::string_view name) const {
    return FindHeader(headers, name);
  }
  bool has_body() const { return chunked || content_length.value_or(0) > 0; }
};

// Called with the next piece of the request body. On success `piece` holds
// bytes_max bytes (as asked of ReadBody, capped by body_read_chunk_bytes),
// or fewer only when it is the last piece, and `end` says whether the body
// is complete after it (the last piece may be empty). On failure `end` is
// true and the exchange's body is unusable: IOError (client closed or
// reset mid-body, malformed chunk), Timeout (idle timeout),
// InvalidArgument (body above body_bytes_max), Aborted (server stopping,
// exchange dead, response already finished, a ReadBody already pending).
using BodyPieceCallback = std::function<void(Result<std::string> piece, bool end)>;
// Completion of a write step. Not OK (IOError: the client went away;
// Timeout; Aborted; InvalidArgument for misuse): the exchange is dead and
// every further call fails fast with Aborted. May be empty.
using StatusCallback = std::function<void(Status)>;

// One request and its response. Abstract so that a handler can be tested
// against a fake; StreamServer hands out its own implementation.
class Exchange {
 public:
  virtual ~Exchange() = default;

  virtual const RequestHead& head() const = 0;

  // Reads the next piece of the decoded body (see BodyPieceCallback). One
  // ReadBody at a time; allowed until the response finished (so a handler
  // may stream a response while still reading). After the end: ok("", end).
  // The first call sends "100 Continue" when the client expects it.
  virtual void ReadBody(size_t bytes_max, BodyPieceCallback callback) = 0;

  // A whole response with Content-Length: body.size() (for HEAD: the
  // handler's Content-Length header if given, else body.size(); the body is
  // not sent). `done` runs once the response was written (or failed).
  virtual void Respond(unsigned status, Headers headers, std::string body,
                       StatusCallback done) = 0;

  // Writes the response head; content_length nullopt: chunked. For HEAD,
  // content_length is announced as Content-Length and no body follows.
  virtual void StartResponse(unsigned status, Headers headers,
                             std::optional<uint64_t> content_length, StatusCallback done) = 0;
  // Writes one piece (empty: no-op), from where it lies until `done` runs.
  // Call again only after `done` ran OK.
  virtual void WriteBody(SharedBytes piece, StatusCallback done) = 0;
  void WriteBody(std::string piece, StatusCallback done) {
    WriteBody(SharedBytes(std::move(piece)), std::move(done));
  }
  // Ends the body (chunked: the last chunk) after the last WriteBody's done.
  virtual void FinishResponse(StatusCallback done) = 0;

  // Closes the connection at once (e.g. the object source failed after the
  // head was sent: the client must see a truncated response). Pending calls
  // fail with Aborted. Idempotent.
  virtual void Abort() = 0;
};

// Reads a whole (small) body: calls `done` with it, or InvalidArgument when
// it exceeds bytes_max, or ReadBody's error. For XML request bodies.
void ReadWholeBody(std::shared_ptr<Exchange> exchange, size_t bytes_max,
                   std::function<void(Result<std::string>)> done);

// What the server answers on its own (contract 6): the handler-independent
// errors 400 (malformed), 413 (Content-Length above body_bytes_max), 431
// (head above header_bytes_max), 501 (transfer coding other than chunked),
// 503 (server stopping).
struct ProtocolErrorResponse {
  unsigned status = 0;  // 0: the status the server chose; else sent instead
  Headers headers;  // e.g. Content-Type; not Content-Length/Connection
  std::string body;
};
// `reason` is a short English phrase ("request header too large").
using ProtocolErrorRenderer =
    std::function<ProtocolErrorResponse(unsigned status, std::string_view reason)>;

using StreamHandler = std::function<void(std::shared_ptr<Exchange>)>;

struct StreamServerOptions {
  std::string host = "127.0.0.1";         // an IP address literal
  std::optional<uint16_t> http_port = 0;  // plain listener; 0 any; nullopt off
  std::optional<uint16_t> https_port;     // TLS listener; 0 any; nullopt off
  TlsFiles tls;                           // required when https_port is set
  size_t header_bytes_max = limits::kHttpHeaderBytesMax;          // <= the limit
  uint64_t body_bytes_max = limits::kHttpStreamBodyBytesMax;      // <= the limit
  size_t connections_max = limits::kHttpStreamConnectionsMax;     // <= the limit
  // Largest piece one ReadBody delivers (its bytes_max is capped to it).
  size_t body_read_chunk_bytes = knobs::kRouterHttpBodyPieceBytes.default_value;  // <= max
  // Unread body bytes discarded after a response to keep the connection.
  size_t drain_bytes_max = limits::kHttpStreamDrainBytesMax;      // <= the limit
  uint32_t idle_timeout_ms = 60'000;   // bound on one read or write (contract 6)
  std::string server_name = "tessera";  // the Server header
  // Renders contract 6's answers; empty: a text/plain reason.
  ProtocolErrorRenderer on_protocol_error;
  // How many threads run the io_context: exactly 1 lets connections use its
  // executor instead of a strand each (ConnectionExecutor); 0: unknown.
  unsigned io_threads = 0;
};

// Monotonic counters since Start, and current levels.
struct StreamServerStats {
  uint64_t connections_accepted = 0;  // both listeners
  uint64_t connections_refused = 0;   // beyond connections_max
  uint64_t connections_open = 0;
  uint64_t tls_handshakes_failed = 0;
  uint64_t requests = 0;              // handed to the handler
  uint64_t protocol_errors = 0;       // answered by the server (contract 6)
};

class StreamServer {
 public:
  // `io` must outlive the server; `handler` must be non-empty.
  StreamServer(boost::asio::io_context& io, StreamServerOptions options, StreamHandler handler);
  ~StreamServer();
  StreamServer(const StreamServer&) = delete;
  StreamServer& operator=(const StreamServer&) = delete;

  // Validates the options, loads the TLS files, binds and listens.
  // InvalidArgument for bad options or a second call; IOError when an
  // address cannot be bound or a TLS file cannot be read or used.
  Status Start();
  // The bound ports after a successful Start; 0 before or when disabled.
  uint16_t http_port() const;
  uint16_t https_port() const;
  StreamServerStats stats() const;
  // See contract 8. Idempotent.
  void Stop();

 private:
  std::shared_ptr<internal::StreamServerCore> impl_;
};

}  // namespace tessera::http
