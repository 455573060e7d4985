// Goal: the gate keeps each node's unanswered reads within their byte and
// count bounds, starts waiting reads as earlier ones are answered (reads a
// client waits for before read-ahead, none overtaking), turns a read that
// waited too long into Unavailable, and keeps the stack flat when starts
// fail at once and Leave from inside a start.
#include "blob/node_read_gate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace tessera::blob {
namespace {

using namespace std::chrono_literals;
using Clock = NodeReadGate::Clock;

constexpr uint32_t kNode = 7;

NodeReadGate::Options Bounds(size_t bytes_max, size_t reads_max, Clock::duration wait_max = 1s) {
  return NodeReadGate::Options{bytes_max, reads_max, wait_max};
}

// Records the order in which starts ran and with what status.
struct Journal {
  std::vector<std::string> started;
  NodeReadGate::Start Record(std::string name) {
    return [this, name](Status s) {
      started.push_back(s.ok() ? name : name + ":" + std::string(StatusCodeName(s.code())));
    };
  }
};

TEST(NodeReadGateTest, ReadsBeyondTheByteBoundWaitForEarlierOnesToBeAnswered) {
  NodeReadGate gate(Bounds(10, 8));
  Journal j;
  const auto now = Clock::now();
  gate.Enter(kNode, 6, ReadPriority::kClientWaiting, now, j.Record("a"));
  gate.Enter(kNode, 4, ReadPriority::kClientWaiting, now, j.Record("b"));
  gate.Enter(kNode, 1, ReadPriority::kClientWaiting, now, j.Record("c"));
  EXPECT_EQ(j.started, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(gate.bytes_in_flight(kNode), 10u);
  EXPECT_EQ(gate.reads_waiting(), 1u);
  gate.Leave(kNode, 4, now);
  EXPECT_EQ(j.started, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(gate.bytes_in_flight(kNode), 7u);
  EXPECT_EQ(gate.reads_in_flight(kNode), 2u);
  EXPECT_EQ(gate.reads_waited(), 1u);
}

TEST(NodeReadGateTest, ReadsBeyondTheCountBoundWait) {
  NodeReadGate gate(Bounds(1'000, 2));
  Journal j;
  const auto now = Clock::now();
  for (const char* name : {"a", "b", "c"}) {
    gate.Enter(kNode, 1, ReadPriority::kClientWaiting, now, j.Record(name));
  }
  EXPECT_EQ(j.started.size(), 2u);
  gate.Leave(kNode, 1, now);
  EXPECT_EQ(j.started.size(), 3u);
  EXPECT_EQ(gate.reads_in_flight(kNode), 2u);
}

TEST(NodeReadGateTest, ANodeWithNothingInFlightTakesAReadLargerThanTheBound) {
  NodeReadGate gate(Bounds(10, 8));
  Journal j;
  const auto now = Clock::now();
  gate.Enter(kNode, 50, ReadPriority::kReadAhead, now, j.Record("big"));
  gate.Enter(kNode, 1, ReadPriority::kClientWaiting, now, j.Record("small"));
  EXPECT_EQ(j.started, (std::vector<std::string>{"big"}));
  gate.Leave(kNode, 50, now);
  EXPECT_EQ(j.started, (std::vector<std::string>{"big", "small"}));
}

TEST(NodeReadGateTest, ReadsAClientWaitsForStartBeforeReadAheadAndNoneOvertakes) {
  NodeReadGate gate(Bounds(10, 8));
  Journal j;
  const auto now = Clock::now();
  gate.Enter(kNode, 10, ReadPriority::kClientWaiting, now, j.Record("full"));
  gate.Enter(kNode, 2, ReadPriority::kReadAhead, now, j.Record("ahead1"));
  gate.Enter(kNode, 9, ReadPriority::kClientWaiting, now, j.Record("big"));
  gate.Enter(kNode, 1, ReadPriority::kClientWaiting, now, j.Record("small"));
  gate.Enter(kNode, 1, ReadPriority::kReadAhead, now, j.Record("ahead2"));
  EXPECT_EQ(j.started, (std::vector<std::string>{"full"}));
  gate.Leave(kNode, 10, now);
  // "big" goes first; "small" waits behind it although it would fit, and
  // read-ahead waits behind both.
  EXPECT_EQ(j.started, (std::vector<std::string>{"full", "big", "small"}));
  gate.Leave(kNode, 9, now);
  EXPECT_EQ(j.started, (std::vector<std::string>{"full", "big", "small", "ahead1", "ahead2"}));
  // A new read-ahead read does not pass one waiting before it.
  gate.Enter(kNode, 7, ReadPriority::kReadAhead, now, j.Record("ahead3"));
  gate.Enter(kNode, 1, ReadPriority::kReadAhead, now, j.Record("ahead4"));
  EXPECT_EQ(j.started.size(), 5u);
  EXPECT_EQ(gate.reads_waiting(), 2u);
}

TEST(NodeReadGateTest, NodesAreBoundedSeparately) {
  NodeReadGate gate(Bounds(10, 8));
  Journal j;
  const auto now = Clock::now();
  gate.Enter(1, 10, ReadPriority::kClientWaiting, now, j.Record("n1"));
  gate.Enter(2, 10, ReadPriority::kClientWaiting, now, j.Record("n2"));
  gate.Enter(1, 1, ReadPriority::kClientWaiting, now, j.Record("n1-wait"));
  EXPECT_EQ(j.started, (std::vector<std::string>{"n1", "n2"}));
  gate.Leave(2, 10, now);
  EXPECT_EQ(j.started.size(), 2u);
  gate.Leave(1, 10, now);
  EXPECT_EQ(j.started.back(), "n1-wait");
}

TEST(NodeReadGateTest, AReadThatWaitedTooLongIsUnavailableAndHoldsNothing) {
  NodeReadGate gate(Bounds(10, 8, 100ms));
  Journal j;
  const auto t0 = Clock::now();
  gate.Enter(kNode, 10, ReadPriority::kClientWaiting, t0, j.Record("slow"));
  gate.Enter(kNode, 5, ReadPriority::kReadAhead, t0, j.Record("old"));
  gate.Enter(kNode, 5, ReadPriority::kClientWaiting, t0 + 50ms, j.Record("young"));
  // An Enter past old's deadline expires it even while nothing left.
  gate.Enter(kNode, 1, ReadPriority::kReadAhead, t0 + 120ms, j.Record("new"));
  EXPECT_EQ(j.started, (std::vector<std::string>{"slow", "old:Unavailable"}));
  gate.Leave(kNode, 10, t0 + 130ms);
  EXPECT_EQ(j.started, (std::vector<std::string>{"slow", "old:Unavailable", "young", "new"}));
  EXPECT_EQ(gate.bytes_in_flight(kNode), 6u);
  EXPECT_EQ(gate.reads_waiting(), 0u);
}

TEST(NodeReadGateTest, StartsThatLeaveAtOnceDoNotRecurse) {
  NodeReadGate gate(Bounds(1, 1));
  const auto now = Clock::now();
  int depth = 0;
  int depth_max = 0;
  int started = 0;
  constexpr int kReads = 20'000;  // deep enough to overflow a recursing stack
  gate.Enter(kNode, 1, ReadPriority::kClientWaiting, now, [](Status) {});
  for (int i = 0; i < kReads; ++i) {
    gate.Enter(kNode, 1, ReadPriority::kReadAhead, now, [&](Status s) {
      ASSERT_TRUE(s.ok());
      depth_max = std::max(depth_max, ++depth);
      ++started;
      gate.Leave(kNode, 1, now);  // its send failed at once
      --depth;
    });
  }
  gate.Leave(kNode, 1, now);
  EXPECT_EQ(started, kReads);
  EXPECT_EQ(depth_max, 1);
  EXPECT_EQ(gate.reads_in_flight(kNode), 0u);
  EXPECT_EQ(gate.reads_waiting(), 0u);
}

TEST(NodeReadGateTest, ConcurrentReadsNeverPassTheBounds) {
  constexpr size_t kBytesMax = 64;
  constexpr size_t kReadsMax = 4;
  NodeReadGate gate(Bounds(kBytesMax, kReadsMax, 1h));
  std::atomic<bool> over{false};
  std::atomic<int> answered{0};
  constexpr int kThreads = 4;
  constexpr int kReadsPerThread = 2'000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kReadsPerThread; ++i) {
        const size_t bytes = 1 + static_cast<size_t>((t * 31 + i * 7) % 32);
        const uint32_t node = static_cast<uint32_t>(i % 2);
        gate.Enter(node, bytes, i % 3 == 0 ? ReadPriority::kClientWaiting : ReadPriority::kReadAhead,
                   Clock::now(), [&, node, bytes](Status s) {
                     if (!s.ok() || gate.bytes_in_flight(node) > kBytesMax ||
                         gate.reads_in_flight(node) > kReadsMax) {
                       over = true;
                     }
                     // Answered at once, on this thread or the next Leave's.
                     gate.Leave(node, bytes, Clock::now());
                     ++answered;
                   });
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_FALSE(over.load());
  EXPECT_EQ(answered.load(), kThreads * kReadsPerThread);
  EXPECT_EQ(gate.reads_waiting(), 0u);
  EXPECT_EQ(gate.reads_in_flight(0) + gate.reads_in_flight(1), 0u);
}

}  // namespace
}  // namespace tessera::blob
