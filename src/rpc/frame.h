// Frames on an RPC connection (docs/formats/rpc.md): a big-endian u32
// payload length, a big-endian u32 CRC-32C of the payload, the payload (a
// serialized pb::Envelope).
//
// Thread safety: EncodeFrame is a pure function; a FrameDecoder belongs to
// one connection and is used from its strand only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/shared_bytes.h"
#include "rpc/types.h"
#include "tessera/rpc.pb.h"

namespace tessera::rpc {

inline constexpr size_t kFrameHeaderBytes = 8;

// `envelope` as one frame (header + payload). InvalidArgument when the
// payload would exceed `frame_bytes_max`.
Result<std::string> EncodeFrame(const pb::Envelope& envelope, size_t frame_bytes_max);

// Appends the protobuf wire header of a length-delimited field (bytes,
// string, message): its tag and `length` as a varint. What follows it must
// be exactly `length` bytes. field_number must be 1..15 (one-byte tag).
void AppendLengthDelimitedFieldHeader(std::string* out, int field_number, uint64_t length);

// `envelope` (its payload field empty: CHECKed) carrying `payload`, as one
// frame of which this returns every byte before payload.tail; the frame
// is the returned bytes followed by the tail. The payload field is written
// after the envelope's other fields, which protobuf parses like any other
// order, so the receiver decodes it as EncodeFrame's frame of the same
// envelope. The frame's CRC comes from Crc32cCombine: the tail is never
// read. InvalidArgument as EncodeFrame.
Result<std::string> EncodeFrameSplit(const pb::Envelope& envelope, const SplitPayload& payload,
                                     size_t frame_bytes_max);

// Payloads of at least this many bytes are received into a buffer of their
// own (FrameDecoder, contract 2).
inline constexpr size_t kOwnedFrameBytesMin = 256 << 10;
// ... whose end lies at a multiple of this: the last bytes of such a frame
// (a blob's data, sent as the frame's tail) can go to a file opened with
// O_DIRECT as they lie.
inline constexpr size_t kOwnedFrameEndAlignment = 4096;

// Reassembles frames from the bytes of a stream, verifying each header's
// length bound (before buffering the payload) and checksum.
// Usage: read into Prepare(), Commit() what was read, then call Next()
// until it returns kNeedMore.
//
// Contract:
//  1. Frames come out in stream order, each verified against its CRC.
//  2. A payload of kOwnedFrameBytesMin bytes or more is received into a
//     SharedBytes of its own, allocated once its header is seen, whose end
//     is aligned to kOwnedFrameEndAlignment: Next() can hand it over
//     (`owner`), so a large payload is never copied between the socket and
//     its consumer. While it is being received, Prepare() offers exactly
//     the bytes it still lacks, so no read runs past it.
//  3. Smaller payloads are views into the decoder's buffer, valid until the
//     next Prepare().
class FrameDecoder {
 public:
  enum class Outcome { kFrame, kNeedMore, kTooLarge, kBadChecksum };

  explicit FrameDecoder(size_t frame_bytes_max);

  // Applies to frames whose header has not been examined yet.
  void set_frame_bytes_max(size_t frame_bytes_max) { frame_bytes_max_ = frame_bytes_max; }

  // Writable space of at least `min_bytes`, and at least what the frame
  // being assembled still lacks (exactly that for an owned frame, contract
  // 2). Invalidates payload views from Next() that it did not hand over.
  std::span<char> Prepare(size_t min_bytes);
  // `n` bytes of the last Prepare() span now hold received data.
  void Commit(size_t n);

  // kFrame: `*payload` views the next verified payload. If it was received
  // into a buffer of its own and `owner` is given, *owner takes that buffer
  // and the view lives as long as it; otherwise (*owner left empty) the
  // view is valid until the next Prepare(). kTooLarge / kBadChecksum: the
  // stream is unusable from here on; error_detail() says why. kNeedMore: no
  // complete frame buffered. `crc32c`, when given, receives the payload's
  // verified CRC-32C on kFrame.
  Outcome Next(std::string_view* payload, SharedBytes* owner = nullptr, uint32_t* crc32c = nullptr);

  // Bytes received and not yet returned in frames (nonzero at the end of a
  // stream means it ended inside a frame).
  size_t buffered_bytes() const {
    return end_ - begin_ + (owned_.empty() ? 0 : kFrameHeaderBytes + owned_filled_);
  }
  const std::string& error_detail() const { return error_detail_; }

 private:
  // Makes room for `bytes` from the start of the buffer, keeping
  // [0, end_). New bytes are left uninitialised: they are received into.
  void Grow(size_t bytes);
  // Moves the frame whose header starts at begin_ (`length` payload bytes,
  // `crc` stored) into owned_ with the part of it already buffered.
  void StartOwnedFrame(uint32_t length, uint32_t crc);
  // Verifies and hands over a complete owned_.
  Outcome DeliverOwnedFrame(std::string_view* payload, SharedBytes* owner, uint32_t* crc32c);
  Outcome BadChecksum(std::string_view body, uint32_t stored_crc);

  size_t frame_bytes_max_;
  // Not a std::vector<char>: that would zero every byte it grows by.
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;  // bytes of buffer_
  size_t begin_ = 0;   // first unconsumed byte
  size_t end_ = 0;     // one past the last received byte
  size_t wanted_ = 0;  // bytes of the frame being assembled, 0 if unknown
  // The owned frame being received (contract 2): empty when none is.
  SharedBytes owned_;
  size_t owned_filled_ = 0;
  uint32_t owned_crc_ = 0;
  // An owned frame handed out as a view only, kept until the next Prepare().
  SharedBytes delivered_;
  std::string error_detail_;
};

}  // namespace tessera::rpc
