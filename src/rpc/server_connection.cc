// One accepted connection of an RpcServer: handshake, request dispatch,
// responses. See server_internal.h.
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#include "common/check.h"
#include "rpc/auth.h"
#include "rpc/bytes_field.h"
#include "rpc/envelope.h"
#include "rpc/fault_injector.h"
#include "rpc/tls.h"
#include "rpc/server_internal.h"

namespace tessera::rpc {

void Responder::Reply(std::string payload) const {
  if (slot_ != nullptr) slot_->Send(std::move(payload));
}

void Responder::Reply(SplitPayload payload) const {
  if (slot_ == nullptr) return;
  if (payload.tail.empty()) return slot_->Send(Result<std::string>(std::move(payload.head)));
  slot_->Send(std::move(payload));
}

void Responder::Fail(Status status) const {
  TESSERA_CHECK(!status.ok());
  if (slot_ != nullptr) slot_->Send(std::move(status));
}

namespace internal {

ResponseSlot::~ResponseSlot() {
  if (!answered.load()) Send(Status::Aborted("the handler dropped the request unanswered"));
}

void ResponseSlot::Send(Result<std::string> result) {
  TESSERA_CHECK(!answered.exchange(true));  // exactly one response per request
  Result<std::string> frame =
      EncodeFrame(MakeResponse(call_id, std::move(result)), limits::kRpcFrameBytesMax);
  if (!frame.ok()) return PostTooLarge(frame.status());
  Post(OutFrame{std::move(frame).value()});
}

void ResponseSlot::Send(SplitPayload payload) {
  TESSERA_CHECK(!answered.exchange(true));  // exactly one response per request
  Result<std::string> frame =
      EncodeFrameSplit(MakeResponse(call_id, std::string()), payload, limits::kRpcFrameBytesMax);
  if (!frame.ok()) return PostTooLarge(frame.status());
  OutFrame out{std::move(frame).value()};
  out.tail = std::move(payload.tail);
  Post(std::move(out));
}

void ResponseSlot::PostTooLarge(const Status& why) {
  Result<std::string> frame = EncodeFrame(
      MakeResponse(call_id, Status::InvalidArgument("response too large: " + why.message())),
      limits::kRpcFrameBytesMax);
  TESSERA_CHECK(frame.ok());
  Post(OutFrame{std::move(frame).value()});
}

void ResponseSlot::Post(OutFrame frame) {
  asio::post(strand, [weak = connection, frame = std::move(frame)]() mutable {
    if (auto conn = weak.lock()) conn->OnResponseReady(std::move(frame));
  });
}

ServerConnection::ServerConnection(std::shared_ptr<ServerCore> core, Strand strand,
                                   asio::ip::tcp::socket socket)
    : core_(std::move(core)),
      strand_(std::move(strand)),
      budget_(std::make_shared<QueueBudget>(limits::kRpcChannelQueueFramesMax,
                                            core_->options.queue_bytes_max)),
      link_(std::make_shared<Link>(std::move(socket), core_->metrics, budget_,
                                   std::make_shared<LinkCounters>(),
                                   core_->options.identity.tls, TlsSide::kServer)),
      handshake_timer_(strand_) {}

void ServerConnection::Start() {
  handshake_timer_.expires_after(std::chrono::milliseconds(core_->options.handshake_timeout_ms));
  handshake_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
    if (!error && !self->authenticated_ && !self->closed_) self->AuthFailed("handshake_timeout");
  });
  auto self = shared_from_this();
  link_->Start({[self](std::string_view frame, SharedBytes owned, uint32_t) {
                  self->OnFrame(frame, std::move(owned));
                },
                [self](std::string_view reason, std::string_view detail) {
                  self->OnLinkClosed(reason, detail);
                }},
               limits::kRpcHandshakeFrameBytesMax);
  server_nonce_ = RandomNonce();
  pb::Challenge challenge;
  challenge.set_protocol_version(kProtocolVersion);
  challenge.set_server_nonce(server_nonce_);
  SendHandshake(kChallengeMethod, challenge);
}

void ServerConnection::SendHandshake(std::string_view method,
                                     const google::protobuf::MessageLite& message) {
  Result<std::string> frame = EncodeFrame(MakeRequest(0, method, message.SerializeAsString()),
                                          limits::kRpcHandshakeFrameBytesMax);
  TESSERA_CHECK(frame.ok());
  link_->Enqueue(OutFrame{std::move(frame).value(), {}, /*budgeted=*/false});
}

void ServerConnection::OnFrame(std::string_view frame, SharedBytes owned) {
  pb::Envelope envelope;
  std::optional<SharedBytes> payload;
  bool parsed = false;
  if (owned.empty()) {
    parsed = envelope.ParseFromArray(frame.data(), static_cast<int>(frame.size()));
  } else {
    // A large frame: its payload stays in the buffer it was received into.
    std::string_view field;
    parsed = ParseAroundBytesField(frame, pb::Envelope::kPayloadFieldNumber, &envelope, &field);
    if (parsed) payload = owned.Slice(static_cast<size_t>(field.data() - owned.data()), field.size());
  }
  if (!authenticated_) {
    // Handshake frames are small (kRpcHandshakeFrameBytesMax): never owned.
    if (!parsed || payload || envelope.method() != kHelloMethod) {
      AuthFailed("expected_hello");
    } else {
      OnHello(envelope);
    }
    return;
  }
  if (!parsed) return Malformed("bad_envelope");
  if (envelope.is_response()) return Malformed("unexpected_response");
  OnRequest(envelope, std::move(payload));
}

void ServerConnection::OnHello(const pb::Envelope& envelope) {
  pb::Hello hello;
  if (!hello.ParseFromString(envelope.payload())) return AuthFailed("bad_hello");
  if (hello.protocol_version() != kProtocolVersion) return AuthFailed("bad_version");
  if (hello.client_nonce().size() != kNonceBytes || hello.peer_id() == 0 || hello.role().empty() ||
      hello.role().size() > limits::kRpcRoleBytesMax) {
    return AuthFailed("bad_hello");
  }
  const Identity& self = core_->options.identity;
  const std::string expected = HelloMac(self.cluster_secret, server_nonce_, hello.client_nonce(),
                                        hello.peer_id(), hello.role());
  if (!MacEquals(expected, hello.mac())) return AuthFailed("bad_mac");
  // Contract 8: over TLS the certificate, not the Hello, says who this is.
  if (link_->is_tls() &&
      !(link_->tls_peer() == CertificateIdentity{hello.role(), hello.peer_id()})) {
    return AuthFailed("certificate_mismatch");
  }

  if (core_->connections_open.load() >= core_->options.connections_max) {
    return AuthFailed("too_many_connections");
  }
  authenticated_ = true;
  in_handshake_.store(false);
  core_->handshakes_open.fetch_sub(1);
  core_->connections_open.fetch_add(1);
  handshake_timer_.cancel();
  peer_ = PeerInfo{hello.peer_id(), hello.role(), link_->peer_address()};
  link_->set_frame_bytes_max(limits::kRpcFrameBytesMax);
  core_->connections_authenticated.fetch_add(1);
  core_->metrics->connections_opened.Increment();
  core_->metrics->connections.Add(1);
  spdlog::info("rpc.peer_authenticated side=server peer={} peer_id={} role={}", peer_.address,
               peer_.peer_id, peer_.role);
  pb::Welcome welcome;
  welcome.set_peer_id(self.peer_id);
  welcome.set_role(self.role);
  welcome.set_mac(WelcomeMac(self.cluster_secret, server_nonce_, hello.client_nonce(),
                             self.peer_id, self.role));
  SendHandshake(kWelcomeMethod, welcome);
}

void ServerConnection::OnRequest(pb::Envelope& request, std::optional<SharedBytes> payload) {
  core_->requests.fetch_add(1, std::memory_order_relaxed);
  const uint64_t call_id = request.call_id();
  const RegisteredHandler* handler = core_->FindHandler(request.method());
  if (handler == nullptr) {
    core_->metrics->unknown_method.Increment();
    // Logged at counts 1, 2, 4, 8...: a peer of a newer version calling a
    // method this build lacks must not flood the log.
    ++unknown_methods_;
    if ((unknown_methods_ & (unknown_methods_ - 1)) == 0) {
      spdlog::warn("rpc.unknown_method peer={} peer_id={} method=\"{}\" count={}", peer_.address,
                   peer_.peer_id, request.method().substr(0, limits::kRpcMethodBytesMax),
                   unknown_methods_);
    }
    if (call_id != 0) Respond(call_id, Status::NotFound("no handler for rpc method " + request.method()));
    return;
  }
  if (core_->options.access != nullptr && !core_->options.access->Allows(peer_.role, request.method())) {
    return RefusePermission(call_id, request.method());
  }
  // Each kind of handler gets the payload where it wants it.
  const auto dispatch = [&](Responder responder) {
    if (handler->with_payload) {
      SharedBytes bytes = payload ? std::move(*payload) : SharedBytes(std::move(*request.mutable_payload()));
      handler->with_payload(peer_, request, std::move(bytes), std::move(responder));
    } else {
      if (payload) request.set_payload(std::string(payload->view()));
      handler->plain(peer_, request, std::move(responder));
    }
  };
  if (call_id == 0) return dispatch(Responder());
  if (inflight_ >= core_->options.inflight_requests_max) {
    core_->metrics->throttled.Increment();
    Respond(call_id, Status::Throttled("too many requests in flight on this connection"));
    return;
  }
  ++inflight_;
  dispatch(Responder(std::make_shared<ResponseSlot>(weak_from_this(), strand_, call_id)));
}

void ServerConnection::RefusePermission(uint64_t call_id, const std::string& method) {
  core_->metrics->permission_denied(method).Increment();
  // Logged at counts 1, 2, 4, 8... per connection: a misconfigured peer
  // retrying must not flood the log.
  ++permission_denials_;
  if ((permission_denials_ & (permission_denials_ - 1)) == 0) {
    spdlog::warn("rpc.permission_denied peer={} peer_id={} role={} method={} count={}", peer_.address,
                 peer_.peer_id, peer_.role, method, permission_denials_);
  }
  if (call_id != 0) {
    Respond(call_id, Status::PermissionDenied("role " + peer_.role + " may not call " + method));
  }
}

void ServerConnection::Respond(uint64_t call_id, Status status) {
  Result<std::string> frame =
      EncodeFrame(MakeResponse(call_id, std::move(status)), limits::kRpcFrameBytesMax);
  TESSERA_CHECK(frame.ok());
  SendData(OutFrame{std::move(frame).value()});
}

void ServerConnection::OnResponseReady(OutFrame frame) {
  if (closed_) return;
  TESSERA_CHECK(inflight_ > 0);
  --inflight_;
  SendData(std::move(frame));
}

void ServerConnection::SendData(OutFrame out) {
  if (closed_) return;
  const FaultDecision fault = core_->context.faults.Decide(peer_.peer_id);
  if (fault.drop) {
    core_->metrics->fault_dropped_frames.Increment();
    return;
  }
  if (!budget_->TryAcquire(out.size())) {
    spdlog::warn("rpc.slow_peer side=server peer={} peer_id={} queued_bytes={}", peer_.address,
                 peer_.peer_id, budget_->bytes());
    core_->metrics->slow_peer_closes.Increment();
    Close();
    return;
  }
  out.budgeted = true;
  if (fault.delay_ms > 0) {
    core_->metrics->fault_delayed_frames.Increment();
    out.release = Clock::now() + std::chrono::milliseconds(fault.delay_ms);
  }
  link_->Enqueue(std::move(out));
}

void ServerConnection::AuthFailed(std::string_view reason) {
  core_->metrics->auth_failures(reason).Increment();
  spdlog::warn("rpc.auth_failed side=server peer={} reason={}", link_->peer_address(), reason);
  Close();
}

void ServerConnection::Malformed(std::string_view reason) {
  core_->metrics->malformed_frames(reason).Increment();
  spdlog::warn("rpc.malformed_frame side=server peer={} peer_id={} reason={}",
               link_->peer_address(), peer_.peer_id, reason);
  Close();
}

void ServerConnection::OnLinkClosed(std::string_view reason, std::string_view detail) {
  spdlog::info("rpc.connection_closed side=server peer={} peer_id={} reason={} detail=\"{}\"",
               link_->peer_address(), peer_.peer_id, reason, detail);
  Cleanup();
}

void ServerConnection::Close() {
  link_->Close();
  Cleanup();
}

void ServerConnection::EvictHandshake() {
  if (authenticated_ || closed_) return;
  AuthFailed("handshake_evicted");
}

void ServerConnection::Cleanup() {
  if (closed_) return;
  closed_ = true;
  in_handshake_.store(false);
  handshake_timer_.cancel();
  if (authenticated_) {
    core_->connections_open.fetch_sub(1);
    core_->metrics->connections.Add(-1);
  } else {
    core_->handshakes_open.fetch_sub(1);
  }
}

}  // namespace internal
}  // namespace tessera::rpc
