// NodeReadGate: bounds the blob reads one BlobClient has asked of each node
// and not yet seen answered, in reply bytes and in count. A node queues at
// most limits::kRpcServerQueueBytesMax reply bytes for one connection and
// closes it as a slow peer beyond that, and holds at most
// limits::kBlobServiceQueueMax blob requests (beyond: Throttled): a router
// reading ahead for many GETs must never ask one node for more than that.
// Reads beyond the bounds wait here, in order of priority, and start as the
// ones ahead of them are answered.
//
// Contract:
//  1. Enter(node, bytes, priority, now, start) calls start(OK) before it
//     returns (unless called from within a start: contract 4) when the
//     node has no read in flight, or when `bytes` more stay within
//     bytes_max and one more within reads_max; otherwise the read waits. A read started with OK holds its bytes until Leave(node, bytes,
//     now), which its owner calls exactly once.
//  2. Leave gives the bytes back and starts waiting reads that now fit, the
//     node's kClientWaiting reads before its kReadAhead ones, first come
//     first served within each; a read that does not fit stops the others
//     behind it (no overtaking by smaller reads).
//  3. A waiting read is never sent after waiting longer than wait_max: when
//     it reaches the head past that, start(Unavailable) is called instead,
//     it holds nothing and must not Leave (its owner tries another replica:
//     the node has been slow to answer the reads ahead of it).
//  4. start runs without the gate's lock held, on the thread whose Enter or
//     Leave let it start. Calls made from within a start (its send failed at
//     once, so it Leaves and tries another node) do not recurse: the starts
//     they free run from the outermost call's loop on that thread, so the
//     stack stays flat however many reads wait.
//  5. The gate holds no clock: callers pass `now`. Waiting reads are bounded
//     by the caller (each is an admitted BlobClient operation).
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tessera::blob {

enum class ReadPriority {
  kClientWaiting,  // a client waits for these bytes now (a GET's next piece)
  kReadAhead,      // bytes read ahead of the client
};

class NodeReadGate {
 public:
  using Clock = std::chrono::steady_clock;
  using Start = std::function<void(Status)>;

  struct Options {
    size_t bytes_max = 0;  // > 0
    size_t reads_max = 0;  // > 0
    Clock::duration wait_max{};
  };

  explicit NodeReadGate(Options options);
  NodeReadGate(const NodeReadGate&) = delete;
  NodeReadGate& operator=(const NodeReadGate&) = delete;

  void Enter(uint32_t node, size_t bytes, ReadPriority priority, Clock::time_point now, Start start);
  void Leave(uint32_t node, size_t bytes, Clock::time_point now);

  // For tests and gauges.
  size_t bytes_in_flight(uint32_t node) const;
  size_t reads_in_flight(uint32_t node) const;
  size_t reads_waiting() const;
  // Reads that waited before they started or expired, since construction.
  uint64_t reads_waited() const;

 private:
  struct Waiter {
    size_t bytes;
    Clock::time_point since;
    Start start;
  };
  struct NodeState {
    size_t bytes = 0;
    size_t reads = 0;
    std::deque<Waiter> waiting[2];  // by ReadPriority
  };
  using ReadyList = std::vector<std::pair<Start, Status>>;

  bool FitsLocked(const NodeState& state, size_t bytes) const;
  // Moves the node's waiting reads that may start (or have expired) to
  // `ready`, taking the bytes of those that start.
  void AdmitWaitingLocked(NodeState& state, Clock::time_point now, ReadyList& ready);
  // Calls the starts (contract 4), without the lock.
  static void Run(ReadyList ready);

  const Options options_;
  mutable std::mutex mu_;  // guards everything below
  std::unordered_map<uint32_t, NodeState> nodes_;
  size_t waiting_ = 0;
  uint64_t waited_ = 0;
};

}  // namespace tessera::blob
