// Goal: bad authentication and malformed frames are refused, logged,
// counted, close only the offending connection, and leave the server
// serving everyone else.
#include <gtest/gtest.h>

#include "rpc/rpc_test_util.h"

namespace tessera::rpc::testing {
namespace {

// Goal: a client with the wrong secret is refused and counted; a good
// client is served afterwards.
TEST_F(RpcTest, WrongSecretIsRefusedAndServerKeepsServing) {
  auto server = StartServer(1, {{"echo", Echo()}});
  ChannelOptions wrong;
  wrong.identity = MakeIdentity(66, "router", "not-the-cluster-secret!!");
  auto intruder = MakeChannel(66, server->port(), 1, wrong);
  EXPECT_EQ(CallSync(*intruder, "echo", "let me in").status().code(), StatusCode::kUnavailable);
  const RpcMetrics server_metrics(process.registry, "server");
  EXPECT_EQ(server_metrics.auth_failures("bad_mac").value(), 1u);
  EXPECT_EQ(server_metrics.frames_received.value(), 1u);  // the Hello, nothing after it
  EXPECT_EQ(server->stats().connections_authenticated, 0u);

  auto good = MakeChannel(100, server->port(), 1);
  EXPECT_EQ(*CallSync(*good, "echo", "hi"), "hi");
  EXPECT_EQ(server->stats().connections_authenticated, 1u);
}

// Goal: a client that sends requests without the handshake gets no answer
// and is disconnected.
TEST_F(RpcTest, ClientSkippingHandshakeIsRefused) {
  std::atomic<int> handled{0};
  Handler count = [&](const PeerInfo&, const pb::Envelope&, Responder responder) {
    ++handled;
    responder.Reply("");
  };
  auto server = StartServer(1, {{"echo", count}});
  RawClient raw(server->port());
  raw.WriteEnvelope(MakeRequest(1, "echo", "sneaky"));
  EXPECT_TRUE(raw.WaitClosed());
  EXPECT_EQ(handled.load(), 0);
  EXPECT_EQ(RpcMetrics(process.registry, "server").auth_failures("expected_hello").value(), 1u);

  auto good = MakeChannel(100, server->port(), 1);
  EXPECT_TRUE(CallSync(*good, "echo", "").ok());
  EXPECT_EQ(handled.load(), 1);
}

// Goal: a connection that never sends its Hello is closed after the
// handshake timeout.
TEST_F(RpcTest, SilentClientIsClosedAfterHandshakeTimeout) {
  ServerOptions options;
  options.handshake_timeout_ms = 100;
  auto server = StartServer(1, {}, 0, options);
  RawClient raw(server->port());
  EXPECT_TRUE(raw.WaitClosed());
  EXPECT_EQ(RpcMetrics(process.registry, "server").auth_failures("handshake_timeout").value(), 1u);
}

// Goal: connections that never authenticate cannot keep peers out: a flood
// of silent connections well beyond handshakes_max and connections_max
// evicts only other silent connections (oldest first), a new channel still
// authenticates and calls while the flood is open, and an authenticated
// channel keeps working throughout. Authenticated connections stay bounded
// by connections_max.
TEST_F(RpcTest, SilentConnectionsCannotCrowdOutPeers) {
  ServerOptions options;
  options.handshake_timeout_ms = 60'000;  // the flood outlives the test unless evicted
  options.handshakes_max = 4;
  options.connections_max = 2;
  auto server = StartServer(1, {{"echo", Echo()}}, 0, options);
  auto early = MakeChannel(100, server->port(), 1);
  ASSERT_TRUE(CallSync(*early, "echo", "x").ok());
  std::vector<std::unique_ptr<RawClient>> flood;
  for (int i = 0; i < 12; ++i) flood.push_back(std::make_unique<RawClient>(server->port()));
  // The first eight cannot all still be open: at most four handshakes are held.
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(flood[i]->WaitClosed()) << i;
  EXPECT_GE(server->stats().handshakes_evicted, 8u);
  // An eviction runs on the evicted connection's strand, just after the
  // accept that caused it: the count settles at the bound.
  for (int i = 0; i < 500 && server->stats().handshakes_open > 4; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_LE(server->stats().handshakes_open, 4u);
  auto late = MakeChannel(101, server->port(), 1);
  EXPECT_TRUE(CallSync(*late, "echo", "y").ok());
  EXPECT_TRUE(CallSync(*early, "echo", "z").ok());
  EXPECT_EQ(server->stats().connections_open, 2u);
  // A third authenticated connection is beyond connections_max.
  auto third = MakeChannel(102, server->port(), 1);
  EXPECT_FALSE(CallSync(*third, "echo", "w").ok());
  EXPECT_GE(RpcMetrics(process.registry, "server").auth_failures("too_many_connections").value(), 1u);
}

// Goal: a channel refuses a server that is not the peer it expects.
TEST_F(RpcTest, ChannelRefusesWrongPeer) {
  auto server = StartServer(1, {{"echo", Echo()}});
  auto channel = MakeChannel(100, server->port(), /*remote_id=*/2);
  EXPECT_EQ(CallSync(*channel, "echo", "").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(RpcMetrics(process.registry, "client").auth_failures("wrong_peer").value(), 1u);
}

struct MalformedCase {
  const char* name;
  const char* reason;     // label of tessera_rpc_malformed_frames_total
  std::string (*bytes)();  // what the client sends after the handshake
};

std::string BigEndian32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

std::string GoodFrame() {
  return EncodeFrame(MakeRequest(0, "echo", "payload"), limits::kRpcFrameBytesMax).value();
}

std::string BadChecksum() {
  std::string frame = GoodFrame();
  frame.back() ^= 0x01;
  return frame;
}

std::string GarbagePayload() {
  const std::string payload = "\x0f\xff\xff garbage";  // field 1 with wire type 7: invalid
  return BigEndian32(static_cast<uint32_t>(payload.size())) + BigEndian32(Crc32c(payload)) + payload;
}

std::string TooLarge() {
  return BigEndian32(static_cast<uint32_t>(limits::kRpcFrameBytesMax + 1)) + BigEndian32(0);
}

std::string Truncated() { return GoodFrame().substr(0, 12); }

std::string Response() {
  return EncodeFrame(MakeResponse(5, std::string("not a request")), limits::kRpcFrameBytesMax).value();
}

class MalformedFrameTest : public RpcTest, public ::testing::WithParamInterface<MalformedCase> {};

// Goal: each kind of malformed frame closes that connection only, is
// counted under its reason, and the server keeps serving (an established
// connection stays up, new ones are accepted).
TEST_P(MalformedFrameTest, ClosesOnlyThatConnection) {
  const MalformedCase& c = GetParam();
  auto server = StartServer(1, {{"echo", Echo()}});
  auto bystander = MakeChannel(100, server->port(), 1);
  ASSERT_EQ(*CallSync(*bystander, "echo", "before"), "before");

  auto raw = std::make_unique<RawClient>(server->port());
  ASSERT_TRUE(raw->Handshake());
  raw->Write(c.bytes());
  if (std::string_view(c.reason) == "truncated") {
    raw.reset();  // the client goes away mid-frame
  } else {
    EXPECT_TRUE(raw->WaitClosed());
  }
  const RpcMetrics server_metrics(process.registry, "server");
  EXPECT_TRUE(WaitFor([&] { return server_metrics.malformed_frames(c.reason).value() == 1; }))
      << c.name;

  EXPECT_EQ(*CallSync(*bystander, "echo", "after"), "after");
  EXPECT_EQ(bystander->stats().connects, 1u);  // never dropped
  auto newcomer = MakeChannel(101, server->port(), 1);
  EXPECT_EQ(*CallSync(*newcomer, "echo", "new"), "new");
}

INSTANTIATE_TEST_SUITE_P(
    Frames, MalformedFrameTest,
    ::testing::Values(MalformedCase{"BadChecksum", "bad_checksum", &BadChecksum},
                      MalformedCase{"GarbagePayload", "bad_envelope", &GarbagePayload},
                      MalformedCase{"TooLarge", "too_large", &TooLarge},
                      MalformedCase{"Truncated", "truncated", &Truncated},
                      MalformedCase{"UnexpectedResponse", "unexpected_response", &Response}),
    [](const ::testing::TestParamInfo<MalformedCase>& test) { return std::string(test.param.name); });

}  // namespace
}  // namespace tessera::rpc::testing
