#include "rpc/link.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "common/limits.h"

namespace tessera::rpc::internal {
namespace {

// Bytes asked of each read; the decoder grows the buffer for larger frames.
constexpr size_t kReadChunkBytes = 64 << 10;

}  // namespace

std::string RemoteAddress(const asio::ip::tcp::socket& socket) {
  boost::system::error_code error;
  const asio::ip::tcp::endpoint endpoint = socket.remote_endpoint(error);
  if (error) return "unknown";
  return endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

Link::Link(asio::ip::tcp::socket socket, std::shared_ptr<const RpcMetrics> metrics,
           std::shared_ptr<QueueBudget> budget, std::shared_ptr<LinkCounters> counters)
    : socket_(std::move(socket)),
      release_timer_(socket_.get_executor()),
      metrics_(std::move(metrics)),
      budget_(std::move(budget)),
      counters_(std::move(counters)),
      peer_address_(RemoteAddress(socket_)),
      decoder_(limits::kRpcHandshakeFrameBytesMax) {
  boost::system::error_code ignored;
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
}

void Link::Start(Callbacks callbacks, size_t frame_bytes_max) {
  callbacks_ = std::move(callbacks);
  decoder_.set_frame_bytes_max(frame_bytes_max);
  ReadMore();
}

void Link::set_frame_bytes_max(size_t frame_bytes_max) {
  decoder_.set_frame_bytes_max(frame_bytes_max);
}

void Link::ReadMore() {
  const std::span<char> space = decoder_.Prepare(kReadChunkBytes);
  socket_.async_read_some(asio::buffer(space.data(), space.size()),
                          [self = shared_from_this()](const boost::system::error_code& error,
                                                      size_t bytes) { self->OnRead(error, bytes); });
}

void Link::OnRead(const boost::system::error_code& error, size_t bytes) {
  if (closed_) return;
  if (error == asio::error::eof) {
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
  if (write_in_flight_ || closed_ || queue_.empty()) return;
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
  write_in_flight_ = true;
  asio::async_write(socket_, write_buffers_,
                    [self = shared_from_this()](const boost::system::error_code& error,
                                                size_t bytes) { self->OnWritten(error, bytes); });
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
  socket_.close(ignored);
  release_timer_.cancel();
  const std::deque<OutFrame> unsent = queue_.TakeAll();
  const size_t discarded = ReleaseBudget(*budget_, unsent) + ReleaseBudget(*budget_, writing_);
  metrics_->discarded_frames.Increment(discarded);
  asio::post(socket_.get_executor(), [self = shared_from_this()] { self->callbacks_ = {}; });
}

void Link::Fail(std::string_view reason, std::string_view detail) {
  const bool malformed = reason == "truncated" || reason == "too_large" || reason == "bad_checksum";
  if (malformed) {
    metrics_->malformed_frames(reason).Increment();
    spdlog::warn("rpc.malformed_frame side={} peer={} reason={} detail=\"{}\"", metrics_->side(),
                 peer_address_, reason, detail);
  }
  Close();
  if (callbacks_.on_closed) callbacks_.on_closed(reason, detail);
}

}  // namespace tessera::rpc::internal
