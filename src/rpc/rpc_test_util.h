// Test helpers for the rpc module: an io_context run by a small thread
// pool, identities, synchronous wrappers, and RawClient, a blocking socket
// that speaks the wire format by hand (to send what a Channel never would).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/crc32c.h"
#include "common/metrics.h"
#include "rpc/auth.h"
#include "rpc/channel.h"
#include "rpc/envelope.h"
#include "rpc/fault_injector.h"
#include "rpc/frame.h"
#include "rpc/rpc_metrics.h"
#include "rpc/server.h"

namespace tessera::rpc::testing {

namespace asio = boost::asio;
using namespace std::chrono_literals;

inline const std::string kSecret = "0123456789abcdef-test-cluster-secret";

inline Identity MakeIdentity(uint32_t peer_id, std::string role = "node",
                             std::string secret = kSecret) {
  return Identity{peer_id, std::move(role), std::move(secret)};
}

// An io_context run by `n` threads until destruction, which waits (up to
// 5 s) for every handler to drain before stopping.
class IoThreads {
 public:
  explicit IoThreads(int n = 2) : guard_(asio::make_work_guard(io)) {
    for (int i = 0; i < n; ++i) threads_.emplace_back([this] { io.run(); });
  }
  ~IoThreads() {
    guard_.reset();
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!io.stopped() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    EXPECT_TRUE(io.stopped()) << "io_context still had work 5 s after shutdown";
    io.stop();
    for (auto& t : threads_) t.join();
  }

  asio::io_context io;

 private:
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::vector<std::thread> threads_;
};

// Polls `condition` until true or `timeout`; returns its last value.
inline bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 5s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

// Call and wait for the callback. A refused call returns its status.
template <typename Payload = std::string>
Result<std::string> CallSync(Channel& channel, std::string_view method, Payload payload,
                             std::chrono::milliseconds timeout = 2s) {
  auto promise = std::make_shared<std::promise<Result<std::string>>>();
  std::future<Result<std::string>> future = promise->get_future();
  const Status accepted = channel.Call(method, std::move(payload), timeout,
                                       [promise](Result<std::string> r) { promise->set_value(std::move(r)); });
  if (!accepted.ok()) return accepted;
  return future.get();
}

// One process's rpc context: its own metrics and fault injector.
struct Process {
  explicit Process(uint64_t seed = 1) : faults(seed) {}
  RpcContext context(asio::io_context& io) { return RpcContext{io, registry, faults}; }
  metrics::Registry registry;
  FaultInjector faults;
};

// Fixture: one io pool and one default process.
class RpcTest : public ::testing::Test {
 protected:
  // Declared before `threads` so they outlive the io_context's handlers.
  Process process{1};
  Process peer_process{2};  // a second process, for tests of two nodes
  IoThreads threads;

  RpcContext context() { return process.context(threads.io); }

  // A started server on 127.0.0.1, port 0 unless given.
  std::unique_ptr<RpcServer> StartServer(
      uint32_t peer_id, const std::vector<std::pair<std::string, Handler>>& handlers,
      uint16_t port = 0, ServerOptions options = {}, Process* in = nullptr) {
    if (options.identity.peer_id == 0) options.identity = MakeIdentity(peer_id, "node");
    options.port = port;
    auto server = std::make_unique<RpcServer>(in ? in->context(threads.io) : context(), options);
    for (const auto& [method, handler] : handlers) {
      EXPECT_TRUE(server->RegisterHandler(method, handler).ok());
    }
    const Status started = server->Start();
    EXPECT_TRUE(started.ok()) << started.ToString();
    return server;
  }

  std::unique_ptr<Channel> MakeChannel(uint32_t self_id, uint16_t port, uint32_t remote_id,
                                       ChannelOptions options = {}, Process* in = nullptr) {
    if (options.identity.peer_id == 0) options.identity = MakeIdentity(self_id, "router");
    options.host = "127.0.0.1";
    options.port = port;
    options.remote_peer_id = remote_id;
    Result<std::unique_ptr<Channel>> channel =
        Channel::Create(in ? in->context(threads.io) : context(), options);
    EXPECT_TRUE(channel.ok()) << channel.status().ToString();
    return channel.ok() ? std::move(channel).value() : nullptr;
  }

  static Handler Echo() {
    return [](const PeerInfo&, const pb::Envelope& request, Responder responder) {
      responder.Reply(request.payload());
    };
  }
};

// A blocking client that writes raw bytes; every read waits at most 2 s.
class RawClient {
 public:
  explicit RawClient(uint16_t port) : socket_(io_) {
    socket_.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }

  void Write(std::string_view bytes) {
    boost::system::error_code error;
    asio::write(socket_, asio::buffer(bytes.data(), bytes.size()), error);
  }

  void WriteEnvelope(const pb::Envelope& envelope) {
    Write(EncodeFrame(envelope, limits::kRpcFrameBytesMax).value());
  }

  // The next frame's envelope, or nullopt on close, timeout or bad frame.
  std::optional<pb::Envelope> ReadEnvelope() {
    std::string header(kFrameHeaderBytes, '\0');
    if (!ReadExactly(header)) return std::nullopt;
    const auto* h = reinterpret_cast<const unsigned char*>(header.data());
    const uint32_t length = (uint32_t{h[0]} << 24) | (uint32_t{h[1]} << 16) | (uint32_t{h[2]} << 8) | h[3];
    std::string payload(length, '\0');
    if (!ReadExactly(payload)) return std::nullopt;
    pb::Envelope envelope;
    if (!envelope.ParseFromString(payload)) return std::nullopt;
    return envelope;
  }

  // Reads the Challenge, answers a Hello made with `secret`, reads the
  // Welcome. True when the server welcomed us.
  bool Handshake(const std::string& secret = kSecret, uint32_t peer_id = 77) {
    const std::optional<pb::Envelope> challenge_envelope = ReadEnvelope();
    if (!challenge_envelope || challenge_envelope->method() != kChallengeMethod) return false;
    pb::Challenge challenge;
    if (!challenge.ParseFromString(challenge_envelope->payload())) return false;
    pb::Hello hello;
    hello.set_protocol_version(kProtocolVersion);
    hello.set_peer_id(peer_id);
    hello.set_role("raw");
    hello.set_client_nonce(RandomNonce());
    hello.set_mac(HelloMac(secret, challenge.server_nonce(), hello.client_nonce(), peer_id, "raw"));
    WriteEnvelope(MakeRequest(0, kHelloMethod, hello.SerializeAsString()));
    const std::optional<pb::Envelope> welcome = ReadEnvelope();
    return welcome && welcome->method() == kWelcomeMethod;
  }

  // True when the server closed the connection within 2 s (data before the
  // close is skipped).
  bool WaitClosed() {
    std::string sink(4096, '\0');
    for (;;) {
      boost::system::error_code error;
      if (!ReadSome(sink, &error)) return false;  // timed out: still open
      if (error) return true;
    }
  }

 private:
  bool ReadExactly(std::string& out) {
    bool done = false;
    boost::system::error_code result;
    asio::async_read(socket_, asio::buffer(out), [&](const boost::system::error_code& e, size_t) {
      result = e;
      done = true;
    });
    return RunUntil(done) && !result;
  }

  // False on timeout; otherwise *error holds the read's outcome.
  bool ReadSome(std::string& buffer, boost::system::error_code* error) {
    bool done = false;
    socket_.async_read_some(asio::buffer(buffer), [&](const boost::system::error_code& e, size_t) {
      *error = e;
      done = true;
    });
    return RunUntil(done);
  }

  bool RunUntil(const bool& done) {
    io_.restart();
    io_.run_for(2s);
    if (done) return true;
    socket_.cancel();
    io_.restart();
    io_.run();
    return false;
  }

  asio::io_context io_;
  asio::ip::tcp::socket socket_;
};

}  // namespace tessera::rpc::testing
