// ChannelCore (internal): the state behind a Channel (channel.h).
//
// State machine, on the strand:
//   kIdle --first message--> kConnecting (resolve + TCP connect)
//   kConnecting --connected--> kAwaitChallenge --Hello sent--> kAwaitWelcome
//   kAwaitWelcome --valid Welcome--> kReady
//   any connecting state or kReady --failure--> kBackoff --timer--> kIdle
//   any --Close--> kClosed
// Messages accepted while connecting wait in backlog_ (their budget is
// held); on failure the backlog is discarded and every pending call fails
// with Unavailable, SendOutcome::kNotSent (nothing was written).
//
// Thread safety: Send, Call, Close and stats run on any thread and only
// touch the atomics and the budget, then post to the strand; everything
// else belongs to the strand.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>

#include "rpc/channel.h"
#include "rpc/link.h"
#include "tessera/rpc.pb.h"

namespace tessera::rpc::internal {

// A response payload as it arrived: the bytes of a small frame, or a view
// into the buffer of a large one (FrameDecoder's owned frames).
using ResponsePayload = std::variant<std::string, ReceivedBytes>;

// A pending call's callback, of either kind (channel.h). The payload
// reaches it uncopied unless a plain CallCallback gets a large frame's
// payload, which it must own as a string.
class CallDone {
 public:
  CallDone() = default;
  CallDone(CallCallback plain) : plain_(std::move(plain)) {}           // NOLINT: implicit
  CallDone(BytesCallCallback bytes) : bytes_(std::move(bytes)) {}      // NOLINT: implicit
  explicit operator bool() const { return plain_ || bytes_; }
  void operator()(Result<ResponsePayload> result);

 private:
  CallCallback plain_;
  BytesCallCallback bytes_;
};

class ChannelCore : public std::enable_shared_from_this<ChannelCore> {
 public:
  ChannelCore(RpcContext context, ChannelOptions options);

  Status Send(std::string_view method, std::string payload);
  Status Call(std::string_view method, std::string payload, std::chrono::milliseconds timeout,
              CallCallback done);
  Status Call(std::string_view method, SplitPayload payload, std::chrono::milliseconds timeout,
              CallCallback done);
  Status CallForBytes(std::string_view method, std::string payload,
                      std::chrono::milliseconds timeout, BytesCallCallback done);
  void Close();
  ChannelStats stats() const;
  const ChannelOptions& options() const { return options_; }

 private:
  enum class State { kIdle, kConnecting, kAwaitChallenge, kAwaitWelcome, kReady, kBackoff, kClosed };
  // A call whose payload is encoded whole into its frame.
  Status StartWholeCall(std::string_view method, std::string payload,
                        std::chrono::milliseconds timeout, CallDone done);
  // Call's checks, bounds and start, for a frame `encode` makes from the
  // call id. A refusal is SendOutcome::kNotSent.
  Status StartCallWith(std::chrono::milliseconds timeout, CallDone done,
                       const std::function<Result<OutFrame>(uint64_t)>& encode);
  Status AcceptCall(std::chrono::milliseconds timeout, CallDone done,
                    const std::function<Result<OutFrame>(uint64_t)>& encode);
  Status AcceptSend(std::string_view method, std::string payload);
  struct PendingCall {
    CallDone done;
    Clock::time_point start;
    asio::steady_timer timer;
  };

  Result<std::string> EncodeRequest(uint64_t call_id, std::string_view method,
                                    std::string payload);
  // Strand: a data frame accepted by Send or Call.
  void Submit(OutFrame frame);
  void StartCall(uint64_t call_id, Clock::time_point start, Clock::time_point deadline,
                 CallDone done, OutFrame frame);
  // Runs the call's callback with `result` (`answered`: a response, whose
  // latency is observed); false when the call is no longer pending.
  bool CompleteCall(uint64_t call_id, Result<ResponsePayload> result, bool answered);
  void FailAllCalls(const Status& status);
  // What a connection that fails (or a channel that closes) in a state
  // that `was_ready` or not tells its pending calls (channel.h, contract 3).
  static SendOutcome PendingCallsOutcome(bool was_ready);
  void DiscardBacklog();

  void StartConnect();
  void OnConnected(uint64_t attempt, const boost::system::error_code& error);
  // `owned`: the buffer a large frame was received into (empty for small
  // ones), which its payload may view.
  void OnFrame(std::string_view frame, SharedBytes owned, uint32_t crc32c);
  void OnChallenge(const pb::Envelope& envelope);
  void OnWelcome(const pb::Envelope& envelope);
  void OnResponse(pb::Envelope& envelope, std::optional<ReceivedBytes> payload);
  void HandshakeFailed(std::string_view reason);
  void Malformed(std::string_view reason);
  void ConnectionFailed(std::string_view reason, std::string_view detail);
  void EnterBackoff();
  void CloseOnStrand();

  const RpcContext context_;
  const ChannelOptions options_;
  const std::string address_;  // host:port, for logs and errors
  const Strand strand_;
  const std::shared_ptr<const RpcMetrics> metrics_;
  const std::shared_ptr<QueueBudget> budget_;
  const std::shared_ptr<LinkCounters> counters_;

  // Any thread.
  std::atomic<bool> closed_{false};
  std::atomic<bool> backing_off_{false};
  std::atomic<uint64_t> next_call_id_{1};
  std::atomic<size_t> pending_calls_{0};
  std::atomic<uint64_t> connects_{0};
  std::atomic<uint64_t> connect_failures_{0};
  std::atomic<uint64_t> throttled_{0};
  std::atomic<uint64_t> fault_dropped_{0};
  std::atomic<uint64_t> fault_delayed_{0};
  std::atomic<uint64_t> timeouts_{0};

  // Strand only.
  State state_ = State::kIdle;
  uint64_t attempt_ = 0;  // identifies the current connect attempt's handlers
  asio::ip::tcp::resolver resolver_;
  asio::ip::tcp::socket socket_;
  asio::steady_timer connect_timer_;
  asio::steady_timer backoff_timer_;
  std::shared_ptr<Link> link_;
  std::deque<OutFrame> backlog_;
  std::unordered_map<uint64_t, PendingCall> calls_;
  std::string server_nonce_;
  std::string client_nonce_;
  uint32_t backoff_ms_ = 0;  // last backoff; 0 after a successful handshake
  uint64_t jitter_state_;
};

}  // namespace tessera::rpc::internal
