#include "client/kv_connection.h"

#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/write.hpp>

#include "client/kv_api_wire.h"
#include "client/kv_request_codec.h"
#include "common/check.h"
#include "common/limits.h"

namespace tessera::kvapi {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunkBytes = 64 << 10;
constexpr auto kSweepInterval = std::chrono::milliseconds(20);

}  // namespace

KvConnection::KvConnection(KvClientOptions options)
    : options_(options),
      work_(asio::make_work_guard(io_)),
      timer_(io_),
      decoder_(limits::kNativeHandshakeFrameBytesMax) {
  thread_ = std::thread([this] { io_.run(); });
}

KvConnection::~KvConnection() { Shutdown(); }

KvStatus KvConnection::Connect(const std::string& host, uint16_t port, const std::string& access_key,
                               const std::string& secret_key) {
  if (!options_.tls_ca_file.empty()) {
    tls_context_ = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    boost::system::error_code ec;
    tls_context_->load_verify_file(options_.tls_ca_file, ec);
    if (!ec && SSL_CTX_set_min_proto_version(tls_context_->native_handle(), TLS1_2_VERSION) != 1) {
      ec = asio::error::invalid_argument;
    }
    if (ec) return KvStatus(KvCode::kInvalidArgument, "tls_ca_file " + options_.tls_ca_file + ": " + ec.message());
    tls_context_->set_verify_mode(asio::ssl::verify_peer);
  }
  std::promise<KvStatus> promise;
  std::future<KvStatus> future = promise.get_future();
  asio::post(io_, [this, host, port, access_key, secret_key, promise = std::move(promise)]() mutable {
    access_key_ = access_key;
    secret_key_ = secret_key;
    connect_done_.emplace(std::move(promise));
    StartConnect(host, port);
  });
  return future.get();  // the connect timer bounds the wait
}

void KvConnection::StartConnect(const std::string& host, uint16_t port) {
  timer_.expires_after(std::chrono::milliseconds(options_.connect_timeout_ms));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || phase_ == Phase::kOpen || phase_ == Phase::kClosed) return;
    FinishConnect(KvStatus(KvCode::kTimeout, "no authenticated connection within " +
                                                 std::to_string(options_.connect_timeout_ms) + " ms"));
  });
  boost::system::error_code ec;
  asio::ip::tcp::resolver resolver(io_);
  const auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) return FinishConnect(KvStatus(KvCode::kIOError, "resolve " + host + ": " + ec.message()));
  asio::ip::tcp::socket socket(io_);
  stream_ = tls_context_ ? std::make_unique<MaybeTlsStream<asio::ip::tcp::socket>>(std::move(socket), *tls_context_)
                         : std::make_unique<MaybeTlsStream<asio::ip::tcp::socket>>(std::move(socket));
  asio::async_connect(stream_->next_layer(), endpoints,
                      [this, host, port](const boost::system::error_code& error, const asio::ip::tcp::endpoint&) {
                        if (phase_ != Phase::kConnecting) return;
                        if (error) {
                          return FinishConnect(KvStatus(KvCode::kIOError, "connect to " + host + ":" +
                                                                              std::to_string(port) + ": " +
                                                                              error.message()));
                        }
                        OnTcpConnected(host);
                      });
}

void KvConnection::OnTcpConnected(const std::string& host) {
  boost::system::error_code ignored;
  stream_->next_layer().set_option(asio::ip::tcp::no_delay(true), ignored);
  if (!stream_->is_tls()) {
    phase_ = Phase::kAwaitChallenge;
    return Read();
  }
  SSL_set_tlsext_host_name(stream_->tls()->native_handle(), host.c_str());
  stream_->tls()->set_verify_callback(asio::ssl::host_name_verification(host));
  stream_->tls()->async_handshake(asio::ssl::stream_base::client, [this, host](const boost::system::error_code& error) {
    if (phase_ != Phase::kConnecting) return;
    if (error) return FinishConnect(KvStatus(KvCode::kIOError, "TLS with " + host + ": " + error.message()));
    phase_ = Phase::kAwaitChallenge;
    Read();
  });
}

// Ends the handshake: open on OK, closed otherwise.
void KvConnection::FinishConnect(KvStatus status) {
  if (!connect_done_) return;
  if (!status.ok()) return Fail(std::move(status));  // Fail completes connect_done_
  phase_ = Phase::kOpen;
  open_ = true;
  decoder_.set_frame_bytes_max(limits::kNativeResponseFrameBytesMax);
  timer_.cancel();
  StartSweep();
  connect_done_->set_value(KvStatus());
  connect_done_.reset();
}

void KvConnection::Read() {
  const std::span<char> space = decoder_.Prepare(kReadChunkBytes);
  stream_->With([&](auto& stream) {
    stream.async_read_some(asio::buffer(space.data(), space.size()),
                           [this](const boost::system::error_code& ec, size_t n) { OnRead(ec, n); });
  });
}

void KvConnection::OnRead(const boost::system::error_code& ec, size_t n) {
  if (phase_ == Phase::kClosed) return;
  if (ec) {
    const char* what = phase_ == Phase::kOpen ? "connection lost: " : "connection closed during the handshake: ";
    return Fail(KvStatus(KvCode::kIOError, what + ec.message()));
  }
  decoder_.Commit(n);
  std::string_view payload;
  for (;;) {
    const rpc::FrameDecoder::Outcome outcome = decoder_.Next(&payload);
    if (outcome == rpc::FrameDecoder::Outcome::kNeedMore) break;
    if (outcome != rpc::FrameDecoder::Outcome::kFrame) {
      return Fail(KvStatus(KvCode::kCorruption, "malformed frame from the router: " + decoder_.error_detail()));
    }
    OnFrame(payload);
    if (phase_ == Phase::kClosed) return;
  }
  Read();
}

void KvConnection::OnFrame(std::string_view payload) {
  pb::KvApiServerFrame frame;
  if (!frame.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return Fail(KvStatus(KvCode::kCorruption, "unparsable frame from the router"));
  }
  switch (phase_) {
    case Phase::kAwaitChallenge:
      if (frame.has_challenge()) return OnChallenge(frame.challenge());
      break;
    case Phase::kAwaitWelcome:
      if (frame.has_welcome()) return OnWelcome(frame.welcome());
      break;
    case Phase::kOpen:
      if (frame.has_response()) return OnResponse(frame.response());
      break;
    default:
      return;
  }
  if (frame.has_response() && frame.response().request_id() == 0) {  // the router refused us
    return Fail(KvStatus(CodeFromWire(frame.response().code()), frame.response().message()));
  }
  Fail(KvStatus(KvCode::kCorruption, "unexpected frame from the router"));
}

void KvConnection::OnChallenge(const pb::KvApiChallenge& challenge) {
  if (challenge.protocol_version() != kProtocolVersion || challenge.server_nonce().size() != kNonceBytes) {
    return FinishConnect(KvStatus(KvCode::kCorruption, "bad challenge from the router"));
  }
  server_nonce_ = challenge.server_nonce();
  client_nonce_ = RandomNonce();
  pb::KvApiClientFrame frame;
  pb::KvApiHello* hello = frame.mutable_hello();
  hello->set_protocol_version(kProtocolVersion);
  hello->set_access_key(access_key_);
  hello->set_client_nonce(client_nonce_);
  hello->set_proof(HelloProof(secret_key_, server_nonce_, client_nonce_, access_key_));
  phase_ = Phase::kAwaitWelcome;
  Send(frame, limits::kNativeHandshakeFrameBytesMax);
}

void KvConnection::OnWelcome(const pb::KvApiWelcome& welcome) {
  if (welcome.code() != 0) {
    return FinishConnect(KvStatus(CodeFromWire(welcome.code()), welcome.message()));
  }
  const std::string expected = WelcomeProof(secret_key_, server_nonce_, client_nonce_, access_key_);
  if (!ProofEquals(expected, welcome.proof())) {
    return FinishConnect(KvStatus(KvCode::kPermissionDenied, "the router did not prove it knows the secret"));
  }
  FinishConnect(KvStatus());
}

void KvConnection::OnResponse(const pb::KvApiResponse& response) {
  if (response.request_id() == 0) {
    return Fail(KvStatus(CodeFromWire(response.code()), "router closed the connection: " + response.message()));
  }
  const auto it = pending_.find(response.request_id());
  if (it == pending_.end()) return;  // answered after its deadline
  Pending pending = std::move(it->second);
  pending_.erase(it);
  pending.done(FromProto(response, pending.op));
}

void KvConnection::Send(const google::protobuf::MessageLite& message, size_t frame_bytes_max) {
  Result<std::string> frame = EncodeFrame(message, frame_bytes_max);
  TESSERA_CHECK(frame.ok());  // callers bound what they send
  out_.push_back(std::move(*frame));
  if (!writing_) Write();
}

void KvConnection::Write() {
  if (out_.empty() || phase_ == Phase::kClosed) {
    writing_ = false;
    return;
  }
  writing_ = true;
  stream_->With([&](auto& stream) {
    asio::async_write(stream, asio::buffer(out_.front()), [this](const boost::system::error_code& ec, size_t) {
      if (phase_ == Phase::kClosed) return;
      if (ec) return Fail(KvStatus(KvCode::kIOError, "connection lost: " + ec.message()));
      out_.pop_front();
      Write();
    });
  });
}

void KvConnection::Fail(KvStatus status) {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  open_ = false;
  lost_ = status;
  if (stream_ != nullptr) {
    boost::system::error_code ignored;
    stream_->next_layer().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    stream_->next_layer().close(ignored);
  }
  timer_.cancel();
  out_.clear();
  std::map<uint64_t, Pending> pending;
  pending.swap(pending_);
  for (auto& [id, p] : pending) p.done(status);
  if (connect_done_) {
    connect_done_->set_value(std::move(status));
    connect_done_.reset();
  }
}

void KvConnection::StartSweep() {
  timer_.expires_after(kSweepInterval);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || phase_ != Phase::kOpen) return;
    const Clock::time_point now = Clock::now();
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.deadline > now) {
        ++it;
        continue;
      }
      Callback done = std::move(it->second.done);
      it = pending_.erase(it);
      done(KvStatus(KvCode::kTimeout, "no answer within " + std::to_string(options_.request_timeout_ms) +
                                          " ms (a write's outcome is unknown)"));
    }
    StartSweep();
  });
}

void KvConnection::Submit(KvRequest request, Callback done) {
  asio::post(io_, [this, request = std::move(request), done = std::move(done)]() mutable {
    SubmitOnIoThread(std::move(request), std::move(done));
  });
}

void KvConnection::SubmitOnIoThread(KvRequest request, Callback done) {
  if (phase_ != Phase::kOpen) {
    return done(lost_.ok() ? KvStatus(KvCode::kIOError, "not connected") : lost_);
  }
  if (pending_.size() >= options_.inflight_max) {
    return done(KvStatus(KvCode::kThrottled, std::to_string(pending_.size()) + " requests already in flight"));
  }
  const uint64_t id = next_request_id_++;
  KvResult<pb::KvApiRequest> wire = ToProto(request, id);
  if (!wire.ok()) return done(wire.status());
  pb::KvApiClientFrame frame;
  *frame.mutable_request() = std::move(*wire);
  if (frame.ByteSizeLong() > limits::kNativeFrameBytesMax) {
    return done(KvStatus(KvCode::kInvalidArgument, "request exceeds the frame limit of " +
                                                       std::to_string(limits::kNativeFrameBytesMax) + " bytes"));
  }
  pending_.emplace(id, Pending{request.op, std::move(done),
                               Clock::now() + std::chrono::milliseconds(options_.request_timeout_ms)});
  Send(frame, limits::kNativeFrameBytesMax);
}

void KvConnection::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  TESSERA_CHECK(std::this_thread::get_id() != thread_.get_id() && "KvClient destroyed from its callback");
  asio::post(io_, [this] { Fail(KvStatus(KvCode::kAborted, "client closed")); });
  work_.reset();
  thread_.join();
}

}  // namespace tessera::kvapi
