#include "rpc/channel_core.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <cstring>

#include "common/check.h"
#include "common/crc32c.h"
#include "common/splitmix64.h"
#include "rpc/auth.h"
#include "rpc/tls.h"
#include "rpc/bytes_field.h"
#include "rpc/envelope.h"
#include "rpc/fault_injector.h"

namespace tessera::rpc::internal {
namespace {

// A refusal before the message was queued: it never left this process.
Status Refused(Status status) { return std::move(status).WithSendOutcome(SendOutcome::kNotSent); }

uint64_t RandomSeed() {
  const std::string nonce = RandomNonce();
  uint64_t seed = 0;
  std::memcpy(&seed, nonce.data(), sizeof(seed));
  return seed;
}

}  // namespace

void CallDone::operator()(Result<ResponsePayload> result) {
  if (!result.ok()) {
    if (plain_) return plain_(result.status());
    return bytes_(result.status());
  }
  ResponsePayload& payload = *result;
  if (plain_) {
    if (auto* bytes = std::get_if<std::string>(&payload)) return plain_(std::move(*bytes));
    return plain_(std::string(std::get<ReceivedBytes>(payload).bytes.view()));
  }
  if (auto* received = std::get_if<ReceivedBytes>(&payload)) return bytes_(std::move(*received));
  return bytes_(ReceivedBytes{SharedBytes(std::move(std::get<std::string>(payload))), std::nullopt});
}

ChannelCore::ChannelCore(RpcContext context, ChannelOptions options)
    : context_(context),
      options_(std::move(options)),
      address_(options_.host + ":" + std::to_string(options_.port)),
      strand_(asio::make_strand(context.io)),
      metrics_(std::make_shared<RpcMetrics>(context.metrics, "client")),
      budget_(std::make_shared<QueueBudget>(options_.queue_frames_max, options_.queue_bytes_max)),
      counters_(std::make_shared<LinkCounters>()),
      resolver_(strand_),
      socket_(strand_),
      connect_timer_(strand_),
      backoff_timer_(strand_),
      jitter_state_(RandomSeed()) {}

// --- any thread ----------------------------------------------------------

Result<std::string> ChannelCore::EncodeRequest(uint64_t call_id, std::string_view method,
                                               std::string payload) {
  TESSERA_RETURN_IF_ERROR(ValidateMethod(method));
  return EncodeFrame(MakeRequest(call_id, method, std::move(payload)), limits::kRpcFrameBytesMax);
}

Status ChannelCore::Send(std::string_view method, std::string payload) {
  return Refused(AcceptSend(method, std::move(payload)));
}

Status ChannelCore::AcceptSend(std::string_view method, std::string payload) {
  if (closed_.load()) return Status::Aborted("rpc channel to " + address_ + " is closed");
  if (backing_off_.load()) {
    return Status::Unavailable("rpc channel to " + address_ + " is waiting to reconnect");
  }
  Result<std::string> frame = EncodeRequest(0, method, std::move(payload));
  if (!frame.ok()) return frame.status();
  if (!budget_->TryAcquire(frame->size())) {
    throttled_.fetch_add(1, std::memory_order_relaxed);
    metrics_->throttled.Increment();
    return Status::Throttled("rpc channel queue to " + address_ + " is full");
  }
  asio::post(strand_, [self = shared_from_this(), out = OutFrame{std::move(frame).value()}]() mutable {
    self->Submit(std::move(out));
  });
  return Status::Ok();
}

Status ChannelCore::Call(std::string_view method, std::string payload,
                         std::chrono::milliseconds timeout, CallCallback done) {
  return StartWholeCall(method, std::move(payload), timeout, std::move(done));
}

Status ChannelCore::CallForBytes(std::string_view method, std::string payload,
                                 std::chrono::milliseconds timeout, BytesCallCallback done) {
  return StartWholeCall(method, std::move(payload), timeout, std::move(done));
}

Status ChannelCore::StartWholeCall(std::string_view method, std::string payload,
                                   std::chrono::milliseconds timeout, CallDone done) {
  return StartCallWith(timeout, std::move(done), [&](uint64_t call_id) -> Result<OutFrame> {
    Result<std::string> frame = EncodeRequest(call_id, method, std::move(payload));
    if (!frame.ok()) return frame.status();
    return OutFrame{std::move(frame).value()};
  });
}

Status ChannelCore::Call(std::string_view method, SplitPayload payload,
                         std::chrono::milliseconds timeout, CallCallback done) {
  return StartCallWith(timeout, std::move(done), [&](uint64_t call_id) -> Result<OutFrame> {
    TESSERA_RETURN_IF_ERROR(ValidateMethod(method));
    Result<std::string> frame =
        EncodeFrameSplit(MakeRequest(call_id, method, {}), payload, limits::kRpcFrameBytesMax);
    if (!frame.ok()) return frame.status();
    OutFrame out{std::move(frame).value()};
    out.tail = payload.tail;
    return out;
  });
}

Status ChannelCore::StartCallWith(std::chrono::milliseconds timeout, CallDone done,
                                  const std::function<Result<OutFrame>(uint64_t)>& encode) {
  return Refused(AcceptCall(timeout, std::move(done), encode));
}

Status ChannelCore::AcceptCall(std::chrono::milliseconds timeout, CallDone done,
                               const std::function<Result<OutFrame>(uint64_t)>& encode) {
  if (!done) return Status::InvalidArgument("rpc call without a callback");
  if (timeout.count() < 1 || timeout.count() > limits::kRpcCallTimeoutMsMax) {
    return Status::InvalidArgument("rpc call timeout out of range");
  }
  if (closed_.load()) return Status::Aborted("rpc channel to " + address_ + " is closed");
  if (backing_off_.load()) {
    return Status::Unavailable("rpc channel to " + address_ + " is waiting to reconnect");
  }
  const uint64_t call_id = next_call_id_.fetch_add(1);
  Result<OutFrame> frame = encode(call_id);
  if (!frame.ok()) return frame.status();
  if (pending_calls_.fetch_add(1) >= options_.pending_calls_max) {
    pending_calls_.fetch_sub(1);
    throttled_.fetch_add(1, std::memory_order_relaxed);
    metrics_->throttled.Increment();
    return Status::Throttled("too many pending rpc calls to " + address_);
  }
  if (!budget_->TryAcquire(frame->size())) {
    pending_calls_.fetch_sub(1);
    throttled_.fetch_add(1, std::memory_order_relaxed);
    metrics_->throttled.Increment();
    return Status::Throttled("rpc channel queue to " + address_ + " is full");
  }
  const Clock::time_point start = Clock::now();
  asio::post(strand_, [self = shared_from_this(), call_id, start, deadline = start + timeout,
                       done = std::move(done), out = std::move(frame).value()]() mutable {
    self->StartCall(call_id, start, deadline, std::move(done), std::move(out));
  });
  return Status::Ok();
}

void ChannelCore::Close() {
  if (closed_.exchange(true)) return;
  asio::post(strand_, [self = shared_from_this()] { self->CloseOnStrand(); });
}

ChannelStats ChannelCore::stats() const {
  ChannelStats s;
  s.frames_sent = counters_->frames_sent.load();
  s.bytes_sent = counters_->bytes_sent.load();
  s.writes = counters_->writes.load();
  s.frames_received = counters_->frames_received.load();
  s.connects = connects_.load();
  s.connect_failures = connect_failures_.load();
  s.throttled = throttled_.load();
  s.fault_dropped = fault_dropped_.load();
  s.fault_delayed = fault_delayed_.load();
  s.timeouts = timeouts_.load();
  s.queued_frames = budget_->frames();
  s.queued_bytes = budget_->bytes();
  s.pending_calls = pending_calls_.load();
  return s;
}

// --- strand: messages and calls ------------------------------------------

void ChannelCore::StartCall(uint64_t call_id, Clock::time_point start, Clock::time_point deadline,
                            CallDone done, OutFrame frame) {
  if (state_ == State::kClosed || state_ == State::kBackoff) {
    budget_->Release(1, frame.size());
    const Status status = Refused(
        state_ == State::kClosed
            ? Status::Aborted("rpc channel to " + address_ + " is closed")
            : Status::Unavailable("rpc channel to " + address_ + " is waiting to reconnect"));
    pending_calls_.fetch_sub(1);
    metrics_->calls(status.code()).Increment();
    done(status);
    return;
  }
  auto [it, inserted] =
      calls_.try_emplace(call_id, PendingCall{std::move(done), start, asio::steady_timer(strand_)});
  TESSERA_CHECK(inserted);
  it->second.timer.expires_at(deadline);
  it->second.timer.async_wait(
      [self = shared_from_this(), call_id](const boost::system::error_code& error) {
        if (error || !self->calls_.contains(call_id)) return;
        self->timeouts_.fetch_add(1, std::memory_order_relaxed);  // before the callback runs
        // The request may still be in the backlog, and then be written
        // once a connection is made: its outcome is unknown either way.
        self->CompleteCall(call_id,
                           Status::Timeout("rpc call " + std::to_string(call_id) + " to " +
                                           self->address_ + " timed out")
                               .WithSendOutcome(SendOutcome::kSentOutcomeUnknown),
                           /*answered=*/false);
      });
  Submit(std::move(frame));
}

void ChannelCore::Submit(OutFrame frame) {
  if (state_ == State::kClosed || state_ == State::kBackoff) {
    budget_->Release(1, frame.size());
    metrics_->discarded_frames.Increment();
    return;
  }
  const FaultDecision fault = context_.faults.Decide(options_.remote_peer_id);
  if (fault.drop) {
    budget_->Release(1, frame.size());
    fault_dropped_.fetch_add(1, std::memory_order_relaxed);
    metrics_->fault_dropped_frames.Increment();
    return;
  }
  if (fault.delay_ms > 0) {
    frame.release = Clock::now() + std::chrono::milliseconds(fault.delay_ms);
    fault_delayed_.fetch_add(1, std::memory_order_relaxed);
    metrics_->fault_delayed_frames.Increment();
  }
  if (state_ == State::kReady) {
    link_->Enqueue(std::move(frame));
    return;
  }
  backlog_.push_back(std::move(frame));
  if (state_ == State::kIdle) StartConnect();
}

bool ChannelCore::CompleteCall(uint64_t call_id, Result<ResponsePayload> result, bool answered) {
  const auto it = calls_.find(call_id);
  if (it == calls_.end()) return false;
  CallDone done = std::move(it->second.done);
  const Clock::time_point start = it->second.start;
  calls_.erase(it);  // destroying the timer cancels its wait
  pending_calls_.fetch_sub(1);
  metrics_->calls(result.status().code()).Increment();
  if (answered) {
    metrics_->call_latency_seconds.Observe(
        std::chrono::duration<double>(Clock::now() - start).count());
  }
  done(std::move(result));
  return true;
}

void ChannelCore::FailAllCalls(const Status& status) {
  std::unordered_map<uint64_t, PendingCall> calls;
  calls.swap(calls_);
  for (auto& [call_id, call] : calls) {
    call.timer.cancel();
    pending_calls_.fetch_sub(1);
    metrics_->calls(status.code()).Increment();
    call.done(status);
  }
}

SendOutcome ChannelCore::PendingCallsOutcome(bool was_ready) {
  // Before the handshake completes every data frame waits in backlog_ (a
  // failed connection failed every call before it), so the pending calls'
  // requests are discarded unwritten. A ready link may have written them.
  return was_ready ? SendOutcome::kSentOutcomeUnknown : SendOutcome::kNotSent;
}

void ChannelCore::DiscardBacklog() {
  metrics_->discarded_frames.Increment(ReleaseBudget(*budget_, backlog_));
  backlog_.clear();
}

// --- strand: connection --------------------------------------------------

void ChannelCore::StartConnect() {
  state_ = State::kConnecting;
  const uint64_t attempt = ++attempt_;
  auto self = shared_from_this();
  connect_timer_.expires_after(std::chrono::milliseconds(options_.connect_timeout_ms));
  connect_timer_.async_wait([self, attempt](const boost::system::error_code& error) {
    // The handshake may have completed after the timer expired but before
    // this handler ran: then the connection stands.
    if (!error && attempt == self->attempt_ && self->state_ != State::kReady) {
      self->ConnectionFailed("connect_timeout", "");
    }
  });
  resolver_.async_resolve(
      options_.host, std::to_string(options_.port),
      [self, attempt](const boost::system::error_code& error,
                      const asio::ip::tcp::resolver::results_type& endpoints) {
        if (attempt != self->attempt_ || self->state_ != State::kConnecting) return;
        if (error) return self->ConnectionFailed("resolve_failed", error.message());
        asio::async_connect(self->socket_, endpoints,
                            [self, attempt](const boost::system::error_code& e,
                                            const asio::ip::tcp::endpoint&) {
                              self->OnConnected(attempt, e);
                            });
      });
}

void ChannelCore::OnConnected(uint64_t attempt, const boost::system::error_code& error) {
  if (attempt != attempt_ || state_ != State::kConnecting) return;
  if (error) return ConnectionFailed("connect_failed", error.message());
  link_ = std::make_shared<Link>(std::move(socket_), metrics_, budget_, counters_,
                                 options_.identity.tls, TlsSide::kClient);
  state_ = State::kAwaitChallenge;
  auto self = shared_from_this();
  link_->Start({[self](std::string_view frame, SharedBytes owned, uint32_t crc32c) {
                  self->OnFrame(frame, std::move(owned), crc32c);
                },
                [self](std::string_view reason, std::string_view detail) {
                  const bool in_handshake = self->state_ != State::kReady;
                  self->ConnectionFailed(in_handshake && reason == "eof" ? "closed_in_handshake"
                                                                          : reason,
                                         detail);
                }},
               limits::kRpcHandshakeFrameBytesMax);
}

void ChannelCore::OnFrame(std::string_view frame, SharedBytes owned, uint32_t crc32c) {
  pb::Envelope envelope;
  std::optional<ReceivedBytes> payload;
  bool parsed = false;
  if (owned.empty()) {
    parsed = envelope.ParseFromArray(frame.data(), static_cast<int>(frame.size()));
  } else {
    // A large frame: its payload stays in the buffer it was received into.
    std::string_view field;
    parsed = ParseAroundBytesField(frame, pb::Envelope::kPayloadFieldNumber, &envelope, &field);
    if (parsed) {
      const size_t offset = static_cast<size_t>(field.data() - owned.data());
      payload = ReceivedBytes{owned.Slice(offset, field.size()), std::nullopt};
      // The payload is the envelope's last field when its sender made it a
      // shared tail (SplitPayload): its CRC follows from the frame's.
      if (offset + field.size() == frame.size()) payload->crc32c = Crc32cOfSuffix(crc32c, frame, offset);
    }
  }
  // Handshake frames are small (kRpcHandshakeFrameBytesMax): never owned.
  if (!parsed || (payload && state_ != State::kReady)) {
    if (state_ == State::kReady) return Malformed("bad_envelope");
    return HandshakeFailed(state_ == State::kAwaitChallenge ? "bad_challenge" : "bad_welcome");
  }
  switch (state_) {
    case State::kAwaitChallenge: return OnChallenge(envelope);
    case State::kAwaitWelcome: return OnWelcome(envelope);
    case State::kReady: return OnResponse(envelope, std::move(payload));
    default: return;
  }
}

void ChannelCore::OnChallenge(const pb::Envelope& envelope) {
  pb::Challenge challenge;
  if (envelope.method() != kChallengeMethod || !challenge.ParseFromString(envelope.payload()) ||
      challenge.server_nonce().size() != kNonceBytes) {
    return HandshakeFailed("bad_challenge");
  }
  if (challenge.protocol_version() != kProtocolVersion) return HandshakeFailed("bad_version");
  server_nonce_ = challenge.server_nonce();
  client_nonce_ = RandomNonce();
  const Identity& self = options_.identity;
  pb::Hello hello;
  hello.set_protocol_version(kProtocolVersion);
  hello.set_peer_id(self.peer_id);
  hello.set_role(self.role);
  hello.set_client_nonce(client_nonce_);
  hello.set_mac(HelloMac(self.cluster_secret, server_nonce_, client_nonce_, self.peer_id, self.role));
  Result<std::string> frame = EncodeFrame(MakeRequest(0, kHelloMethod, hello.SerializeAsString()),
                                          limits::kRpcHandshakeFrameBytesMax);
  TESSERA_CHECK(frame.ok());
  link_->Enqueue(OutFrame{std::move(frame).value(), {}, /*budgeted=*/false});
  state_ = State::kAwaitWelcome;
}

void ChannelCore::OnWelcome(const pb::Envelope& envelope) {
  pb::Welcome welcome;
  if (envelope.method() != kWelcomeMethod || !welcome.ParseFromString(envelope.payload())) {
    return HandshakeFailed("bad_welcome");
  }
  const std::string expected = WelcomeMac(options_.identity.cluster_secret, server_nonce_,
                                          client_nonce_, welcome.peer_id(), welcome.role());
  if (!MacEquals(expected, welcome.mac())) return HandshakeFailed("bad_mac");
  if (welcome.peer_id() != options_.remote_peer_id) return HandshakeFailed("wrong_peer");
  // Over TLS the server's certificate must name who the Welcome says.
  if (link_->is_tls() &&
      !(link_->tls_peer() == CertificateIdentity{welcome.role(), welcome.peer_id()})) {
    return HandshakeFailed("certificate_mismatch");
  }

  state_ = State::kReady;
  connect_timer_.cancel();
  backoff_ms_ = 0;
  link_->set_frame_bytes_max(limits::kRpcFrameBytesMax);
  connects_.fetch_add(1);
  metrics_->connections_opened.Increment();
  metrics_->connections.Add(1);
  spdlog::info("rpc.connected peer={} peer_id={} role={} backlog={}", address_, welcome.peer_id(),
               welcome.role(), backlog_.size());
  link_->EnqueueAll(std::move(backlog_));
  backlog_.clear();
}

void ChannelCore::OnResponse(pb::Envelope& envelope, std::optional<ReceivedBytes> payload) {
  if (!envelope.is_response()) return Malformed("unexpected_request");
  Result<std::string> plain = ResultFromResponse(envelope);
  Result<ResponsePayload> result =
      !plain.ok() ? Result<ResponsePayload>(plain.status())
      : payload   ? Result<ResponsePayload>(ResponsePayload(std::move(*payload)))
                  : Result<ResponsePayload>(ResponsePayload(std::move(plain).value()));
  if (!CompleteCall(envelope.call_id(), std::move(result), /*answered=*/true)) {
    metrics_->late_responses.Increment();
  }
}

void ChannelCore::HandshakeFailed(std::string_view reason) {
  metrics_->auth_failures(reason).Increment();
  spdlog::warn("rpc.handshake_failed side=client peer={} peer_id={} reason={}", address_,
               options_.remote_peer_id, reason);
  ConnectionFailed(reason, "handshake refused");
}

void ChannelCore::Malformed(std::string_view reason) {
  metrics_->malformed_frames(reason).Increment();
  spdlog::warn("rpc.malformed_frame side=client peer={} peer_id={} reason={}", address_,
               options_.remote_peer_id, reason);
  ConnectionFailed(reason, "malformed frame");
}

void ChannelCore::ConnectionFailed(std::string_view reason, std::string_view detail) {
  if (state_ == State::kIdle || state_ == State::kBackoff || state_ == State::kClosed) return;
  const bool was_ready = state_ == State::kReady;
  ++attempt_;  // stale handlers of this attempt now return early
  if (link_ != nullptr) link_->Close();
  link_.reset();
  boost::system::error_code ignored;
  socket_.close(ignored);
  resolver_.cancel();
  connect_timer_.cancel();
  if (was_ready) {
    metrics_->connections.Add(-1);
  } else {
    connect_failures_.fetch_add(1);
    metrics_->connect_failures.Increment();
  }
  EnterBackoff();
  if (was_ready) {
    spdlog::warn("rpc.disconnected peer={} peer_id={} reason={} detail=\"{}\" backoff_ms={}",
                 address_, options_.remote_peer_id, reason, detail, backoff_ms_);
  } else {
    spdlog::warn("rpc.connect_failed peer={} peer_id={} reason={} detail=\"{}\" backoff_ms={}",
                 address_, options_.remote_peer_id, reason, detail, backoff_ms_);
  }
  DiscardBacklog();
  FailAllCalls(Status::Unavailable("rpc connection to " + address_ + " failed: " +
                                   std::string(reason))
                   .WithSendOutcome(PendingCallsOutcome(was_ready)));
}

void ChannelCore::EnterBackoff() {
  backoff_ms_ = backoff_ms_ == 0 ? options_.backoff_initial_ms
                                 : std::min(backoff_ms_ * 2, options_.backoff_max_ms);
  // Uniform factor in [0.5, 1) so that peers that failed together do not
  // retry in lockstep.
  const double factor = 0.5 + 0.5 * UnitInterval(SplitMix64Next(jitter_state_));
  const auto wait = std::chrono::milliseconds(
      std::max<int64_t>(1, static_cast<int64_t>(backoff_ms_ * factor)));
  state_ = State::kBackoff;
  backing_off_.store(true);
  backoff_timer_.expires_after(wait);
  backoff_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
    if (error || self->state_ != State::kBackoff) return;
    self->state_ = State::kIdle;
    self->backing_off_.store(false);
  });
}

void ChannelCore::CloseOnStrand() {
  if (state_ == State::kClosed) return;
  const bool was_ready = state_ == State::kReady;
  state_ = State::kClosed;
  ++attempt_;
  if (link_ != nullptr) link_->Close();
  link_.reset();
  boost::system::error_code ignored;
  socket_.close(ignored);
  resolver_.cancel();
  connect_timer_.cancel();
  backoff_timer_.cancel();
  backing_off_.store(false);
  if (was_ready) metrics_->connections.Add(-1);
  DiscardBacklog();
  FailAllCalls(Status::Aborted("rpc channel to " + address_ + " closed")
                   .WithSendOutcome(PendingCallsOutcome(was_ready)));
  spdlog::info("rpc.channel_closed peer={} peer_id={}", address_, options_.remote_peer_id);
}

}  // namespace tessera::rpc::internal
