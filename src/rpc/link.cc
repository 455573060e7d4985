#include "rpc/link.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "common/limits.h"

namespace tessera::rpc::internal {
namespace {

// Bytes asked of each read; the decoder grows the buffer for larger frames.
constexpr size_t kReadChunkBytes = 64 << 10;
// Buffers below this are copied together before a TLS write; larger ones
// (blob payloads) are encrypted from where they lie.
constexpr size_t kTlsCoalesceBytesMax = 64 << 10;

}  // namespace

std::string RemoteAddress(const asio::ip::tcp::socket& socket) {
  boost::system::error_code error;
  const asio::ip::tcp::endpoint endpoint = socket.remote_endpoint(error);
  if (error) return "unknown";
  return endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

Link::Link(asio::ip::tcp::socket socket, std::shared_ptr<const RpcMetrics> metrics,
           std::shared_ptr<QueueBudget> budget, std::shared_ptr<LinkCounters> counters,
           std::shared_ptr<const TlsCredentials> tls, TlsSide side)
    : socket_(std::move(socket)),
      release_timer_(socket_.get_executor()),
      tls_credentials_(std::move(tls)),
      tls_side_(side),
      metrics_(std::move(metrics)),
      budget_(std::move(budget)),
      counters_(std::move(counters)),
      peer_address_(RemoteAddress(socket_)),
      decoder_(limits::kRpcHandshakeFrameBytesMax) {
  boost::system::error_code ignored;
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
  if (tls_credentials_ != nullptr) {
    asio::ssl::context& context = side == TlsSide::kServer ? tls_credentials_->server_context()
                                                           : tls_credentials_->client_context();
    tls_ = std::make_unique<TlsStream>(std::move(socket_), context);
  }
}

void Link::Start(Callbacks callbacks, size_t frame_bytes_max) {
  callbacks_ = std::move(callbacks);
  decoder_.set_frame_bytes_max(frame_bytes_max);
  if (tls_ == nullptr) {
    secured_ = true;
    ReadMore();
    return;
  }
  tls_->async_handshake(tls_side_ == TlsSide::kServer ? asio::ssl::stream_base::server
                                                      : asio::ssl::stream_base::client,
                        [self = shared_from_this()](const boost::system::error_code& error) {
                          self->OnTlsHandshake(error);
                        });
}

void Link::OnTlsHandshake(const boost::system::error_code& error) {
  if (closed_) return;
  if (error) return Fail("tls_handshake", error.message());
  Result<CertificateIdentity> peer = PeerIdentityOf(tls_->native_handle());
  if (!peer.ok()) return Fail("tls_identity", peer.status().message());
  tls_peer_ = std::move(peer).value();
  secured_ = true;
  ReadMore();
  MaybeWrite();
}

void Link::set_frame_bytes_max(size_t frame_bytes_max) {
  decoder_.set_frame_bytes_max(frame_bytes_max);
}

void Link::ReadMore() {
  const std::span<char> space = decoder_.Prepare(kReadChunkBytes);
  WithStream([&](auto& stream) {
    stream.async_read_some(asio::buffer(space.data(), space.size()),
                           [self = shared_from_this()](const boost::system::error_code& error,
                                                       size_t bytes) { self->OnRead(error, bytes); });
  });
}

void Link::OnRead(const boost::system::error_code& error, size_t bytes) {
  if (closed_) return;
  if (error == asio::error::eof || error == asio::ssl::error::stream_truncated) {
    if (decoder_.buffered_bytes() > 0) {
      Fail("truncated", std::to_string(decoder_.buffered_bytes()) + " bytes of a frame");
    } else {
      Fail("eof", "");
    }
    return;
  }
  if (error) {
    Fail("io_error", error.message());
    return;
  }
  decoder_.Commit(bytes);
  metrics_->bytes_received.Increment(bytes);
  counters_->bytes_received.fetch_add(bytes, std::memory_order_relaxed);
  DeliverFrames();
  if (!closed_) ReadMore();
}

void Link::DeliverFrames() {
  while (!closed_) {
    std::string_view payload;
    SharedBytes owned;
    uint32_t crc32c = 0;
    switch (decoder_.Next(&payload, &owned, &crc32c)) {
      case FrameDecoder::Outcome::kNeedMore:
        return;
      case FrameDecoder::Outcome::kTooLarge:
        Fail("too_large", decoder_.error_detail());
        return;
      case FrameDecoder::Outcome::kBadChecksum:
        Fail("bad_checksum", decoder_.error_detail());
        return;
      case FrameDecoder::Outcome::kFrame:
        metrics_->frames_received.Increment();
        counters_->frames_received.fetch_add(1, std::memory_order_relaxed);
        callbacks_.on_frame(payload, std::move(owned), crc32c);
        break;
    }
  }
}

void Link::Enqueue(OutFrame frame) {
  if (closed_) {
    if (frame.budgeted) budget_->Release(1, frame.size());
    metrics_->discarded_frames.Increment();
    return;
  }
  queue_.Push(std::move(frame));
  MaybeWrite();
}

void Link::EnqueueAll(std::deque<OutFrame> frames) {
  if (closed_) {
    metrics_->discarded_frames.Increment(ReleaseBudget(*budget_, frames));
    return;
  }
  for (OutFrame& frame : frames) queue_.Push(std::move(frame));
  MaybeWrite();
}

void Link::MaybeWrite() {
  if (write_in_flight_ || closed_ || !secured_ || queue_.empty()) return;
  queue_.TakeBatch(Clock::now(), limits::kRpcWriteBatchFramesMax, limits::kRpcWriteBatchBytesMax,
                   &writing_);
  if (writing_.empty()) {
    ArmReleaseTimer();
    return;
  }
  write_buffers_.clear();
  for (const OutFrame& frame : writing_) {
    write_buffers_.push_back(asio::buffer(frame.bytes));
    if (!frame.tail.empty()) write_buffers_.push_back(asio::buffer(frame.tail.data(), frame.tail.size()));
  }
  if (tls_ != nullptr) CoalesceForTls();
  write_in_flight_ = true;
  WithStream([&](auto& stream) {
    asio::async_write(stream, write_buffers_,
                      [self = shared_from_this()](const boost::system::error_code& error,
                                                  size_t bytes) { self->OnWritten(error, bytes); });
  });
}

void Link::CoalesceForTls() {
  size_t small_bytes = 0;
  for (const asio::const_buffer& buffer : write_buffers_) {
    if (buffer.size() < kTlsCoalesceBytesMax) small_bytes += buffer.size();
  }
  tls_staging_.clear();
  tls_staging_.reserve(small_bytes);  // no reallocation below: the views stay valid
  std::vector<asio::const_buffer> joined;
  size_t run_start = std::string::npos;
  const auto end_run = [&] {
    if (run_start == std::string::npos) return;
    joined.push_back(asio::buffer(tls_staging_.data() + run_start, tls_staging_.size() - run_start));
    run_start = std::string::npos;
  };
  for (const asio::const_buffer& buffer : write_buffers_) {
    if (buffer.size() >= kTlsCoalesceBytesMax) {
      end_run();
      joined.push_back(buffer);
      continue;
    }
    if (run_start == std::string::npos) run_start = tls_staging_.size();
    tls_staging_.append(static_cast<const char*>(buffer.data()), buffer.size());
  }
  end_run();
  write_buffers_ = std::move(joined);
}

void Link::OnWritten(const boost::system::error_code& error, size_t bytes) {
  write_in_flight_ = false;
  if (closed_) {  // Close() already released the batch's budget
    writing_.clear();
    return;
  }
  if (error) {
    Fail("io_error", error.message());
    return;
  }
  metrics_->writes.Increment();
  metrics_->frames_sent.Increment(writing_.size());
  metrics_->bytes_sent.Increment(bytes);
  counters_->writes.fetch_add(1, std::memory_order_relaxed);
  counters_->frames_sent.fetch_add(writing_.size(), std::memory_order_relaxed);
  counters_->bytes_sent.fetch_add(bytes, std::memory_order_relaxed);
  ReleaseBudget(*budget_, writing_);
  writing_.clear();
  MaybeWrite();
}

void Link::ArmReleaseTimer() {
  if (release_timer_armed_) return;
  release_timer_armed_ = true;
  release_timer_.expires_at(queue_.head_release());
  release_timer_.async_wait([self = shared_from_this()](const boost::system::error_code&) {
    self->release_timer_armed_ = false;
    self->MaybeWrite();
  });
}

void Link::Close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  tcp_socket().close(ignored);
  release_timer_.cancel();
  const std::deque<OutFrame> unsent = queue_.TakeAll();
  const size_t discarded = ReleaseBudget(*budget_, unsent) + ReleaseBudget(*budget_, writing_);
  metrics_->discarded_frames.Increment(discarded);
  asio::post(release_timer_.get_executor(), [self = shared_from_this()] { self->callbacks_ = {}; });
}

void Link::Fail(std::string_view reason, std::string_view detail) {
  const bool malformed = reason == "truncated" || reason == "too_large" || reason == "bad_checksum";
  if (malformed) {
    metrics_->malformed_frames(reason).Increment();
    spdlog::warn("rpc.malformed_frame side={} peer={} reason={} detail=\"{}\"", metrics_->side(),
                 peer_address_, reason, detail);
  }
  if (reason == "tls_handshake" || reason == "tls_identity") {
    metrics_->auth_failures(reason).Increment();
    spdlog::warn("rpc.tls_failed side={} peer={} reason={} detail=\"{}\"", metrics_->side(),
                 peer_address_, reason, detail);
  }
  Close();
  if (callbacks_.on_closed) callbacks_.on_closed(reason, detail);
}

}  // namespace tessera::rpc::internal
