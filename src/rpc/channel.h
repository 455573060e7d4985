// Channel: this process's one connection to one remote peer's RpcServer,
// shared by everything that talks to that peer (all replication groups of a
// node, a router's requests). It connects lazily on the first message,
// reconnects with bounded, jittered exponential backoff, and writes every
// frame queued while a write is in flight in the next single gather write.
//
// Contract:
//  1. Send and Call either refuse the message and return its Status (the
//     callback is then never called) or accept it and return OK:
//       InvalidArgument  bad method name, or the frame would exceed
//                        limits::kRpcFrameBytesMax, or a bad timeout;
//       Throttled        queue_frames_max / queue_bytes_max frames accepted
//                        and not yet written, or pending_calls_max calls
//                        awaiting a response (a full queue pushes back, it
//                        never grows);
//       Unavailable      the channel is waiting out a reconnect backoff
//                        (fail fast; the peer is unreachable right now);
//       Aborted          the channel is closed.
//  2. Accepted one-way messages are written in the order they were accepted
//     (per calling thread; across threads, in the order of the calls), or
//     lost with the connection: messages are at most once, never
//     duplicated. A message may be dropped or delayed by the FaultInjector
//     (rules keyed by ChannelOptions::remote_peer_id).
//  3. An accepted Call's callback runs exactly once, on the channel's
//     strand: with the response payload, or the handler's error status;
//     Timeout when the deadline passes first; Unavailable when the
//     connection fails (or cannot be made) before the response; Aborted
//     when the channel is closed. Callbacks must not block; they may call
//     Send and Call.
//     Every failure states whether the request reached the peer
//     (Status::send_outcome(); decide from it, never from the message):
//       kNotSent            refused by Send/Call (contract 1); or failed
//                           while waiting out a backoff, or because the
//                           connection failed or the channel closed before
//                           its handshake completed: the request was
//                           discarded unwritten;
//       kSentOutcomeUnknown Timeout (the request may have been written, or
//                           may still be written later); the connection
//                           failed or the channel closed after the
//                           handshake;
//       kAnswered           the handler's error status.
//  4. The server must prove the cluster secret and be remote_peer_id
//     (docs/formats/rpc.md, "Handshake"); otherwise the connection fails.
//  5. Close (also run by the destructor) closes the connection and fails
//     pending calls with Aborted, asynchronously: callbacks may run after it
//     returns, so what they capture must outlive the io_context's handlers.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/limits.h"
#include "common/result.h"
#include "common/shared_bytes.h"
#include "rpc/types.h"

namespace tessera::rpc {

namespace internal {
class ChannelCore;
}  // namespace internal

using CallCallback = std::function<void(Result<std::string> response_payload)>;
// A response payload left where it arrived: a large frame's payload is a
// view into the buffer the frame was received into (FrameDecoder's owned
// frames), a small one the received bytes moved in; never copied.
struct ReceivedBytes {
  SharedBytes bytes;
  // Crc32c(bytes), when the frame's verified checksum gave it for the
  // price of the bytes before them (a large payload ending its frame).
  std::optional<uint32_t> crc32c;
};
using BytesCallCallback = std::function<void(Result<ReceivedBytes> response_payload)>;

struct ChannelOptions {
  Identity identity;             // this process
  std::string host;              // the remote server: IP address or host name
  uint16_t port = 0;
  uint32_t remote_peer_id = 0;   // who must answer there; fault rules key on it
  // TCP connect plus handshake; beyond it the attempt fails.
  uint32_t connect_timeout_ms = 5000;
  // Backoff after a failed attempt or a lost connection: the first wait,
  // doubled per consecutive failure up to the max, times a random factor in
  // [0.5, 1).
  uint32_t backoff_initial_ms = 20;
  uint32_t backoff_max_ms = 2000;
  size_t queue_frames_max = limits::kRpcChannelQueueFramesMax;
  size_t queue_bytes_max = limits::kRpcChannelQueueBytesMax;
  size_t pending_calls_max = limits::kRpcPendingCallsMax;
};

// Monotonic counters since creation, and current levels.
struct ChannelStats {
  uint64_t frames_sent = 0;      // data and handshake frames written
  uint64_t bytes_sent = 0;
  uint64_t writes = 0;           // gather writes; frames_sent / writes is the batching
  uint64_t frames_received = 0;
  uint64_t connects = 0;         // handshakes completed
  uint64_t connect_failures = 0;
  uint64_t throttled = 0;        // Send/Call refused with Throttled
  uint64_t fault_dropped = 0;
  uint64_t fault_delayed = 0;
  uint64_t timeouts = 0;
  size_t queued_frames = 0;      // accepted, not yet written
  size_t queued_bytes = 0;
  size_t pending_calls = 0;
};

class Channel {
 public:
  // InvalidArgument for incomplete or out-of-limit options. Connects on the
  // first message.
  static Result<std::unique_ptr<Channel>> Create(RpcContext context, ChannelOptions options);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // A one-way message: the server's handler gets call id 0 and answers
  // nothing.
  Status Send(std::string_view method, std::string payload);

  // A request; `done` gets the response. `timeout`: 1 ms to
  // limits::kRpcCallTimeoutMsMax, counted from now.
  Status Call(std::string_view method, std::string payload, std::chrono::milliseconds timeout,
              CallCallback done);
  // The same request with a payload whose large part is shared with other
  // calls and never copied (frame.h, EncodeFrameSplit): e.g. one blob sent
  // to three replicas.
  Status Call(std::string_view method, SplitPayload payload, std::chrono::milliseconds timeout,
              CallCallback done);
  // The same request, answered with the payload uncopied (BytesCallCallback):
  // for large responses such as blob.read's data.
  Status CallForBytes(std::string_view method, std::string payload,
                      std::chrono::milliseconds timeout, BytesCallCallback done);

  // See contract 5. Idempotent.
  void Close();

  ChannelStats stats() const;
  const ChannelOptions& options() const;

 private:
  explicit Channel(std::shared_ptr<internal::ChannelCore> core);

  std::shared_ptr<internal::ChannelCore> core_;
};

}  // namespace tessera::rpc
