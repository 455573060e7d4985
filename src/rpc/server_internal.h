// Internals of RpcServer (server.h): the listening core, one object per
// accepted connection, and the slot a Responder answers through.
//
// Ownership: RpcServer owns the ServerCore; every ServerConnection holds the
// core (shared) and is kept alive by its pending operations; the core keeps
// only weak references to connections, and a ResponseSlot a weak reference
// to its connection. Link callbacks hold their connection until the link
// closes, which breaks that cycle.
//
// Thread safety: ServerCore's acceptor and connection list belong to its
// acceptor strand; its options and handler map are immutable once Start
// ran; its counters are atomics. A ServerConnection belongs to its strand.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <optional>

#include "rpc/link.h"
#include "rpc/server.h"

namespace tessera::rpc::internal {

// A method's handler: exactly one of the two is set.
struct RegisteredHandler {
  Handler plain;
  PayloadHandler with_payload;
};

class ServerCore : public std::enable_shared_from_this<ServerCore> {
 public:
  ServerCore(RpcContext context, ServerOptions options);

  Status RegisterHandler(std::string_view method, RegisteredHandler handler);
  Status Listen();
  // On the acceptor strand: closes the acceptor and every connection, then
  // calls `done` (from some connection's strand, or this one).
  void StopOnStrand(std::function<void()> done);

  const RegisteredHandler* FindHandler(const std::string& method) const;

  RpcContext context;
  const ServerOptions options;
  const std::shared_ptr<const RpcMetrics> metrics;
  Strand acceptor_strand;
  std::atomic<bool> started{false};
  std::atomic<bool> stopped{false};
  std::atomic<uint16_t> port{0};
  std::atomic<uint64_t> connections_accepted{0};
  std::atomic<uint64_t> connections_authenticated{0};
  std::atomic<uint64_t> connections_open{0};  // authenticated
  std::atomic<uint64_t> handshakes_open{0};   // not yet authenticated
  std::atomic<uint64_t> handshakes_evicted{0};
  std::atomic<uint64_t> requests{0};

 private:
  void AcceptNext();
  void OnAccept(const boost::system::error_code& error, Strand strand,
                asio::ip::tcp::socket socket);

  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer retry_timer_;  // after accept errors such as EMFILE
  std::unordered_map<std::string, RegisteredHandler> handlers_;
  std::vector<std::weak_ptr<ServerConnection>> connections_;
  // Accept order; the acceptor strand's. Entries that authenticated or
  // closed are dropped lazily (contract 6).
  std::deque<std::weak_ptr<ServerConnection>> handshaking_;
};

class ServerConnection : public std::enable_shared_from_this<ServerConnection> {
 public:
  ServerConnection(std::shared_ptr<ServerCore> core, Strand strand, asio::ip::tcp::socket socket);

  // On the strand: sends the Challenge and starts reading.
  void Start();
  // On the strand. Idempotent.
  void Close();
  // On the strand: a response frame encoded by a ResponseSlot.
  void OnResponseReady(OutFrame frame);

  const Strand& strand() const { return strand_; }
  // Whether the connection has neither authenticated nor closed (any
  // thread; a snapshot).
  bool in_handshake() const { return in_handshake_.load(); }
  // On the strand: closes a connection still in its handshake to make room
  // for a newer one (ServerCore, contract 6). Nothing if it authenticated.
  void EvictHandshake();

 private:
  // `owned`: the buffer a large frame was received into, else empty.
  void OnFrame(std::string_view frame, SharedBytes owned);
  void OnHello(const pb::Envelope& envelope);
  // `payload`: the request's payload when it was parsed around (left in
  // the frame's buffer, see OnFrame); nullopt when it is in `request`.
  void OnRequest(pb::Envelope& request, std::optional<SharedBytes> payload);
  void Respond(uint64_t call_id, Status status);
  // Contract 7: counts, logs and answers a request the peer's role may not
  // make (no answer for a one-way request).
  void RefusePermission(uint64_t call_id, const std::string& method);
  void SendData(OutFrame frame);
  void SendHandshake(std::string_view method, const google::protobuf::MessageLite& message);
  void AuthFailed(std::string_view reason);
  void Malformed(std::string_view reason);
  void OnLinkClosed(std::string_view reason, std::string_view detail);
  void Cleanup();

  const std::shared_ptr<ServerCore> core_;
  const Strand strand_;
  const std::shared_ptr<QueueBudget> budget_;
  const std::shared_ptr<Link> link_;
  asio::steady_timer handshake_timer_;
  std::string server_nonce_;
  PeerInfo peer_;  // valid once authenticated_
  bool authenticated_ = false;
  bool closed_ = false;
  std::atomic<bool> in_handshake_{true};  // !authenticated_ && !closed_, for the acceptor
  size_t inflight_ = 0;  // requests handed to handlers, not yet answered
  uint64_t unknown_methods_ = 0;
  uint64_t permission_denials_ = 0;
};

// Shared by the copies of one Responder.
struct ResponseSlot {
  ResponseSlot(std::weak_ptr<ServerConnection> connection, Strand strand, uint64_t call_id)
      : connection(std::move(connection)), strand(std::move(strand)), call_id(call_id) {}
  ~ResponseSlot();  // answers Aborted when nobody did
  ResponseSlot(const ResponseSlot&) = delete;
  ResponseSlot& operator=(const ResponseSlot&) = delete;

  void Send(Result<std::string> result);
  void Send(SplitPayload payload);

  const std::weak_ptr<ServerConnection> connection;
  const Strand strand;
  const uint64_t call_id;
  std::atomic<bool> answered{false};

 private:
  // Hands an encoded response to the connection's strand.
  void Post(OutFrame frame);
  // Posts InvalidArgument for a response that did not fit a frame (`why`).
  void PostTooLarge(const Status& why);
};

}  // namespace tessera::rpc::internal
