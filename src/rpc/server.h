// RpcServer: accepts connections from other processes' channels,
// authenticates them (docs/formats/rpc.md, "Handshake") and dispatches each
// request to the handler registered for its method.
//
// Contract:
//  1. Handlers are registered before Start. A handler runs on the strand of
//     the request's connection: one connection's requests reach handlers one
//     at a time, in the order they were sent; different connections' handlers
//     run concurrently on the io threads. Handlers must not block; slow work
//     goes elsewhere and answers later through the Responder.
//  2. Every request with a call id gets exactly one response: the handler's
//     Reply or Fail; Aborted when every copy of its Responder is destroyed
//     unanswered; NotFound for a method with no handler; Throttled beyond
//     ServerOptions::inflight_requests_max unanswered requests on the
//     connection. One-way requests (call id 0) get none.
//  3. A connection that fails the handshake, sends a malformed frame or
//     stops reading its responses (more than queue_bytes_max queued) is
//     logged, counted and closed; the server keeps serving the others.
//  4. Responses go through the process's FaultInjector, keyed by the
//     requesting peer's id.
//  5. Stop (also run by the destructor) closes the listening socket and
//     every connection and returns once they are closed: afterwards no
//     handler runs, the port is free, and Responders still held become
//     no-ops.
//  6. Connections that have not authenticated count against
//     handshakes_max, never against connections_max: accepting one more
//     than handshakes_max closes the oldest (on its strand, right after),
//     so a flood of silent connections cannot keep a peer out for a whole
//     handshake deadline; each has at most handshake_timeout_ms.
//     connections_max bounds authenticated connections: a valid Hello
//     beyond it is refused (reason too_many_connections).
//  7. With an AccessPolicy, a request reaches its handler only when the
//     caller's role may call the method; otherwise it gets PermissionDenied
//     (counted in tessera_rpc_permission_denied_total{method}, logged as
//     rpc.permission_denied). Registering a handler for a method the policy
//     has no rule for fails.
//  8. Over TLS (Identity::tls), a connection authenticates only when the
//     Hello names the role and peer id of the certificate the peer
//     presented (reason certificate_mismatch otherwise).
//
// Thread safety: RegisterHandler and Start from one thread before serving;
// port, stats and Responder methods from any thread; Stop and the
// destructor from any thread that is not running the io_context, while the
// io_context runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/limits.h"
#include "common/result.h"
#include "common/shared_bytes.h"
#include "rpc/access_policy.h"
#include "rpc/types.h"
#include "tessera/rpc.pb.h"

namespace tessera::rpc {

namespace internal {
class ServerConnection;
class ServerCore;
struct ResponseSlot;
}  // namespace internal

// The way back to the caller of one request. Copies share one response:
// the first Reply or Fail across all copies sends it, a second is a bug
// (CHECKed). For a one-way request both are no-ops. Must not outlive the
// io_context.
class Responder {
 public:
  Responder() = default;  // a one-way request's

  bool expects_response() const { return slot_ != nullptr; }
  void Reply(std::string payload) const;
  // The payload head || tail, the tail sent from where it lies (never
  // copied, see SplitPayload).
  void Reply(SplitPayload payload) const;
  // `status` must not be OK.
  void Fail(Status status) const;

 private:
  friend class internal::ServerConnection;
  explicit Responder(std::shared_ptr<internal::ResponseSlot> slot) : slot_(std::move(slot)) {}

  std::shared_ptr<internal::ResponseSlot> slot_;
};

// `request` is the handler's to take from (e.g. move its payload out): the
// server does not read it after the call.
using Handler = std::function<void(const PeerInfo& peer, pb::Envelope& request, Responder responder)>;

// A handler for a method whose payload may be large (blob.put): it gets the
// payload as SharedBytes, for a large request (rpc::kOwnedFrameBytesMin)
// a view of the buffer the frame was received into, never copied;
// `request`'s payload field is empty.
using PayloadHandler = std::function<void(const PeerInfo& peer, pb::Envelope& request,
                                          SharedBytes payload, Responder responder)>;

struct ServerOptions {
  Identity identity;
  std::string host = "127.0.0.1";  // an IP address literal
  uint16_t port = 0;               // 0: any free port, see RpcServer::port()
  // A connection without a valid Hello this long after accept is closed.
  uint32_t handshake_timeout_ms = 2000;
  size_t handshakes_max = limits::kRpcServerHandshakesMax;    // contract 6
  size_t connections_max = limits::kRpcServerConnectionsMax;  // authenticated ones
  size_t inflight_requests_max = limits::kRpcServerInflightRequestsMax;  // per connection
  size_t queue_bytes_max = limits::kRpcServerQueueBytesMax;              // per connection
  // Contract 7; null: every authenticated peer may call every method
  // (tests of the transport alone).
  std::shared_ptr<const AccessPolicy> access = nullptr;
};

struct ServerStats {
  uint64_t connections_accepted = 0;       // TCP accepts
  uint64_t connections_authenticated = 0;  // valid Hellos
  uint64_t connections_open = 0;           // authenticated and not yet closed
  uint64_t handshakes_open = 0;            // accepted, not yet authenticated or closed
  uint64_t handshakes_evicted = 0;         // closed for a newer one (contract 6)
  uint64_t requests = 0;                   // requests and one-way messages received
};

class RpcServer {
 public:
  RpcServer(RpcContext context, ServerOptions options);
  ~RpcServer();
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;

  // InvalidArgument for an invalid or reserved method name, a duplicate, a
  // method the access policy has no rule for, or a call after Start.
  Status RegisterHandler(std::string_view method, Handler handler);
  // The same for a PayloadHandler; one handler per method of either kind.
  Status RegisterPayloadHandler(std::string_view method, PayloadHandler handler);

  // Validates the options, binds and listens (IOError when the address is
  // taken), then accepts in the background. At most once.
  Status Start();

  // The bound port (after a successful Start).
  uint16_t port() const;
  ServerStats stats() const;

  // See contract 5. Idempotent.
  void Stop();

 private:
  std::shared_ptr<internal::ServerCore> core_;
};

}  // namespace tessera::rpc
