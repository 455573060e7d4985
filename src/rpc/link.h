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
//  4. With TLS credentials, Start first completes a TLS 1.3 handshake as
//     the given side (rpc/tls.h); frames are read and written only after
//     it, and tls_peer() then names the verified peer. A handshake that
//     fails, or a peer certificate without a role and peer id, fails the
//     link (reasons tls_handshake, tls_identity; counted as auth failures
//     and logged as rpc.tls_failed).
//
// Thread safety: every method must be called on the socket's strand, the
// executor of `socket`. Completion handlers keep the link alive.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpc/frame.h"
#include "rpc/outbound_queue.h"
#include "rpc/rpc_metrics.h"
#include "rpc/tls.h"

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

// Which end of the TLS handshake a link is.
enum class TlsSide { kClient, kServer };

class Link : public std::enable_shared_from_this<Link> {
 public:
  struct Callbacks {
    // `crc32c`: the payload's verified CRC-32C.
    std::function<void(std::string_view payload, SharedBytes owned, uint32_t crc32c)> on_frame;
    // `reason`: eof, io_error, truncated, too_large, bad_checksum.
    std::function<void(std::string_view reason, std::string_view detail)> on_closed;
  };

  // `tls`: null for plain TCP; else the link speaks TLS as `side`
  // (contract 4).
  Link(asio::ip::tcp::socket socket, std::shared_ptr<const RpcMetrics> metrics,
       std::shared_ptr<QueueBudget> budget, std::shared_ptr<LinkCounters> counters,
       std::shared_ptr<const TlsCredentials> tls = nullptr, TlsSide side = TlsSide::kClient);

  // Starts reading (after the TLS handshake, when there is one). Frames
  // longer than `frame_bytes_max` fail the link.
  void Start(Callbacks callbacks, size_t frame_bytes_max);
  void set_frame_bytes_max(size_t frame_bytes_max);

  // Queues `frame` (or every frame of `frames`, in order) for writing;
  // discards them if closed.
  void Enqueue(OutFrame frame);
  void EnqueueAll(std::deque<OutFrame> frames);

  void Close();
  bool closed() const { return closed_; }
  const std::string& peer_address() const { return peer_address_; }
  bool is_tls() const { return tls_ != nullptr; }
  // The verified peer of a TLS link once its handshake completed; nullopt
  // before, and always for plain TCP.
  const std::optional<CertificateIdentity>& tls_peer() const { return tls_peer_; }

 private:
  using TlsStream = asio::ssl::stream<asio::ip::tcp::socket>;
  // Runs `op` on the byte stream: the TLS stream when there is one.
  template <class Op>
  void WithStream(Op&& op) {
    if (tls_ != nullptr) {
      op(*tls_);
    } else {
      op(socket_);
    }
  }
  asio::ip::tcp::socket& tcp_socket() { return tls_ != nullptr ? tls_->next_layer() : socket_; }
  void OnTlsHandshake(const boost::system::error_code& error);
  // A TLS stream encrypts one buffer per write: runs of small buffers in
  // write_buffers_ are joined in tls_staging_ so that a batch still leaves
  // in few records and socket writes.
  void CoalesceForTls();

  void ReadMore();
  void OnRead(const boost::system::error_code& error, size_t bytes);
  void DeliverFrames();
  void MaybeWrite();
  void OnWritten(const boost::system::error_code& error, size_t bytes);
  void ArmReleaseTimer();
  void Fail(std::string_view reason, std::string_view detail);

  asio::ip::tcp::socket socket_;  // moved into tls_ when there is TLS
  asio::steady_timer release_timer_;
  const std::shared_ptr<const TlsCredentials> tls_credentials_;  // keeps the contexts alive
  const TlsSide tls_side_;
  std::unique_ptr<TlsStream> tls_;
  std::optional<CertificateIdentity> tls_peer_;
  std::string tls_staging_;
  const std::shared_ptr<const RpcMetrics> metrics_;
  const std::shared_ptr<QueueBudget> budget_;
  const std::shared_ptr<LinkCounters> counters_;
  const std::string peer_address_;
  Callbacks callbacks_;
  FrameDecoder decoder_;
  OutboundQueue queue_;
  std::vector<OutFrame> writing_;                // the batch being written
  std::vector<asio::const_buffer> write_buffers_;  // views of writing_
  bool secured_ = false;  // plain TCP, or the TLS handshake completed
  bool write_in_flight_ = false;
  bool release_timer_armed_ = false;
  bool closed_ = false;
};

}  // namespace tessera::rpc::internal
