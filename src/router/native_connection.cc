// One accepted connection of the native KV API (native_connection.h).
#include "router/native_connection.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "client/kv_api_wire.h"
#include "common/check.h"

namespace tessera::router::native_internal {
namespace {

namespace asio = boost::asio;

constexpr size_t kReadChunkBytes = 64 << 10;
constexpr size_t kDiscardChunkBytes = 16 << 10;
constexpr uint32_t kUnauthenticated = kWireUnauthenticated;
constexpr uint32_t kPermissionDenied = kWirePermissionDenied;

std::string RemoteAddress(const asio::ip::tcp::socket& socket) {
  boost::system::error_code error;
  const asio::ip::tcp::endpoint endpoint = socket.remote_endpoint(error);
  if (error) return "unknown";
  return endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

pb::KvApiServerFrame ConnectionError(uint32_t code, const std::string& message) {
  pb::KvApiServerFrame frame;
  frame.mutable_response()->set_request_id(0);
  frame.mutable_response()->set_code(code);
  frame.mutable_response()->set_message(message);
  return frame;
}

}  // namespace

Connection::Connection(std::shared_ptr<ServerState> server, Strand strand, asio::ip::tcp::socket socket,
                       asio::ssl::context* tls)
    : server_(std::move(server)),
      strand_(std::move(strand)),
      stream_(tls == nullptr ? MaybeTlsStream<asio::ip::tcp::socket>(std::move(socket))
                             : MaybeTlsStream<asio::ip::tcp::socket>(std::move(socket), *tls)),
      timer_(strand_),
      peer_(RemoteAddress(stream_.next_layer())),
      decoder_(limits::kNativeHandshakeFrameBytesMax) {}

Connection::~Connection() {
  server_->connections_open.fetch_sub(1);
  server_->metrics.connections_open.Add(-1);
}

void Connection::Start() {
  boost::system::error_code ignored;
  stream_.next_layer().set_option(asio::ip::tcp::no_delay(true), ignored);
  timer_.expires_after(std::chrono::milliseconds(server_->options.handshake_timeout_ms));
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
    if (error || self->phase_ != Phase::kHandshake) return;
    if (!self->greeted_) {  // still in the TLS handshake: nothing can be sent
      self->server_->metrics.AuthFailure("handshake_timeout").Increment();
      return self->Close();
    }
    const uint32_t timeout_ms = self->server_->options.handshake_timeout_ms;
    self->AuthFailed("handshake_timeout", kUnauthenticated,
                     "no valid Hello within " + std::to_string(timeout_ms) + " ms");
  });
  if (!stream_.is_tls()) return Greet();
  stream_.tls()->async_handshake(asio::ssl::stream_base::server,
                                 [self = shared_from_this()](const boost::system::error_code& error) {
                                   if (self->phase_ != Phase::kHandshake) return;
                                   if (error) {
                                     self->server_->metrics.AuthFailure("tls_handshake").Increment();
                                     spdlog::warn("router.native_auth_failed peer={} reason=tls_handshake",
                                                  self->peer_);
                                     return self->Close();
                                   }
                                   self->Greet();
                                 });
}

void Connection::Greet() {
  greeted_ = true;
  server_nonce_ = kvapi::RandomNonce();
  pb::KvApiServerFrame frame;
  frame.mutable_challenge()->set_protocol_version(kvapi::kProtocolVersion);
  frame.mutable_challenge()->set_server_nonce(server_nonce_);
  if (!Enqueue(frame, limits::kNativeHandshakeFrameBytesMax)) return;
  Read();
}

void Connection::Close() {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  boost::system::error_code ignored;
  stream_.next_layer().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  stream_.next_layer().close(ignored);
  timer_.cancel();
  out_.clear();
  queue_bytes_ = 0;
}

void Connection::Read() {
  if (phase_ == Phase::kClosed) return;
  std::span<char> space;
  if (phase_ == Phase::kClosing) {
    discard_.resize(kDiscardChunkBytes);
    space = std::span<char>(discard_.data(), discard_.size());
  } else {
    space = decoder_.Prepare(kReadChunkBytes);
  }
  stream_.With([&](auto& stream) {
    stream.async_read_some(asio::buffer(space.data(), space.size()),
                           [self = shared_from_this()](const boost::system::error_code& error, size_t n) {
                             if (self->phase_ == Phase::kClosed) return;
                             if (error) {
                               if (self->phase_ != Phase::kClosing && self->decoder_.buffered_bytes() > 0) {
                                 self->server_->metrics.Malformed("truncated").Increment();
                               }
                               return self->Close();
                             }
                             self->OnBytes(n);
                           });
  });
}

void Connection::OnBytes(size_t n) {
  if (phase_ == Phase::kClosing) {
    discarded_bytes_ += n;
    if (discarded_bytes_ > limits::kNativeLingerBytesMax) return Close();
    return Read();
  }
  decoder_.Commit(n);
  std::string_view payload;
  while (phase_ == Phase::kHandshake || phase_ == Phase::kOpen) {
    const rpc::FrameDecoder::Outcome outcome = decoder_.Next(&payload);
    if (outcome == rpc::FrameDecoder::Outcome::kNeedMore) break;
    if (outcome == rpc::FrameDecoder::Outcome::kTooLarge) {
      Malformed("too_large", "frame too large: " + decoder_.error_detail());
    } else if (outcome == rpc::FrameDecoder::Outcome::kBadChecksum) {
      Malformed("bad_checksum", "frame checksum mismatch: " + decoder_.error_detail());
    } else {
      OnFrame(payload);
    }
  }
  Read();
}

void Connection::OnFrame(std::string_view payload) {
  pb::KvApiClientFrame frame;
  if (!frame.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return Malformed("bad_message", "frame payload is not a KvApiClientFrame");
  }
  if (phase_ == Phase::kHandshake) {
    if (!frame.has_hello()) {
      return AuthFailed("expected_hello", kUnauthenticated, "authenticate with a Hello first");
    }
    return OnHello(frame.hello());
  }
  if (!frame.has_request()) return Malformed("bad_message", "expected a request");
  OnRequest(std::move(*frame.mutable_request()));
}

void Connection::OnHello(const pb::KvApiHello& hello) {
  if (hello.protocol_version() != kvapi::kProtocolVersion) {
    return AuthFailed("bad_version", kUnauthenticated,
                      "protocol version " + std::to_string(hello.protocol_version()) + " not supported (want 1)");
  }
  if (hello.client_nonce().size() != kvapi::kNonceBytes || hello.proof().size() != kvapi::kProofBytes ||
      hello.access_key().empty()) {
    return AuthFailed("bad_hello", kUnauthenticated, "malformed Hello");
  }
  const std::string* secret = server_->credentials.SecretOf(hello.access_key());
  if (secret == nullptr) return AuthFailed("unknown_key", kPermissionDenied, "unknown access key");
  const std::string expected =
      kvapi::HelloProof(*secret, server_nonce_, hello.client_nonce(), hello.access_key());
  if (!kvapi::ProofEquals(expected, hello.proof())) {
    return AuthFailed("bad_proof", kPermissionDenied, "bad proof (wrong secret key?)");
  }
  phase_ = Phase::kOpen;
  grant_ = *server_->credentials.GrantOf(hello.access_key());
  timer_.cancel();
  decoder_.set_frame_bytes_max(limits::kNativeFrameBytesMax);
  pb::KvApiServerFrame frame;
  frame.mutable_welcome()->set_code(0);
  frame.mutable_welcome()->set_proof(
      kvapi::WelcomeProof(*secret, server_nonce_, hello.client_nonce(), hello.access_key()));
  spdlog::debug("router.native_authenticated peer={} access_key={}", peer_, hello.access_key());
  Enqueue(frame, limits::kNativeHandshakeFrameBytesMax);
}

void Connection::OnRequest(pb::KvApiRequest request) {
  server_->metrics.requests.Increment();
  const uint64_t id = request.request_id();
  if (id == 0) return Malformed("bad_request", "request_id 0 is reserved");
  if (inflight_ >= server_->options.inflight_requests_max) {
    server_->metrics.throttled.Increment();
    pb::KvApiServerFrame frame;
    *frame.mutable_response() =
        ErrorResponse(id, Status::Throttled(std::to_string(inflight_) + " requests in flight on this connection"));
    Enqueue(frame, limits::kNativeResponseFrameBytesMax);
    return;
  }
  ++inflight_;
  server_->handler.Handle(std::move(request), grant_, [self = shared_from_this()](pb::KvApiResponse response) {
    asio::post(self->strand_, [self, response = std::move(response)]() mutable {
      self->OnAnswer(std::move(response));
    });
  });
}

void Connection::OnAnswer(pb::KvApiResponse response) {
  TESSERA_CHECK(inflight_ > 0);
  --inflight_;
  if (phase_ != Phase::kOpen) return;
  pb::KvApiServerFrame frame;
  *frame.mutable_response() = std::move(response);
  const size_t bytes = frame.ByteSizeLong();
  if (bytes > limits::kNativeResponseFrameBytesMax) {
    const uint64_t id = frame.response().request_id();
    *frame.mutable_response() = ErrorResponse(
        id, Status::InvalidArgument("answer of " + std::to_string(bytes) + " bytes exceeds the frame limit of " +
                                    std::to_string(limits::kNativeResponseFrameBytesMax) +
                                    "; ask for fewer scan items"));
  }
  Enqueue(frame, limits::kNativeResponseFrameBytesMax);
}

bool Connection::Enqueue(const pb::KvApiServerFrame& frame, size_t frame_bytes_max) {
  if (phase_ == Phase::kClosed) return false;
  Result<std::string> bytes = kvapi::EncodeFrame(frame, frame_bytes_max);
  TESSERA_CHECK(bytes.ok());  // callers bound what they send
  queue_bytes_ += bytes->size();
  if (queue_bytes_ > server_->options.queue_bytes_max) {
    spdlog::warn("router.native_slow_client peer={} queued_bytes={}", peer_, queue_bytes_);
    Close();
    return false;
  }
  out_.push_back(std::move(*bytes));
  if (!writing_) Write();
  return true;
}

void Connection::Write() {
  if (phase_ == Phase::kClosed) return;
  if (out_.empty()) {
    writing_ = false;
    if (phase_ == Phase::kClosing) StartLinger();
    return;
  }
  writing_ = true;
  stream_.With([&](auto& stream) {
    asio::async_write(stream, asio::buffer(out_.front()),
                      [self = shared_from_this()](const boost::system::error_code& error, size_t) {
                        if (self->phase_ == Phase::kClosed) return;
                        if (error) return self->Close();
                        self->queue_bytes_ -= self->out_.front().size();
                        self->out_.pop_front();
                        self->Write();
                      });
  });
}

void Connection::Refuse(const pb::KvApiServerFrame& last) {
  if (phase_ == Phase::kClosing || phase_ == Phase::kClosed) return;
  if (!Enqueue(last, limits::kNativeHandshakeFrameBytesMax)) return;
  phase_ = Phase::kClosing;
  timer_.expires_after(std::chrono::milliseconds(limits::kNativeLingerMs));
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
    if (!error) self->Close();
  });
  if (!writing_) StartLinger();
}

void Connection::StartLinger() {
  boost::system::error_code ignored;
  stream_.next_layer().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
}

void Connection::AuthFailed(const char* reason, uint32_t code, const std::string& message) {
  server_->metrics.AuthFailure(reason).Increment();
  spdlog::warn("router.native_auth_failed peer={} reason={}", peer_, reason);
  pb::KvApiServerFrame frame;
  frame.mutable_welcome()->set_code(code);
  frame.mutable_welcome()->set_message(message);
  Refuse(frame);
}

void Connection::Malformed(const char* reason, const std::string& detail) {
  server_->metrics.Malformed(reason).Increment();
  spdlog::warn("router.native_malformed_frame peer={} reason={} detail=\"{}\"", peer_, reason, detail);
  Refuse(ConnectionError(static_cast<uint32_t>(StatusCode::kInvalidArgument), detail));
}

}  // namespace tessera::router::native_internal
