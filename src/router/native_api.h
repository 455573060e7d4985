// NativeKvServer: the router's native KV API on its kv_port
// (docs/formats/kv-api.md): length-prefixed, checksummed protobuf frames
// over TCP, a challenge-response handshake against the credentials file,
// then pipelined requests answered out of order by request id through a
// NativeKvHandler.
//
// Contract:
//  1. A connection serves requests only after a Hello whose proof verifies
//     (HMAC-SHA256 over the server's fresh nonce, docs/formats/kv-api.md).
//     An unknown access key or bad proof gets a Welcome with code
//     PermissionDenied; a request before the Hello, a malformed Hello or no
//     Hello within the handshake timeout gets Unauthenticated; then the
//     connection is closed. Counted in
//     tessera_router_native_auth_failures_total{reason}.
//  2. A frame that is too large (checked on the header alone), fails its
//     checksum or does not parse is answered with a connection-level error
//     response (request_id 0, InvalidArgument, the reason) and the
//     connection is closed after it is sent; counted in
//     tessera_router_native_malformed_frames_total{reason}. Other
//     connections are unaffected.
//  3. At most inflight_requests_max requests per connection are being
//     answered; a request beyond it is answered Throttled at once.
//  4. A client that leaves more than queue_bytes_max of responses unread
//     is closed.
//  5. Stop closes the listening socket (the port is free when it returns)
//     and every connection.
//  6. With tls, the server speaks only TLS (1.2 or 1.3, http/tls_context.h):
//     a connection completes its TLS handshake, then the native handshake,
//     both within handshake_timeout_ms. Run a second server for a plain
//     listener beside it.
//
// Metrics: tessera_router_native_connections_total,
// tessera_router_native_connections_open, tessera_router_native_requests_total,
// tessera_router_native_throttled_total, and the two above; per-op counts
// and latencies are the KvRouter's tessera_router_requests_total{op,code}.
//
// Thread safety: Start once, then port() from any thread; Stop from any
// thread that is not running the io_context, while it runs. The handler,
// credentials and metrics registry must outlive the io threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/limits.h"
#include "common/metrics.h"
#include "common/status.h"
#include "http/tls_context.h"
#include "router/native_handler.h"
#include "router/token.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace tessera::router {

struct NativeApiOptions {
  std::string host = "127.0.0.1";  // an IP address literal
  uint16_t port = 0;               // 0: any free port
  uint32_t handshake_timeout_ms = limits::kNativeHandshakeTimeoutMs;
  size_t connections_max = limits::kNativeConnectionsMax;
  size_t inflight_requests_max = limits::kNativeInflightRequestsMax;  // per connection
  size_t queue_bytes_max = limits::kNativeQueueBytesMax;              // per connection
  // Contract 6: every connection is TLS with this certificate and key.
  std::optional<http::TlsFiles> tls;
};

// InvalidArgument for options beyond the kNative* limits.
Status ValidateNativeApiOptions(const NativeApiOptions& options);

namespace native_internal {
class ServerState;
}  // namespace native_internal

class NativeKvServer {
 public:
  NativeKvServer(boost::asio::io_context& io, NativeKvHandler& handler, const CredentialStore& credentials,
                 metrics::Registry& metrics, NativeApiOptions options);
  ~NativeKvServer();
  NativeKvServer(const NativeKvServer&) = delete;
  NativeKvServer& operator=(const NativeKvServer&) = delete;

  // Validates the options, binds and listens (IOError when the port is
  // taken), then accepts in the background. At most once.
  Status Start();
  uint16_t port() const;
  // See contract 5. Idempotent.
  void Stop();

 private:
  std::shared_ptr<native_internal::ServerState> state_;
};

}  // namespace tessera::router
