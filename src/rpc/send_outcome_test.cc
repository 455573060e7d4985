// Goal: every way a call can fail states, as a typed SendOutcome, whether
// its request reached the peer: refused or discarded before a connection
// was ready -> kNotSent; timed out, or lost with a ready connection ->
// kSentOutcomeUnknown; the handler's error -> kAnswered, whatever its text.
#include <gtest/gtest.h>

#include <mutex>

#include "rpc/rpc_test_util.h"

namespace tessera::rpc::testing {
namespace {

// A handler that keeps its requests unanswered until told.
struct Parking {
  std::mutex mu;
  std::vector<Responder> parked;
  Handler handler() {
    return [this](const PeerInfo&, const pb::Envelope&, Responder responder) {
      std::lock_guard lock(mu);
      parked.push_back(std::move(responder));
    };
  }
  size_t count() {
    std::lock_guard lock(mu);
    return parked.size();
  }
  void Clear() {
    std::lock_guard lock(mu);
    parked.clear();
  }
};

// A pending call's result, filled in by its callback.
struct Pending {
  std::shared_ptr<std::promise<Result<std::string>>> promise =
      std::make_shared<std::promise<Result<std::string>>>();
  CallCallback callback() {
    return [p = promise](Result<std::string> r) { p->set_value(std::move(r)); };
  }
  Status Get() { return promise->get_future().get().status(); }
};

uint16_t ClosedPort() {
  asio::io_context io;
  asio::ip::tcp::acceptor probe(io, {asio::ip::make_address("127.0.0.1"), 0});
  return probe.local_endpoint().port();
}

TEST_F(RpcTest, RefusedCallsAreNotSent) {
  auto server = StartServer(1, {{"echo", Echo()}});
  auto channel = MakeChannel(100, server->port(), 1);
  auto ignore = [](Result<std::string>) {};
  const Status bad_method = channel->Call("rpc.reserved", "", 1s, ignore);
  EXPECT_EQ(bad_method.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_method.send_outcome(), SendOutcome::kNotSent);
  const Status bad_timeout = channel->Call("echo", "", 0ms, ignore);
  EXPECT_EQ(bad_timeout.send_outcome(), SendOutcome::kNotSent);
  const Status bad_send = channel->Send("rpc.reserved", "");
  EXPECT_EQ(bad_send.send_outcome(), SendOutcome::kNotSent);
  channel->Close();
  const Status closed = channel->Call("echo", "", 1s, ignore);
  EXPECT_EQ(closed.code(), StatusCode::kAborted);
  EXPECT_EQ(closed.send_outcome(), SendOutcome::kNotSent);
}

TEST_F(RpcTest, ThrottledCallsAreNotSent) {
  asio::io_context silent_io;
  asio::ip::tcp::acceptor silent(silent_io, {asio::ip::make_address("127.0.0.1"), 0});
  ChannelOptions options;
  options.pending_calls_max = 1;
  auto channel = MakeChannel(100, silent.local_endpoint().port(), 1, options);
  auto ignore = [](Result<std::string>) {};
  ASSERT_TRUE(channel->Call("m", "", 5s, ignore).ok());
  const Status throttled = channel->Call("m", "", 5s, ignore);
  EXPECT_EQ(throttled.code(), StatusCode::kThrottled);
  EXPECT_EQ(throttled.send_outcome(), SendOutcome::kNotSent);
}

TEST_F(RpcTest, ConnectionNeverEstablishedIsNotSent) {
  ChannelOptions options;
  options.backoff_initial_ms = 2000;
  options.backoff_max_ms = 2000;
  auto channel = MakeChannel(100, ClosedPort(), 1, options);
  const Status failed = CallSync(*channel, "echo", "").status();
  EXPECT_EQ(failed.code(), StatusCode::kUnavailable) << failed.ToString();
  EXPECT_EQ(failed.send_outcome(), SendOutcome::kNotSent) << failed.ToString();
  const Status backing_off = CallSync(*channel, "echo", "").status();
  EXPECT_EQ(backing_off.code(), StatusCode::kUnavailable) << backing_off.ToString();
  EXPECT_EQ(backing_off.send_outcome(), SendOutcome::kNotSent);
}

// The peer accepts TCP but never sends its Challenge: the request waits in
// the backlog until the connect timeout discards it.
TEST_F(RpcTest, HandshakeThatNeverCompletesIsNotSent) {
  asio::io_context silent_io;
  asio::ip::tcp::acceptor silent(silent_io, {asio::ip::make_address("127.0.0.1"), 0});
  ChannelOptions options;
  options.connect_timeout_ms = 200;
  auto channel = MakeChannel(100, silent.local_endpoint().port(), 1, options);
  const Status failed = CallSync(*channel, "echo", "", 5s).status();
  EXPECT_EQ(failed.code(), StatusCode::kUnavailable) << failed.ToString();
  EXPECT_EQ(failed.send_outcome(), SendOutcome::kNotSent) << failed.ToString();
}

// A handshake refused for a reason no message list ever named (the server
// is not the peer the channel must reach) is still known unsent.
TEST_F(RpcTest, RefusedHandshakeIsNotSent) {
  auto server = StartServer(1, {{"echo", Echo()}});
  auto channel = MakeChannel(100, server->port(), /*remote_id=*/2);
  const Status failed = CallSync(*channel, "echo", "").status();
  EXPECT_EQ(failed.code(), StatusCode::kUnavailable) << failed.ToString();
  EXPECT_EQ(failed.send_outcome(), SendOutcome::kNotSent) << failed.ToString();
}

TEST_F(RpcTest, ChannelClosedBeforeConnectingIsNotSent) {
  asio::io_context silent_io;
  asio::ip::tcp::acceptor silent(silent_io, {asio::ip::make_address("127.0.0.1"), 0});
  auto channel = MakeChannel(100, silent.local_endpoint().port(), 1);
  Pending pending;
  ASSERT_TRUE(channel->Call("echo", "", 5s, pending.callback()).ok());
  channel->Close();
  const Status aborted = pending.Get();
  EXPECT_EQ(aborted.code(), StatusCode::kAborted);
  EXPECT_EQ(aborted.send_outcome(), SendOutcome::kNotSent);
}

TEST_F(RpcTest, UnansweredCallsHaveAnUnknownOutcome) {
  Parking parking;
  auto server = StartServer(1, {{"park", parking.handler()}, {"echo", Echo()}});
  auto channel = MakeChannel(100, server->port(), 1);
  ASSERT_EQ(*CallSync(*channel, "echo", "up"), "up");

  const Status timed_out = CallSync(*channel, "park", "", 100ms).status();
  EXPECT_EQ(timed_out.code(), StatusCode::kTimeout);
  EXPECT_EQ(timed_out.send_outcome(), SendOutcome::kSentOutcomeUnknown);

  Pending closed;
  ASSERT_TRUE(channel->Call("park", "", 5s, closed.callback()).ok());
  ASSERT_TRUE(WaitFor([&] { return parking.count() == 2; }));
  channel->Close();
  const Status aborted = closed.Get();
  EXPECT_EQ(aborted.code(), StatusCode::kAborted);
  EXPECT_EQ(aborted.send_outcome(), SendOutcome::kSentOutcomeUnknown);
  parking.Clear();
}

TEST_F(RpcTest, ConnectionLostAfterSendingHasAnUnknownOutcome) {
  Parking parking;
  auto server = StartServer(1, {{"park", parking.handler()}});
  auto channel = MakeChannel(100, server->port(), 1);
  Pending lost;
  ASSERT_TRUE(channel->Call("park", "", 5s, lost.callback()).ok());
  ASSERT_TRUE(WaitFor([&] { return parking.count() == 1; }));
  server->Stop();
  const Status failed = lost.Get();
  EXPECT_EQ(failed.code(), StatusCode::kUnavailable) << failed.ToString();
  EXPECT_EQ(failed.send_outcome(), SendOutcome::kSentOutcomeUnknown);
  parking.Clear();
}

// The handler's own error, even one worded like the channel's refusals,
// is an answer.
TEST_F(RpcTest, HandlerErrorsAreAnswers) {
  Handler refuse = [](const PeerInfo&, const pb::Envelope&, Responder responder) {
    responder.Fail(Status::Unavailable("rpc channel to 10.0.0.1:7000 is waiting to reconnect"));
  };
  auto server = StartServer(1, {{"refuse", refuse}});
  auto channel = MakeChannel(100, server->port(), 1);
  const Status answered = CallSync(*channel, "refuse", "").status();
  EXPECT_EQ(answered.code(), StatusCode::kUnavailable);
  EXPECT_EQ(answered.message(), "rpc channel to 10.0.0.1:7000 is waiting to reconnect");
  EXPECT_EQ(answered.send_outcome(), SendOutcome::kAnswered);
  const Status no_handler = CallSync(*channel, "missing", "").status();
  EXPECT_EQ(no_handler.code(), StatusCode::kNotFound);
  EXPECT_EQ(no_handler.send_outcome(), SendOutcome::kAnswered);
}

}  // namespace
}  // namespace tessera::rpc::testing
