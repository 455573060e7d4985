// Goal: over real sockets, calls round-trip with payloads and statuses,
// one-way messages arrive in order and are batched, each peer uses one
// connection, timeouts, reconnects and full queues behave as channel.h says.
#include <gtest/gtest.h>

#include <future>
#include <map>
#include <mutex>

#include "common/crc32c.h"
#include "rpc/channel_pool.h"
#include "rpc/rpc_test_util.h"

namespace tessera::rpc::testing {
namespace {

// Goal: a call returns the handler's payload; handler errors (with leader
// hint) and unknown methods come back as statuses.
TEST_F(RpcTest, EchoCallRoundTrip) {
  Handler not_leader = [](const PeerInfo&, const pb::Envelope&, Responder responder) {
    responder.Fail(Status::NotLeader(3, "try 3"));
  };
  auto server = StartServer(1, {{"echo", Echo()}, {"lead", not_leader}});
  auto channel = MakeChannel(100, server->port(), 1);

  Result<std::string> echoed = CallSync(*channel, "echo", "hello tessera");
  ASSERT_TRUE(echoed.ok()) << echoed.status().ToString();
  EXPECT_EQ(*echoed, "hello tessera");
  EXPECT_EQ(*CallSync(*channel, "echo", std::string(3 << 20, 'x')), std::string(3 << 20, 'x'));

  Result<std::string> redirected = CallSync(*channel, "lead", "");
  EXPECT_EQ(redirected.status().code(), StatusCode::kNotLeader);
  EXPECT_EQ(redirected.status().leader_hint(), 3u);
  EXPECT_EQ(redirected.status().message(), "try 3");

  Result<std::string> unknown = CallSync(*channel, "no_such_method", "");
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(RpcMetrics(process.registry, "server").unknown_method.value(), 1u);
  EXPECT_EQ(channel->stats().connects, 1u);
  EXPECT_GE(RpcMetrics(process.registry, "client").call_latency_seconds.snapshot().count, 4u);

  EXPECT_EQ(channel->Send("rpc.Hello", "").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(channel->Send("", "").code(), StatusCode::kInvalidArgument);
}

// Goal: a call whose payload's large part is shared (SplitPayload) reaches
// the handler as head || tail, from several calls over one tail, and the
// tail is never modified.
TEST_F(RpcTest, SplitPayloadCallsShareTheirTail) {
  auto server = StartServer(1, {{"echo", Echo()}});
  auto channel = MakeChannel(100, server->port(), 1);
  const std::string expected_tail = std::string(3 << 20, 't') + "end";
  const SharedBytes tail(expected_tail);
  for (const std::string& head : {std::string(), std::string("head-"), std::string(300, 'h')}) {
    SplitPayload payload{head, tail, Crc32c(tail.view())};
    Result<std::string> echoed = CallSync(*channel, "echo", std::move(payload));
    ASSERT_TRUE(echoed.ok()) << echoed.status().ToString();
    EXPECT_EQ(*echoed, head + expected_tail);
  }
  EXPECT_EQ(tail.view(), expected_tail);
  // A wrong tail CRC makes a frame the server refuses (it closes the
  // connection): the call fails, never delivers altered bytes.
  Result<std::string> refused = CallSync(*channel, "echo", SplitPayload{"x", tail, 0}, 500ms);
  EXPECT_FALSE(refused.ok());
}

// Goal: a PayloadHandler gets every request's payload as SharedBytes: a
// large one (kOwnedFrameBytesMin or more, plain or split) where its frame
// was received, which it may keep after returning, a small one from the
// envelope; one method cannot have two handlers.
TEST_F(RpcTest, PayloadHandlersKeepLargePayloadsWhereTheyArrived) {
  std::mutex mu;
  std::vector<SharedBytes> kept;
  PayloadHandler keep = [&](const PeerInfo&, pb::Envelope& request, SharedBytes payload, Responder responder) {
    EXPECT_TRUE(request.payload().empty());
    {
      std::lock_guard lock(mu);
      kept.push_back(payload);
    }
    responder.Reply(std::to_string(payload.size()) + ":" + std::to_string(Crc32c(payload.view())));
  };
  RpcServer server(context(), ServerOptions{.identity = MakeIdentity(1, "node")});
  ASSERT_TRUE(server.RegisterPayloadHandler("keep", keep).ok());
  EXPECT_EQ(server.RegisterHandler("keep", Echo()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(server.RegisterPayloadHandler("keep", keep).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(server.Start().ok());
  auto channel = MakeChannel(100, server.port(), 1);

  const std::string large = std::string(kOwnedFrameBytesMin, 'L') + "end";
  const std::string split_tail = std::string(3 << 20, 'T');
  const std::vector<std::string> expected = {"small", large, "head-" + split_tail, ""};
  ASSERT_EQ(CallSync(*channel, "keep", std::string("small")).value(), "5:" + std::to_string(Crc32c("small")));
  ASSERT_TRUE(CallSync(*channel, "keep", large).ok());
  const SharedBytes tail(split_tail);
  ASSERT_TRUE(CallSync(*channel, "keep", SplitPayload{"head-", tail, Crc32c(split_tail)}).ok());
  ASSERT_TRUE(CallSync(*channel, "keep", std::string()).ok());
  std::lock_guard lock(mu);
  ASSERT_EQ(kept.size(), expected.size());
  for (size_t i = 0; i < kept.size(); ++i) EXPECT_EQ(kept[i].view(), expected[i]) << i;
  // The large ones lie at the end of their receive buffers (FrameDecoder
  // contract 2): the payload is the last field of the envelope.
  for (size_t i : {1, 2}) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(kept[i].data() + kept[i].size()) % kOwnedFrameEndAlignment, 0u) << i;
  }
}

// Goal: CallForBytes answers every response payload as SharedBytes: a
// large one (kOwnedFrameBytesMin or more, plain or split) where its frame
// was received, which the caller may keep; a small one as it arrived;
// errors as statuses. A plain Call still gets a large response whole.
TEST_F(RpcTest, BytesCallsKeepLargeResponsesWhereTheyArrived) {
  const std::string large = std::string(kOwnedFrameBytesMin, 'L') + "end";
  const std::string split_tail = std::string(3 << 20, 'T');
  Handler answer = [&](const PeerInfo&, const pb::Envelope& request, Responder responder) {
    if (request.payload() == "large") return responder.Reply(large);
    if (request.payload() == "split") {
      return responder.Reply(SplitPayload{"head-", SharedBytes(split_tail), Crc32c(split_tail)});
    }
    if (request.payload() == "fail") return responder.Fail(Status::NotLeader(2, "try 2"));
    responder.Reply(request.payload());
  };
  auto server = StartServer(1, {{"answer", answer}});
  auto channel = MakeChannel(100, server->port(), 1);
  auto call_for_bytes = [&](std::string payload) {
    auto promise = std::make_shared<std::promise<Result<ReceivedBytes>>>();
    std::future<Result<ReceivedBytes>> future = promise->get_future();
    const Status accepted = channel->CallForBytes(
        "answer", std::move(payload), 2s, [promise](Result<ReceivedBytes> r) { promise->set_value(std::move(r)); });
    EXPECT_TRUE(accepted.ok()) << accepted.ToString();
    return future.get();
  };

  Result<ReceivedBytes> small = call_for_bytes("small");
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ(small->bytes.view(), "small");
  EXPECT_FALSE(small->crc32c.has_value());
  Result<ReceivedBytes> empty = call_for_bytes("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->bytes.empty());
  std::vector<ReceivedBytes> kept;
  for (const char* which : {"large", "split"}) {
    Result<ReceivedBytes> reply = call_for_bytes(which);
    ASSERT_TRUE(reply.ok()) << which << ": " << reply.status().ToString();
    kept.push_back(*reply);
  }
  EXPECT_EQ(kept[0].bytes.view(), large);
  EXPECT_EQ(kept[1].bytes.view(), "head-" + split_tail);
  // They lie at the end of their receive buffers (FrameDecoder contract 2):
  // the payload is the last field of the envelope, so its CRC is known.
  for (const ReceivedBytes& reply : kept) {
    const SharedBytes& bytes = reply.bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(bytes.data() + bytes.size()) % kOwnedFrameEndAlignment, 0u);
    ASSERT_TRUE(reply.crc32c.has_value());
    EXPECT_EQ(*reply.crc32c, Crc32c(bytes.view()));
  }
  Result<ReceivedBytes> failed = call_for_bytes("fail");
  EXPECT_EQ(failed.status().code(), StatusCode::kNotLeader);
  EXPECT_EQ(failed.status().leader_hint(), 2u);
  EXPECT_EQ(failed.status().message(), "try 2");
  EXPECT_EQ(channel->CallForBytes("answer", "x", 2s, nullptr).code(), StatusCode::kInvalidArgument);

  EXPECT_EQ(CallSync(*channel, "answer", "large").value(), large);
  EXPECT_EQ(CallSync(*channel, "answer", "split").value(), "head-" + split_tail);
}

// Goal: a reply whose large part is shared (Responder::Reply(SplitPayload))
// reaches the caller as head || tail; an empty tail sends the head alone; a
// reply over the frame limit answers InvalidArgument instead; a wrong tail
// CRC never delivers the bytes.
TEST_F(RpcTest, SplitRepliesShareTheirTail) {
  const std::string expected_tail = std::string(3 << 20, 'r') + "end";
  const SharedBytes tail(expected_tail);
  const SharedBytes too_large(std::string(limits::kRpcFrameBytesMax, 'x'));
  Handler split = [&](const PeerInfo&, const pb::Envelope& request, Responder responder) {
    if (request.payload() == "empty") return responder.Reply(SplitPayload{"head-only", {}, 0});
    if (request.payload() == "large") return responder.Reply(SplitPayload{"h", too_large, 0});
    const uint32_t crc = request.payload() == "bad-crc" ? 0 : Crc32c(tail.view());
    responder.Reply(SplitPayload{request.payload(), tail, crc});
  };
  auto server = StartServer(1, {{"split", split}});
  auto channel = MakeChannel(100, server->port(), 1);
  for (const std::string& head : {std::string(), std::string("head-"), std::string(300, 'h')}) {
    Result<std::string> reply = CallSync(*channel, "split", head);
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_EQ(*reply, head + expected_tail);
  }
  EXPECT_EQ(tail.view(), expected_tail);
  EXPECT_EQ(CallSync(*channel, "split", std::string("empty")).value(), "head-only");
  Result<std::string> large = CallSync(*channel, "split", std::string("large"));
  EXPECT_EQ(large.status().code(), StatusCode::kInvalidArgument) << large.status().ToString();
  EXPECT_NE(large.status().message().find("response too large"), std::string::npos);
  EXPECT_FALSE(CallSync(*channel, "split", std::string("bad-crc"), 500ms).ok());
}

// Goal: a handler may answer later from another thread; a Responder dropped
// unanswered answers Aborted.
TEST_F(RpcTest, ResponderAnswersFromAnyThreadOrAborts) {
  std::mutex mu;
  std::vector<std::thread> workers;
  Handler later = [&](const PeerInfo&, const pb::Envelope& request, Responder responder) {
    std::lock_guard lock(mu);
    workers.emplace_back([responder, payload = request.payload()] { responder.Reply(payload + "!"); });
  };
  Handler dropper = [](const PeerInfo&, const pb::Envelope&, Responder) {};
  auto server = StartServer(1, {{"later", later}, {"drop", dropper}});
  auto channel = MakeChannel(100, server->port(), 1);
  EXPECT_EQ(*CallSync(*channel, "later", "x"), "x!");
  EXPECT_EQ(CallSync(*channel, "drop", "").status().code(), StatusCode::kAborted);
  std::lock_guard lock(mu);
  for (auto& worker : workers) worker.join();
}

// Goal: many one-way messages arrive complete and in order, and go out in
// far fewer writes than messages.
TEST_F(RpcTest, OneWaySendsArriveInOrderAndAreBatched) {
  constexpr int kMessages = 20000;
  std::atomic<int> received{0};
  std::atomic<bool> in_order{true};
  Handler sink = [&](const PeerInfo& peer, const pb::Envelope& request, Responder responder) {
    EXPECT_FALSE(responder.expects_response());
    EXPECT_EQ(peer.peer_id, 100u);
    if (std::stoi(request.payload()) != received.load()) in_order = false;
    received.fetch_add(1);
  };
  auto server = StartServer(1, {{"append", sink}});
  auto channel = MakeChannel(100, server->port(), 1);
  for (int i = 0; i < kMessages; ++i) {
    const Status sent = channel->Send("append", std::to_string(i));
    ASSERT_TRUE(sent.ok()) << sent.ToString();
  }
  ASSERT_TRUE(WaitFor([&] { return received.load() == kMessages; }));
  EXPECT_TRUE(in_order.load());
  // The server may see the last frame before the client's write completes.
  ASSERT_TRUE(WaitFor([&] { return channel->stats().queued_frames == 0; }));
  const ChannelStats stats = channel->stats();
  EXPECT_EQ(stats.frames_sent, kMessages + 1u);  // + the Hello
  EXPECT_LT(stats.writes, stats.frames_sent / 4) << "writes=" << stats.writes;
  EXPECT_EQ(stats.queued_frames, 0u);
  EXPECT_EQ(stats.queued_bytes, 0u);
  const RpcMetrics client(process.registry, "client");
  EXPECT_EQ(client.frames_sent.value(), kMessages + 1u);
  EXPECT_EQ(client.writes.value(), stats.writes);
  EXPECT_EQ(RpcMetrics(process.registry, "server").frames_received.value(), kMessages + 1u);
}

// Goal: two peers talking to one server use exactly one connection each,
// and the server knows who sent what.
TEST_F(RpcTest, TwoPeersOneConnectionEach) {
  std::mutex mu;
  std::map<uint32_t, int> per_peer;
  Handler count = [&](const PeerInfo& peer, const pb::Envelope&, Responder responder) {
    {
      std::lock_guard lock(mu);
      ++per_peer[peer.peer_id];
    }
    responder.Reply(std::to_string(peer.peer_id));
  };
  auto server = StartServer(1, {{"count", count}});
  auto a = MakeChannel(11, server->port(), 1);
  auto b = MakeChannel(12, server->port(), 1);
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(a->Send("count", "").ok());
    ASSERT_TRUE(b->Send("count", "").ok());
  }
  EXPECT_EQ(*CallSync(*a, "count", ""), "11");
  EXPECT_EQ(*CallSync(*b, "count", ""), "12");
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(per_peer[11], 51);
    EXPECT_EQ(per_peer[12], 51);
  }
  EXPECT_EQ(server->stats().connections_accepted, 2u);
  EXPECT_EQ(server->stats().connections_authenticated, 2u);
  EXPECT_EQ(a->stats().connects, 1u);
  EXPECT_EQ(b->stats().connects, 1u);
  EXPECT_EQ(RpcMetrics(process.registry, "server").connections.value(), 2);
}

// Goal: a ChannelPool hands out one channel per peer id.
TEST_F(RpcTest, ChannelPoolKeepsOneChannelPerPeer) {
  auto server = StartServer(1, {{"echo", Echo()}});
  ChannelOptions defaults;
  defaults.identity = MakeIdentity(100, "router");
  ChannelPool pool(context(), defaults);
  EXPECT_EQ(pool.Get(1).status().code(), StatusCode::kUnavailable);
  ASSERT_TRUE(pool.SetPeerAddress(1, "127.0.0.1", server->port()).ok());
  Result<std::shared_ptr<Channel>> first = pool.Get(1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->get(), pool.Get(1)->get());
  EXPECT_EQ(*CallSync(**first, "echo", "p"), "p");
  ASSERT_TRUE(pool.SetPeerAddress(1, "127.0.0.1", server->port()).ok());  // unchanged: kept
  EXPECT_EQ(first->get(), pool.Get(1)->get());
}

// Goal: a call whose response does not come in time fails with Timeout no
// earlier than its deadline; the late response is counted and ignored.
TEST_F(RpcTest, CallTimeout) {
  std::mutex mu;
  std::vector<Responder> parked;
  Handler park = [&](const PeerInfo&, const pb::Envelope&, Responder responder) {
    std::lock_guard lock(mu);
    parked.push_back(responder);
  };
  auto server = StartServer(1, {{"park", park}, {"echo", Echo()}});
  auto channel = MakeChannel(100, server->port(), 1);
  const auto start = std::chrono::steady_clock::now();
  Result<std::string> result = CallSync(*channel, "park", "", 150ms);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(result.status().code(), StatusCode::kTimeout);
  EXPECT_GE(elapsed, 150ms);
  EXPECT_LT(elapsed, 1500ms);
  EXPECT_EQ(channel->stats().timeouts, 1u);
  EXPECT_EQ(channel->stats().pending_calls, 0u);
  {
    std::lock_guard lock(mu);
    ASSERT_EQ(parked.size(), 1u);
    parked[0].Reply("too late");
    parked.clear();
  }
  const RpcMetrics client(process.registry, "client");
  EXPECT_TRUE(WaitFor([&] { return client.late_responses.value() == 1; }));
  EXPECT_EQ(*CallSync(*channel, "echo", "still fine"), "still fine");
  EXPECT_EQ(client.calls(StatusCode::kTimeout).value(), 1u);
}

// Goal: when the server restarts on the same port, pending calls fail with
// Unavailable and the channel reconnects by itself.
TEST_F(RpcTest, ReconnectAfterServerRestart) {
  std::mutex mu;
  std::vector<Responder> parked;
  Handler park = [&](const PeerInfo&, const pb::Envelope&, Responder responder) {
    std::lock_guard lock(mu);
    parked.push_back(responder);
  };
  auto server = StartServer(1, {{"echo", Echo()}, {"park", park}});
  const uint16_t port = server->port();
  auto channel = MakeChannel(100, port, 1);
  ASSERT_EQ(*CallSync(*channel, "echo", "before"), "before");

  auto pending = std::make_shared<std::promise<Result<std::string>>>();
  ASSERT_TRUE(channel->Call("park", "", 5s, [pending](Result<std::string> r) {
    pending->set_value(std::move(r));
  }).ok());
  ASSERT_TRUE(WaitFor([&] { std::lock_guard lock(mu); return parked.size() == 1; }));
  server->Stop();
  EXPECT_EQ(pending->get_future().get().status().code(), StatusCode::kUnavailable);
  {
    std::lock_guard lock(mu);
    parked.clear();  // the connection is gone: answering is a no-op
  }
  server.reset();

  server = StartServer(1, {{"echo", Echo()}}, port);
  ASSERT_EQ(server->port(), port);
  std::optional<Result<std::string>> last;
  EXPECT_TRUE(WaitFor([&] {
    last = CallSync(*channel, "echo", "after");
    return last->ok();
  })) << last->status().ToString();
  EXPECT_EQ(**last, "after");
  EXPECT_EQ(channel->stats().connects, 2u);
}

// Goal: a peer that accepts but never completes the handshake makes the
// outbound queue fill, and a full queue refuses with Throttled instead of
// growing; so does the pending-call bound.
TEST_F(RpcTest, OutboundQueueFullIsThrottled) {
  asio::io_context silent_io;
  asio::ip::tcp::acceptor silent(silent_io, {asio::ip::make_address("127.0.0.1"), 0});
  const uint16_t port = silent.local_endpoint().port();

  ChannelOptions options;
  options.queue_frames_max = 4;
  options.queue_bytes_max = 1 << 20;
  options.pending_calls_max = 2;
  auto channel = MakeChannel(100, port, 1, options);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(channel->Send("m", "x").ok());
  EXPECT_EQ(channel->Send("m", "x").code(), StatusCode::kThrottled);
  EXPECT_EQ(channel->stats().queued_frames, 4u);
  EXPECT_EQ(channel->stats().throttled, 1u);
  EXPECT_EQ(RpcMetrics(process.registry, "client").throttled.value(), 1u);

  ChannelOptions small = options;
  small.queue_frames_max = 100;
  small.queue_bytes_max = 1000;
  auto by_bytes = MakeChannel(101, port, 1, small);
  ASSERT_TRUE(by_bytes->Send("m", std::string(5000, 'x')).ok());  // an empty queue admits anything
  EXPECT_EQ(by_bytes->Send("m", "x").code(), StatusCode::kThrottled);

  auto calls = MakeChannel(102, port, 1, small);
  auto ignore = [](Result<std::string>) {};
  ASSERT_TRUE(calls->Call("m", "", 5s, ignore).ok());
  ASSERT_TRUE(calls->Call("m", "", 5s, ignore).ok());
  EXPECT_EQ(calls->Call("m", "", 5s, ignore).code(), StatusCode::kThrottled);

  channel.reset();  // closing discards the queue and aborts the calls
  by_bytes.reset();
  calls.reset();
}

// Goal: a channel that cannot connect fails calls with Unavailable and
// then fails fast while it backs off.
TEST_F(RpcTest, UnreachablePeerFailsWithUnavailable) {
  uint16_t port = 0;
  {
    asio::io_context io;
    asio::ip::tcp::acceptor probe(io, {asio::ip::make_address("127.0.0.1"), 0});
    port = probe.local_endpoint().port();
  }  // closed: nothing listens there now
  ChannelOptions options;
  options.backoff_initial_ms = 500;
  options.backoff_max_ms = 1000;
  auto channel = MakeChannel(100, port, 1, options);
  EXPECT_EQ(CallSync(*channel, "echo", "").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(channel->Send("echo", "").code(), StatusCode::kUnavailable);
  EXPECT_EQ(channel->stats().connect_failures, 1u);
}

}  // namespace
}  // namespace tessera::rpc::testing
