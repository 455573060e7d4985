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

// Reassembles frames from the bytes of a stream, verifying each header's
// length bound (before buffering the payload) and checksum.
// Usage: read into Prepare(), Commit() what was read, then call Next()
// until it returns kNeedMore.
class FrameDecoder {
 public:
  enum class Outcome { kFrame, kNeedMore, kTooLarge, kBadChecksum };

  explicit FrameDecoder(size_t frame_bytes_max);

  // Applies to frames whose header has not been examined yet.
  void set_frame_bytes_max(size_t frame_bytes_max) { frame_bytes_max_ = frame_bytes_max; }

  // Writable space of at least `min_bytes`, and at least what the frame
  // being assembled still lacks. Invalidates payload views from Next().
  std::span<char> Prepare(size_t min_bytes);
  // `n` bytes of the last Prepare() span now hold received data.
  void Commit(size_t n);

  // kFrame: `*payload` views the next verified payload, valid until the next
  // Prepare(). kTooLarge / kBadChecksum: the stream is unusable from here
  // on; error_detail() says why. kNeedMore: no complete frame buffered.
  Outcome Next(std::string_view* payload);

  // Bytes received and not yet returned in frames (nonzero at the end of a
  // stream means it ended inside a frame).
  size_t buffered_bytes() const { return end_ - begin_; }
  const std::string& error_detail() const { return error_detail_; }

 private:
  // Makes room for `bytes` from the start of the buffer, keeping
  // [0, end_). New bytes are left uninitialised: they are received into.
  void Grow(size_t bytes);

  size_t frame_bytes_max_;
  // Not a std::vector<char>: that would zero every byte it grows by, which
  // for a 2 MiB blob frame costs as much as receiving it.
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;  // bytes of buffer_
  size_t begin_ = 0;   // first unconsumed byte
  size_t end_ = 0;     // one past the last received byte
  size_t wanted_ = 0;  // bytes of the frame being assembled, 0 if unknown
  std::string error_detail_;
};

}  // namespace tessera::rpc
