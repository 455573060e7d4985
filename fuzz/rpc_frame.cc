// Fuzz target: the RPC frame decoder (src/rpc/frame.h) as a connection
// drives it, over a byte stream received in pieces of fuzz-chosen sizes,
// each delivered payload parsed as the pb::Envelope a server would read.
// Input: byte 0: bit 0 set rewrites every frame's CRC to match its payload
// (so the fuzzer reaches the envelope parser, not only the checksum check);
// bits 1-3 choose the frame size bound. Byte 1 seeds the piece sizes.
// The rest is the stream. Checked: every delivered payload carries the CRC
// the decoder reports and fits the bound; after an error nothing more
// comes out.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include <google/protobuf/stubs/logging.h>

#include "common/crc32c.h"
#include "fuzz/fuzz_input.h"
#include "rpc/frame.h"
#include "tessera/rpc.pb.h"

namespace {

uint32_t ReadBigEndian32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}

void WriteBigEndian32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (24 - 8 * i));
}

// Rewrites the CRC of each frame whose header is complete to match the
// payload bytes present.
void FixChecksums(std::string& stream) {
  size_t at = 0;
  while (at + tessera::rpc::kFrameHeaderBytes <= stream.size()) {
    const uint32_t length = ReadBigEndian32(stream.data() + at);
    const size_t begin = at + tessera::rpc::kFrameHeaderBytes;
    const size_t present = std::min<size_t>(length, stream.size() - begin);
    WriteBigEndian32(stream.data() + at + 4, tessera::Crc32c(std::string_view(stream.data() + begin, present)));
    at = begin + present;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Protobuf logs every string field that is not UTF-8; the fuzzer makes many.
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
  using tessera::rpc::FrameDecoder;
  tessera::fuzz::FuzzInput in(data, size);
  const uint8_t flags = in.Byte();
  uint32_t piece_seed = in.Byte() | 1u;
  std::string stream(in.Rest());
  if (flags & 1) FixChecksums(stream);
  // 64 bytes .. 512 KiB: small bounds reach kTooLarge, large ones the owned
  // (kOwnedFrameBytesMin) path.
  const size_t bound = size_t{64} << (((flags >> 1) & 7) * 2);
  FrameDecoder decoder(bound);
  size_t fed = 0;
  bool failed = false;
  while (fed < stream.size() && !failed) {
    piece_seed = piece_seed * 1103515245u + 12345u;
    const size_t want = 1 + (piece_seed >> 16) % 4096;
    std::span<char> space = decoder.Prepare(std::min(want, stream.size() - fed));
    const size_t n = std::min({space.size(), want, stream.size() - fed});
    std::memcpy(space.data(), stream.data() + fed, n);
    decoder.Commit(n);
    fed += n;
    for (;;) {
      std::string_view payload;
      tessera::SharedBytes owner;
      uint32_t crc = 0;
      const FrameDecoder::Outcome outcome = decoder.Next(&payload, &owner, &crc);
      if (outcome == FrameDecoder::Outcome::kNeedMore) break;
      if (outcome != FrameDecoder::Outcome::kFrame) {
        failed = true;
        break;
      }
      if (payload.size() > bound || tessera::Crc32c(payload) != crc) __builtin_trap();
      tessera::pb::Envelope envelope;
      (void)envelope.ParseFromArray(payload.data(), static_cast<int>(payload.size()));
    }
  }
  return 0;
}
