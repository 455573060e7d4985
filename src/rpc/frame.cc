#include "rpc/frame.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/big_endian.h"
#include "common/check.h"
#include "common/crc32c.h"

namespace tessera::rpc {
namespace {

// Above this, an empty decode buffer is given back to the allocator, so one
// large frame does not pin its memory for the connection's lifetime.
constexpr size_t kShrinkAboveBytes = 1 << 20;

}  // namespace

Result<std::string> EncodeFrame(const pb::Envelope& envelope, size_t frame_bytes_max) {
  TESSERA_CHECK(frame_bytes_max <= UINT32_MAX);
  const size_t payload_bytes = envelope.ByteSizeLong();
  if (payload_bytes > frame_bytes_max) {
    return Status::InvalidArgument("rpc frame of " + std::to_string(payload_bytes) +
                                   " bytes exceeds the maximum of " +
                                   std::to_string(frame_bytes_max));
  }
  std::string frame(kFrameHeaderBytes + payload_bytes, '\0');
  auto* payload = reinterpret_cast<uint8_t*>(frame.data() + kFrameHeaderBytes);
  envelope.SerializeWithCachedSizesToArray(payload);
  const uint32_t crc = Crc32c(std::string_view(frame.data() + kFrameHeaderBytes, payload_bytes));
  StoreBigEndian32(frame.data(), static_cast<uint32_t>(payload_bytes));
  StoreBigEndian32(frame.data() + 4, crc);
  return frame;
}

void AppendLengthDelimitedFieldHeader(std::string* out, int field_number, uint64_t length) {
  TESSERA_CHECK(field_number >= 1 && field_number <= 15);
  out->push_back(static_cast<char>((field_number << 3) | 2));  // wire type 2
  for (;; length >>= 7) {
    const bool last = length < 0x80;
    out->push_back(static_cast<char>((length & 0x7F) | (last ? 0 : 0x80)));
    if (last) return;
  }
}

Result<std::string> EncodeFrameSplit(const pb::Envelope& envelope, const SplitPayload& payload,
                                     size_t frame_bytes_max) {
  TESSERA_CHECK(frame_bytes_max <= UINT32_MAX);
  TESSERA_CHECK(envelope.payload().empty());
  const size_t envelope_bytes = envelope.ByteSizeLong();
  const uint64_t payload_length = payload.head.size() + payload.tail.size();
  std::string field_header;
  AppendLengthDelimitedFieldHeader(&field_header, pb::Envelope::kPayloadFieldNumber,
                                   payload_length);
  const uint64_t frame_payload_bytes = envelope_bytes + field_header.size() + payload_length;
  if (frame_payload_bytes > frame_bytes_max) {
    return Status::InvalidArgument("rpc frame of " + std::to_string(frame_payload_bytes) +
                                   " bytes exceeds the maximum of " +
                                   std::to_string(frame_bytes_max));
  }
  std::string frame(kFrameHeaderBytes + envelope_bytes, '\0');
  envelope.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(frame.data() + kFrameHeaderBytes));
  frame.append(field_header);
  frame.append(payload.head);
  const uint32_t crc =
      Crc32cCombine(Crc32c(std::string_view(frame).substr(kFrameHeaderBytes)),
                    payload.tail_crc32c, payload.tail.size());
  StoreBigEndian32(frame.data(), static_cast<uint32_t>(frame_payload_bytes));
  StoreBigEndian32(frame.data() + 4, crc);
  return frame;
}

FrameDecoder::FrameDecoder(size_t frame_bytes_max) : frame_bytes_max_(frame_bytes_max) {}

std::span<char> FrameDecoder::Prepare(size_t min_bytes) {
  delivered_ = SharedBytes();
  if (!owned_.empty()) {
    return std::span<char>(owned_.mutable_data() + owned_filled_, owned_.size() - owned_filled_);
  }
  const size_t buffered = end_ - begin_;
  const size_t lacking = wanted_ > buffered ? wanted_ - buffered : 0;
  const size_t need = std::max(min_bytes, lacking);
  if (buffered == 0 && capacity_ > kShrinkAboveBytes && need <= kShrinkAboveBytes) {
    buffer_.reset();
    capacity_ = 0;
    begin_ = end_ = 0;
  }
  if (capacity_ - end_ < need) {
    if (begin_ > 0) {
      std::memmove(buffer_.get(), buffer_.get() + begin_, buffered);
      begin_ = 0;
      end_ = buffered;
    }
    if (capacity_ - end_ < need) Grow(end_ + need);
  }
  return std::span<char>(buffer_.get() + end_, capacity_ - end_);
}

void FrameDecoder::Grow(size_t bytes) {
  // Geometric, as a vector grows, so a frame arriving in many small reads
  // is not copied once per read.
  const size_t capacity = std::max(bytes, capacity_ + capacity_ / 2);
  auto grown = std::make_unique_for_overwrite<char[]>(capacity);
  if (end_ > 0) std::memcpy(grown.get(), buffer_.get(), end_);
  buffer_ = std::move(grown);
  capacity_ = capacity;
}

void FrameDecoder::Commit(size_t n) {
  if (!owned_.empty()) {
    TESSERA_CHECK(n <= owned_.size() - owned_filled_);
    owned_filled_ += n;
    return;
  }
  TESSERA_CHECK(n <= capacity_ - end_);
  end_ += n;
}

void FrameDecoder::StartOwnedFrame(uint32_t length, uint32_t crc) {
  owned_ = SharedBytes::UninitializedEndAligned(length, kOwnedFrameEndAlignment);
  owned_crc_ = crc;
  const size_t buffered_body = end_ - begin_ - kFrameHeaderBytes;
  owned_filled_ = std::min<size_t>(buffered_body, length);
  std::memcpy(owned_.mutable_data(), buffer_.get() + begin_ + kFrameHeaderBytes, owned_filled_);
  begin_ += kFrameHeaderBytes + owned_filled_;
  wanted_ = 0;
  if (begin_ == end_) begin_ = end_ = 0;
}

FrameDecoder::Outcome FrameDecoder::BadChecksum(std::string_view body, uint32_t stored_crc) {
  char detail[96];
  std::snprintf(detail, sizeof(detail), "length %zu stored_crc=0x%08x computed_crc=0x%08x",
                body.size(), stored_crc, Crc32c(body));
  error_detail_ = detail;
  return Outcome::kBadChecksum;
}

FrameDecoder::Outcome FrameDecoder::DeliverOwnedFrame(std::string_view* payload, SharedBytes* owner,
                                                      uint32_t* crc32c) {
  if (owned_filled_ < owned_.size()) return Outcome::kNeedMore;
  if (Crc32c(owned_.view()) != owned_crc_) return BadChecksum(owned_.view(), owned_crc_);
  *payload = owned_.view();
  if (crc32c != nullptr) *crc32c = owned_crc_;
  SharedBytes& to = owner != nullptr ? *owner : delivered_;
  to = std::move(owned_);  // leaves owned_ empty: no frame being received
  owned_filled_ = 0;
  return Outcome::kFrame;
}

FrameDecoder::Outcome FrameDecoder::Next(std::string_view* payload, SharedBytes* owner,
                                         uint32_t* crc32c) {
  if (!owned_.empty()) return DeliverOwnedFrame(payload, owner, crc32c);
  const size_t buffered = end_ - begin_;
  if (buffered < kFrameHeaderBytes) return Outcome::kNeedMore;
  const char* header = buffer_.get() + begin_;
  const uint32_t length = ReadBigEndian32(std::string_view(header, 4));
  const uint32_t stored_crc = ReadBigEndian32(std::string_view(header + 4, 4));
  if (length > frame_bytes_max_) {
    error_detail_ = "length " + std::to_string(length) + " exceeds " +
                    std::to_string(frame_bytes_max_);
    return Outcome::kTooLarge;
  }
  if (length >= kOwnedFrameBytesMin) {
    StartOwnedFrame(length, stored_crc);
    return DeliverOwnedFrame(payload, owner, crc32c);
  }
  wanted_ = kFrameHeaderBytes + length;
  if (buffered < wanted_) return Outcome::kNeedMore;
  const std::string_view body(header + kFrameHeaderBytes, length);
  if (Crc32c(body) != stored_crc) return BadChecksum(body, stored_crc);
  begin_ += wanted_;
  wanted_ = 0;
  if (begin_ == end_) begin_ = end_ = 0;  // the bytes stay put until Prepare()
  *payload = body;
  if (owner != nullptr) *owner = SharedBytes();
  if (crc32c != nullptr) *crc32c = stored_crc;
  return Outcome::kFrame;
}

}  // namespace tessera::rpc
