// Goal: frames encode as docs/formats/rpc.md says and FrameDecoder
// reassembles them from any split of the byte stream, rejecting oversized
// lengths from the header alone and checksum mismatches.
#include "rpc/frame.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/crc32c.h"
#include "common/limits.h"
#include "rpc/envelope.h"

namespace tessera::rpc {
namespace {

void Feed(FrameDecoder& decoder, std::string_view bytes) {
  const std::span<char> space = decoder.Prepare(bytes.size());
  ASSERT_GE(space.size(), bytes.size());
  std::memcpy(space.data(), bytes.data(), bytes.size());
  decoder.Commit(bytes.size());
}

std::string Frame(std::string_view method, std::string payload) {
  return EncodeFrame(MakeRequest(9, method, std::move(payload)), limits::kRpcFrameBytesMax).value();
}

pb::Envelope Parse(std::string_view payload) {
  pb::Envelope envelope;
  EXPECT_TRUE(envelope.ParseFromArray(payload.data(), static_cast<int>(payload.size())));
  return envelope;
}

// Feeds `bytes` as a socket would (each read at most what Prepare offers),
// decoding after every read as Link does; returns the envelopes' payloads.
std::vector<std::string> FeedAndDecode(FrameDecoder& decoder, std::string_view bytes,
                                       size_t read_bytes_max = 1 << 30) {
  std::vector<std::string> payloads;
  while (!bytes.empty()) {
    const std::span<char> space = decoder.Prepare(std::min(bytes.size(), read_bytes_max));
    const size_t n = std::min({space.size(), bytes.size(), read_bytes_max});
    EXPECT_GT(n, 0u);
    std::memcpy(space.data(), bytes.data(), n);
    decoder.Commit(n);
    bytes.remove_prefix(n);
    std::string_view payload;
    while (decoder.Next(&payload) == FrameDecoder::Outcome::kFrame) {
      payloads.push_back(Parse(payload).payload());
    }
  }
  return payloads;
}

// Goal: a split frame (bytes before the tail, then the tail) decodes to
// the same envelope as EncodeFrame's, with a valid CRC, for short and long
// payload lengths (one- and multi-byte varints).
TEST(Frame, SplitFrameDecodesAsTheWholeFrame) {
  for (size_t tail_bytes : {size_t{0}, size_t{1}, size_t{127}, size_t{128}, size_t{70'000}}) {
    const std::string tail(tail_bytes, 'z');
    const SplitPayload payload{"head", SharedBytes(tail), Crc32c(tail)};
    const pb::Envelope envelope = MakeRequest(9, "blob.put", {});
    Result<std::string> before_tail =
        EncodeFrameSplit(envelope, payload, limits::kRpcFrameBytesMax);
    ASSERT_TRUE(before_tail.ok()) << before_tail.status().ToString();
    FrameDecoder decoder(limits::kRpcFrameBytesMax);
    Feed(decoder, *before_tail + tail);
    std::string_view decoded;
    ASSERT_EQ(decoder.Next(&decoded), FrameDecoder::Outcome::kFrame) << decoder.error_detail();
    const pb::Envelope parsed = Parse(decoded);
    EXPECT_EQ(parsed.call_id(), 9u);
    EXPECT_EQ(parsed.method(), "blob.put");
    EXPECT_EQ(parsed.payload(), "head" + tail);
  }
  const std::string tail(100, 'z');
  EXPECT_EQ(EncodeFrameSplit(MakeRequest(9, "m", {}), SplitPayload{"", SharedBytes(tail), Crc32c(tail)}, 50)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(Frame, HeaderIsBigEndianLengthAndCrc) {
  const std::string frame = Frame("m", "abc");
  const std::string_view payload(frame.data() + kFrameHeaderBytes, frame.size() - kFrameHeaderBytes);
  const uint32_t crc = Crc32c(payload);
  ASSERT_EQ(frame.size(), kFrameHeaderBytes + payload.size());
  EXPECT_EQ(static_cast<unsigned char>(frame[0]), 0);
  EXPECT_EQ(static_cast<unsigned char>(frame[3]), payload.size());
  EXPECT_EQ(static_cast<unsigned char>(frame[4]), crc >> 24);
  EXPECT_EQ(static_cast<unsigned char>(frame[7]), crc & 0xff);
  EXPECT_EQ(Parse(payload).payload(), "abc");
}

TEST(Frame, EncodeRefusesOversizedPayload) {
  Result<std::string> frame = EncodeFrame(MakeRequest(1, "m", std::string(100, 'x')), 50);
  EXPECT_EQ(frame.status().code(), StatusCode::kInvalidArgument);
}

TEST(FrameDecoder, ReassemblesFramesFromEverySplit) {
  const std::string stream = Frame("a", "first") + Frame("b", "") + Frame("c", std::string(300, 'z'));
  for (size_t chunk = 1; chunk <= stream.size(); chunk += 7) {
    FrameDecoder decoder(1 << 20);
    std::vector<std::string> methods;
    for (size_t offset = 0; offset < stream.size(); offset += chunk) {
      Feed(decoder, std::string_view(stream).substr(offset, chunk));
      std::string_view payload;
      while (decoder.Next(&payload) == FrameDecoder::Outcome::kFrame) {
        methods.push_back(Parse(payload).method());
      }
    }
    EXPECT_EQ(methods, (std::vector<std::string>{"a", "b", "c"})) << "chunk " << chunk;
    EXPECT_EQ(decoder.buffered_bytes(), 0u);
  }
}

TEST(FrameDecoder, ZeroLengthFrameIsAnEmptyPayload) {
  FrameDecoder decoder(100);
  Feed(decoder, std::string(8, '\0'));  // length 0, CRC-32C of nothing is 0
  std::string_view payload = "not empty";
  ASSERT_EQ(decoder.Next(&payload), FrameDecoder::Outcome::kFrame);
  EXPECT_TRUE(payload.empty());
}

TEST(FrameDecoder, TooLargeIsDetectedFromTheHeaderAlone) {
  FrameDecoder decoder(1000);
  Feed(decoder, std::string("\x00\x00\x03\xe9\x00\x00\x00\x00", 8));  // length 1001
  std::string_view payload;
  EXPECT_EQ(decoder.Next(&payload), FrameDecoder::Outcome::kTooLarge);
  EXPECT_EQ(decoder.error_detail(), "length 1001 exceeds 1000");
}

TEST(FrameDecoder, BadChecksumIsDetected) {
  std::string frame = Frame("m", "payload");
  frame[kFrameHeaderBytes + 2] ^= 0x40;
  FrameDecoder decoder(1 << 20);
  Feed(decoder, frame);
  std::string_view payload;
  EXPECT_EQ(decoder.Next(&payload), FrameDecoder::Outcome::kBadChecksum);
}

TEST(FrameDecoder, PartialFrameStaysBuffered) {
  const std::string frame = Frame("m", "payload");
  FrameDecoder decoder(1 << 20);
  Feed(decoder, std::string_view(frame).substr(0, 10));
  std::string_view payload;
  EXPECT_EQ(decoder.Next(&payload), FrameDecoder::Outcome::kNeedMore);
  EXPECT_EQ(decoder.buffered_bytes(), 10u);
  // Prepare() offers room for the rest of the frame at least.
  EXPECT_GE(decoder.Prepare(1).size(), frame.size() - 10);
}

TEST(FrameDecoder, LargeFrameThenSmallOnes) {
  FrameDecoder decoder(8 << 20);
  const std::string big = Frame("big", std::string(4 << 20, 'b'));
  const std::vector<std::string> payloads = FeedAndDecode(decoder, big);
  ASSERT_EQ(payloads.size(), 1u);
  EXPECT_EQ(payloads[0], std::string(4 << 20, 'b'));
  Feed(decoder, Frame("small", "s"));
  std::string_view payload;
  ASSERT_EQ(decoder.Next(&payload), FrameDecoder::Outcome::kFrame);
  EXPECT_EQ(Parse(payload).method(), "small");
}

// Goal (contract 2): a payload of kOwnedFrameBytesMin bytes or more is
// received into a buffer of its own, ending on a kOwnedFrameEndAlignment
// boundary, that Next() hands over; while it is received Prepare() offers
// exactly what it lacks, so the small frame behind it stays out of it.
TEST(FrameDecoder, LargePayloadsComeInEndAlignedBuffersOfTheirOwn) {
  for (const size_t body : {kOwnedFrameBytesMin, kOwnedFrameBytesMin + 1, size_t{3 << 20} + 12345}) {
    SCOPED_TRACE(body);
    std::string payload_bytes(body, '\0');
    for (size_t i = 0; i < body; ++i) payload_bytes[i] = static_cast<char>(i * 7 + 3);
    const std::string big = Frame("big", payload_bytes);
    const std::string stream = big + Frame("small", "s");
    FrameDecoder decoder(8 << 20);
    Feed(decoder, std::string_view(stream).substr(0, 1000));  // header and a little body
    std::string_view payload;
    SharedBytes owner;
    ASSERT_EQ(decoder.Next(&payload, &owner), FrameDecoder::Outcome::kNeedMore);
    EXPECT_EQ(decoder.buffered_bytes(), 1000u);
    const std::span<char> rest = decoder.Prepare(64 << 10);
    ASSERT_EQ(rest.size(), big.size() - 1000);
    std::memcpy(rest.data(), stream.data() + 1000, rest.size());
    decoder.Commit(rest.size());
    uint32_t crc32c = 0;
    ASSERT_EQ(decoder.Next(&payload, &owner, &crc32c), FrameDecoder::Outcome::kFrame);
    ASSERT_FALSE(owner.empty());
    EXPECT_EQ(crc32c, Crc32c(owner.view()));  // the verified checksum comes along
    EXPECT_EQ(reinterpret_cast<uintptr_t>(owner.data() + owner.size()) % kOwnedFrameEndAlignment, 0u);
    EXPECT_EQ(payload.data(), owner.data());
    EXPECT_EQ(payload.size(), owner.size());
    decoder.Prepare(64 << 10);  // the handed-over view outlives it
    EXPECT_EQ(Parse(payload).payload(), payload_bytes);
    EXPECT_EQ(decoder.buffered_bytes(), 0u);
    EXPECT_EQ(FeedAndDecode(decoder, std::string_view(stream).substr(big.size())),
              std::vector<std::string>{"s"});
  }
}

// Goal: a small frame leaves the owner empty, and a large frame already
// complete in the buffer comes out owned as well.
TEST(FrameDecoder, OwnershipFollowsThePayloadSize) {
  const std::string stream = Frame("small", "s") + Frame("big", std::string(kOwnedFrameBytesMin, 'b'));
  FrameDecoder decoder(8 << 20);
  Feed(decoder, stream);
  std::string_view payload;
  SharedBytes owner = SharedBytes(std::string("stale"));
  ASSERT_EQ(decoder.Next(&payload, &owner), FrameDecoder::Outcome::kFrame);
  EXPECT_TRUE(owner.empty());
  EXPECT_EQ(Parse(payload).payload(), "s");
  ASSERT_EQ(decoder.Next(&payload, &owner), FrameDecoder::Outcome::kFrame);
  ASSERT_FALSE(owner.empty());
  EXPECT_EQ(Parse(payload).payload(), std::string(kOwnedFrameBytesMin, 'b'));
  EXPECT_EQ(decoder.Next(&payload, &owner), FrameDecoder::Outcome::kNeedMore);
  EXPECT_EQ(decoder.buffered_bytes(), 0u);
}

TEST(FrameDecoder, BadChecksumOfAnOwnedFrameIsDetected) {
  std::string frame = Frame("big", std::string(kOwnedFrameBytesMin, 'b'));
  frame[frame.size() - 1] ^= 1;
  FrameDecoder decoder(8 << 20);
  FeedAndDecode(decoder, frame);
  std::string_view payload;
  EXPECT_EQ(decoder.Next(&payload), FrameDecoder::Outcome::kBadChecksum);
  EXPECT_NE(decoder.error_detail().find("stored_crc"), std::string::npos);
}

// Goal: frames above the shrink size, arriving in socket-sized reads that
// end inside the next frame, come out byte for byte (the buffer grows,
// moves its unconsumed bytes forward and is given back between them).
TEST(FrameDecoder, LargeFramesArrivingInReadsKeepEveryByte) {
  const auto pattern = [](size_t bytes, int seed) {
    std::string s(bytes, '\0');
    for (size_t i = 0; i < bytes; ++i) s[i] = static_cast<char>((i * 131 + seed) % 251);
    return s;
  };
  const std::vector<std::string> payloads = {pattern(3 << 20, 1), "s", pattern((5 << 19) + 7, 2), "",
                                             pattern(70'000, 3)};
  std::string stream;
  for (const std::string& p : payloads) stream += Frame("m", p);
  FrameDecoder decoder(8 << 20);
  EXPECT_EQ(FeedAndDecode(decoder, stream, 65'549), payloads);
  EXPECT_EQ(decoder.buffered_bytes(), 0u);
}

TEST(Envelope, ResponsesCarryStatusesAndUnknownCodesReadAsAborted) {
  pb::Envelope ok = MakeResponse(4, std::string("body"));
  EXPECT_TRUE(ok.is_response());
  EXPECT_EQ(*ResultFromResponse(ok), "body");
  pb::Envelope redirect = MakeResponse(4, Status::NotLeader(9, "elsewhere"));
  Result<std::string> r = ResultFromResponse(redirect);
  EXPECT_EQ(r.status().code(), StatusCode::kNotLeader);
  EXPECT_EQ(r.status().leader_hint(), 9u);
  pb::Envelope future;
  future.set_is_response(true);
  future.set_status_code(200);
  future.set_status_message("from a newer build");
  Result<std::string> unknown = ResultFromResponse(future);
  EXPECT_EQ(unknown.status().code(), StatusCode::kAborted);
  EXPECT_EQ(unknown.status().message(), "from a newer build");
}

}  // namespace
}  // namespace tessera::rpc
