// Goal: the native KV API's pure pieces follow docs/formats/kv-api.md: the
// handshake proofs match independently computed HMACs and bind every input,
// frames round-trip through rpc::FrameDecoder and bad frames are flagged,
// and the client's request/response conversion refuses what the router
// would refuse.
#include <gtest/gtest.h>

#include <cstring>

#include "client/kv_api_wire.h"
#include "client/kv_request_codec.h"
#include "common/limits.h"
#include "rpc/frame.h"

namespace tessera::kvapi {
namespace {

std::string Hex(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xF]);
  }
  return out;
}

std::string Range(int first) {
  std::string s;
  for (int i = first; i < first + 16; ++i) s.push_back(static_cast<char>(i));
  return s;
}

const std::string kSecret = "0123456789abcdef0123456789abcdef";

TEST(KvApiAuthTest, ProofsMatchTheSpecification) {
  // Reference values: Python hmac.new(secret, label + server_nonce +
  // client_nonce + access_key, hashlib.sha256).hexdigest().
  EXPECT_EQ(Hex(HelloProof(kSecret, Range(0), Range(16), "alice")),
            "a013aa6dc9700b7df74683cc28a53b499c059679f3ab4965e7de8b5b0c186436");
  EXPECT_EQ(Hex(WelcomeProof(kSecret, Range(0), Range(16), "alice")),
            "b4d9c3e1801fa589bb83d0668cadd099c7e3fa8699b684b3bd7b2dc25e973a37");
}

TEST(KvApiAuthTest, ProofBindsEveryInput) {
  const std::string base = HelloProof(kSecret, Range(0), Range(16), "alice");
  EXPECT_EQ(base.size(), kProofBytes);
  EXPECT_NE(base, HelloProof(kSecret + "x", Range(0), Range(16), "alice"));
  EXPECT_NE(base, HelloProof(kSecret, Range(1), Range(16), "alice"));  // a fresh challenge
  EXPECT_NE(base, HelloProof(kSecret, Range(0), Range(17), "alice"));
  EXPECT_NE(base, HelloProof(kSecret, Range(0), Range(16), "alicf"));
  EXPECT_NE(base, WelcomeProof(kSecret, Range(0), Range(16), "alice"));  // no reflection
  EXPECT_TRUE(ProofEquals(base, HelloProof(kSecret, Range(0), Range(16), "alice")));
  EXPECT_FALSE(ProofEquals(base, base.substr(1)));
  EXPECT_NE(RandomNonce(), RandomNonce());
  EXPECT_EQ(RandomNonce().size(), kNonceBytes);
}

TEST(KvApiFrameTest, RoundTripsThroughTheDecoder) {
  pb::KvApiClientFrame frame;
  frame.mutable_request()->set_request_id(7);
  frame.mutable_request()->set_table("t");
  frame.mutable_request()->mutable_get()->set_key(std::string("k\0\xff", 3));
  Result<std::string> bytes = EncodeFrame(frame, limits::kNativeFrameBytesMax);
  ASSERT_TRUE(bytes.ok());
  rpc::FrameDecoder decoder(limits::kNativeFrameBytesMax);
  // Byte by byte: a frame split anywhere reassembles.
  std::string_view payload;
  for (size_t i = 0; i < bytes->size(); ++i) {
    ASSERT_EQ(decoder.Next(&payload), rpc::FrameDecoder::Outcome::kNeedMore);
    std::span<char> space = decoder.Prepare(1);
    space[0] = (*bytes)[i];
    decoder.Commit(1);
  }
  ASSERT_EQ(decoder.Next(&payload), rpc::FrameDecoder::Outcome::kFrame);
  pb::KvApiClientFrame parsed;
  ASSERT_TRUE(parsed.ParseFromArray(payload.data(), static_cast<int>(payload.size())));
  EXPECT_EQ(parsed.request().get().key(), std::string("k\0\xff", 3));
}

TEST(KvApiFrameTest, OversizedAndCorruptFramesAreFlagged) {
  pb::KvApiClientFrame frame;
  frame.mutable_hello()->set_access_key(std::string(100, 'a'));
  EXPECT_FALSE(EncodeFrame(frame, 10).ok());
  Result<std::string> bytes = EncodeFrame(frame, limits::kNativeHandshakeFrameBytesMax);
  ASSERT_TRUE(bytes.ok());

  // The length alone decides "too large": no payload byte is needed.
  rpc::FrameDecoder small(16);
  std::span<char> space = small.Prepare(8);
  std::memcpy(space.data(), bytes->data(), 8);
  small.Commit(8);
  std::string_view payload;
  EXPECT_EQ(small.Next(&payload), rpc::FrameDecoder::Outcome::kTooLarge);

  std::string corrupt = *bytes;
  corrupt.back() ^= 1;
  rpc::FrameDecoder decoder(limits::kNativeHandshakeFrameBytesMax);
  space = decoder.Prepare(corrupt.size());
  std::memcpy(space.data(), corrupt.data(), corrupt.size());
  decoder.Commit(corrupt.size());
  EXPECT_EQ(decoder.Next(&payload), rpc::FrameDecoder::Outcome::kBadChecksum);
}

TEST(KvRequestCodecTest, RefusesWhatTheRouterWouldRefuse) {
  KvRequest get;
  get.op = KvRequest::Op::kGet;
  get.key = "k";
  EXPECT_EQ(ToProto(get, 1).status().code(), KvCode::kInvalidArgument);  // no table
  get.table = "t";
  ASSERT_TRUE(ToProto(get, 1).ok());
  EXPECT_EQ(ToProto(get, 1)->get().key(), "k");

  KvRequest scan;
  scan.op = KvRequest::Op::kScan;
  scan.table = "t";
  scan.limit = 0;
  EXPECT_EQ(ToProto(scan, 2).status().code(), KvCode::kInvalidArgument);
  scan.limit = limits::kRouterScanItemsMax + 1;
  EXPECT_EQ(ToProto(scan, 2).status().code(), KvCode::kInvalidArgument);

  KvRequest batch;
  batch.op = KvRequest::Op::kBatch;
  batch.table = "t";
  EXPECT_EQ(ToProto(batch, 3).status().code(), KvCode::kInvalidArgument);  // no write
  batch.batch.writes.push_back(KvWrite{"a", "1", false});
  batch.batch.writes.push_back(KvWrite{"b", "", true});
  batch.batch.conditions.push_back(KvCondition::Version("a", 9));
  KvResult<pb::KvApiRequest> wire = ToProto(batch, 3);
  ASSERT_TRUE(wire.ok());
  EXPECT_EQ(wire->batch().conditions(0).version(), 9u);
  EXPECT_TRUE(wire->batch().writes(1).delete_());

  KvRequest put;
  put.op = KvRequest::Op::kPut;
  put.table = "t";
  put.key = "a";
  put.condition = KvCondition::Absent("b");  // on another key
  EXPECT_EQ(ToProto(put, 4).status().code(), KvCode::kInvalidArgument);
  put.key = std::string(limits::kRouterKeyBytesMax + 1, 'k');
  put.condition.reset();
  EXPECT_EQ(ToProto(put, 4).status().code(), KvCode::kInvalidArgument);
}

TEST(KvRequestCodecTest, ResponsesBecomeReplies) {
  pb::KvApiResponse conflict;
  conflict.set_request_id(1);
  conflict.set_code(9);
  conflict.set_message("condition 0 does not hold");
  KvResult<KvReply> reply = FromProto(conflict, KvRequest::Op::kPut);
  EXPECT_EQ(reply.status().code(), KvCode::kConflict);
  EXPECT_EQ(reply.status().ToString(), "Conflict: condition 0 does not hold");

  pb::KvApiResponse absent;
  absent.set_request_id(2);
  reply = FromProto(absent, KvRequest::Op::kGet);
  ASSERT_TRUE(reply.ok());
  EXPECT_FALSE(reply->value.has_value());

  pb::KvApiResponse page;
  page.set_request_id(3);
  pb::KvItem* item = page.add_items();
  item->set_key("a");
  item->set_value("1");
  item->set_version(5);
  page.set_has_next(true);
  page.set_next_key("");  // an empty next key is still a next page
  reply = FromProto(page, KvRequest::Op::kScan);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply->page.items.size(), 1u);
  EXPECT_EQ(reply->page.items[0].version, 5u);
  ASSERT_TRUE(reply->page.next.has_value());

  EXPECT_EQ(CodeFromWire(99), KvCode::kAborted);
  EXPECT_EQ(CodeFromWire(13), KvCode::kPermissionDenied);
}

}  // namespace
}  // namespace tessera::kvapi
