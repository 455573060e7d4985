// Link (internal): the framed byte stream of one connected socket, shared
// by server connections and channels. It reads and verifies frames and
// hands their payloads to its owner; it writes queued frames, everything
// queued while a write is in flight going out in the next single gather
// write (batching), honouring release times (fault-injected delays).
//
// Contract:
//  1. on_frame gets verified payloads in stream order: a large one
//     (rpc::kOwnedFrameBytesMin or more) with the buffer it was received
//     into, which the callee may keep; otherwise `owned` is empty and the
//     view is valid during the call only. on_closed is called
//     at most once, when the link fails by itself: end of stream, I/O
//     error, or a frame that is too large, fails its checksum or is cut off
//     by the end of the stream (those three are logged as
//     rpc.malformed_frame and counted). It is not called after Close().
//  2. Every budgeted frame handed to Enqueue has its QueueBudget released
//     exactly once: when written, or when Close() (also via failure)
//     discards it.
//  3. After Close() no callback runs and nothing more is read or written;
//     the socket is closed at once. Callbacks are destroyed on the strand
//     shortly after, which breaks owner <-> link reference cycles.
//
// Thread safety: every method must be called on the socket's strand, the
// executor of `socket`. Completion handlers keep the link alive.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rpc/frame.h"
#include "rpc/outbound_queue.h"
#include "rpc/rpc_metrics.h"

namespace tessera::rpc::internal {

namespace asio = boost::asio;
using Strand = asio::strand<asio::io_context::executor_type>;

// Per-owner totals across the owner's successive links.
struct LinkCounters {
  std::atomic<uint64_t> frames_sent{0};
  std::atomic<uint64_t> bytes_sent{0};
  std::atomic<uint64_t> writes{0};
  std::atomic<uint64_t> frames_received{0};
  std::atomic<uint64_t> bytes_received{0};
};

// "ip:port" of the socket's peer, or "unknown".
std::string RemoteAddress(const asio::ip::tcp::socket& socket);

class Link : public std::enable_shared_from_this<Link> {
 public:
  struct Callbacks {
    // `crc32c`: the payload's verified CRC-32C.
    std::function<void(std::string_view payload, SharedBytes owned, uint32_t crc32c)> on_frame;
    // `reason`: eof, io_error, truncated, too_large, bad_checksum.
    std::function<void(std::string_view reason, std::string_view detail)> on_closed;
  };

  Link(asio::ip::tcp::socket socket, std::shared_ptr<const RpcMetrics> metrics,
       std::shared_ptr<QueueBudget> budget, std::shared_ptr<LinkCounters> counters);

  // Starts reading. Frames longer than `frame_bytes_max` fail the link.
  void Start(Callbacks callbacks, size_t frame_bytes_max);
  void set_frame_bytes_max(size_t frame_bytes_max);

  // Queues `frame` (or every frame of `frames`, in order) for writing;
  // discards them if closed.
  void Enqueue(OutFrame frame);
  void EnqueueAll(std::deque<OutFrame> frames);

  void Close();
  bool closed() const { return closed_; }
  const std::string& peer_address() const { return peer_address_; }

 private:
  void ReadMore();
  void OnRead(const boost::system::error_code& error, size_t bytes);
  void DeliverFrames();
  void MaybeWrite();
  void OnWritten(const boost::system::error_code& error, size_t bytes);
  void ArmReleaseTimer();
  void Fail(std::string_view reason, std::string_view detail);

  asio::ip::tcp::socket socket_;
  asio::steady_timer release_timer_;
  const std::shared_ptr<const RpcMetrics> metrics_;
  const std::shared_ptr<QueueBudget> budget_;
  const std::shared_ptr<LinkCounters> counters_;
  const std::string peer_address_;
  Callbacks callbacks_;
  FrameDecoder decoder_;
  OutboundQueue queue_;
  std::vector<OutFrame> writing_;                // the batch being written
  std::vector<asio::const_buffer> write_buffers_;  // views of writing_
  bool write_in_flight_ = false;
  bool release_timer_armed_ = false;
  bool closed_ = false;
};

}  // namespace tessera::rpc::internal
