// Goal: fault rules drop or delay exactly the frames a process sends to the
// chosen peer, one way only, and can be changed at runtime.
#include <gtest/gtest.h>

#include <mutex>

#include "rpc/rpc_test_util.h"

namespace tessera::rpc::testing {
namespace {

constexpr uint32_t kNodeA = 1;
constexpr uint32_t kNodeB = 2;

// The payloads of the one-way "append" messages a node received, in order.
class Inbox {
 public:
  Handler handler() {
    return [this](const PeerInfo&, const pb::Envelope& request, Responder) {
      std::lock_guard lock(mu_);
      payloads_.push_back(request.payload());
    };
  }
  std::vector<std::string> payloads() const {
    std::lock_guard lock(mu_);
    return payloads_;
  }
  size_t size() const { return payloads().size(); }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> payloads_;
};

// Two nodes, A (`process`) and B (`peer_process`), each with a server and a
// channel to the other, as two processes of a cluster would have.
class TwoNodes : public RpcTest {
 protected:
  void SetUp() override {
    server_a = StartServer(kNodeA, {{"append", inbox_a.handler()}, {"echo", Echo()}}, 0, {},
                           &process);
    server_b = StartServer(kNodeB, {{"append", inbox_b.handler()}, {"echo", Echo()}}, 0, {},
                           &peer_process);
    ChannelOptions a;
    a.identity = MakeIdentity(kNodeA);
    ChannelOptions b;
    b.identity = MakeIdentity(kNodeB);
    a_to_b = MakeChannel(kNodeA, server_b->port(), kNodeB, a, &process);
    b_to_a = MakeChannel(kNodeB, server_a->port(), kNodeA, b, &peer_process);
    ASSERT_EQ(*CallSync(*a_to_b, "echo", "up"), "up");  // connected both ways first
    ASSERT_EQ(*CallSync(*b_to_a, "echo", "up"), "up");
  }

  Inbox inbox_a;
  Inbox inbox_b;
  std::unique_ptr<RpcServer> server_a;
  std::unique_ptr<RpcServer> server_b;
  std::unique_ptr<Channel> a_to_b;
  std::unique_ptr<Channel> b_to_a;
};

// Goal: drop probability 1 on A for destination B cuts A -> B (messages and
// A's responses to B) while B -> A messages still arrive; clearing the rule
// at runtime heals the link.
TEST_F(TwoNodes, DropIsOneWayAndTogglesAtRuntime) {
  ASSERT_TRUE(process.faults.SetRule(kNodeB, FaultRule{1.0, 0}).ok());
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(a_to_b->Send("append", "x").ok());
    ASSERT_TRUE(b_to_a->Send("append", "y").ok());
  }
  ASSERT_TRUE(WaitFor([&] { return inbox_a.size() == 50; }));
  EXPECT_EQ(CallSync(*a_to_b, "echo", "lost", 100ms).status().code(), StatusCode::kTimeout);
  // B's request reaches A, but A's response to B is dropped too.
  EXPECT_EQ(CallSync(*b_to_a, "echo", "lost", 100ms).status().code(), StatusCode::kTimeout);
  EXPECT_EQ(inbox_b.size(), 0u);
  EXPECT_EQ(a_to_b->stats().fault_dropped, 51u);
  EXPECT_EQ(RpcMetrics(process.registry, "client").fault_dropped_frames.value(), 51u);
  const RpcMetrics server_a_metrics(process.registry, "server");
  EXPECT_TRUE(WaitFor([&] { return server_a_metrics.fault_dropped_frames.value() == 1; }));
  EXPECT_EQ(b_to_a->stats().fault_dropped, 0u);

  process.faults.ClearRule(kNodeB);
  ASSERT_TRUE(a_to_b->Send("append", "x").ok());
  EXPECT_TRUE(WaitFor([&] { return inbox_b.size() == 1; }));
  EXPECT_EQ(*CallSync(*b_to_a, "echo", "healed"), "healed");
  EXPECT_EQ(a_to_b->stats().connects, 1u);  // the connection itself never broke
}

// Goal: a delay rule makes calls take at least the delay, keeps one-way
// messages in order, and is counted.
TEST_F(TwoNodes, DelayAddsLatencyAndKeepsOrder) {
  ASSERT_TRUE(process.faults.SetRule(kNodeB, FaultRule{0.0, 150}).ok());
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(*CallSync(*a_to_b, "echo", "slow"), "slow");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
  EXPECT_EQ(a_to_b->stats().fault_delayed, 1u);
  // The other direction is not delayed.
  const auto back = std::chrono::steady_clock::now();
  ASSERT_TRUE(b_to_a->Send("append", "fast").ok());
  ASSERT_TRUE(WaitFor([&] { return inbox_a.size() == 1; }));
  EXPECT_LT(std::chrono::steady_clock::now() - back, 150ms);

  const auto sent_at = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(a_to_b->Send("append", std::to_string(i)).ok());
  ASSERT_TRUE(WaitFor([&] { return inbox_b.size() == 100; }));
  EXPECT_GE(std::chrono::steady_clock::now() - sent_at, 150ms);
  const std::vector<std::string> payloads = inbox_b.payloads();
  for (int i = 0; i < 100; ++i) EXPECT_EQ(payloads[i], std::to_string(i));
  EXPECT_EQ(RpcMetrics(process.registry, "client").fault_delayed_frames.value(), 101u);
}

}  // namespace
}  // namespace tessera::rpc::testing
