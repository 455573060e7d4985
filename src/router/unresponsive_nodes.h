// UnresponsiveNodes: the storage nodes this router recently failed to get
// an answer from, so that routing looks past them for a while instead of
// sending every new request into the same silence.
//
// A node is marked when a call to it ended without an answer from it: the
// rpc layer timed out after sending (a paused process, a link cut in the
// kernel) or could not send at all (refused, reconnecting). It stays
// avoided for `avoid_ms` or until any answer from it arrives, whichever
// comes first. A node that answers, even with a refusal, is alive and is
// cleared at once.
//
// Contract:
//  - Avoided(node, now) is true from Mark(node, t) until t + avoid_ms, or
//    until Answered(node).
//  - At most limits::kRouterUnresponsiveNodesMax nodes are remembered; a
//    mark into a full set first forgets every expired entry, then, if still
//    full, the one that expires first (the policy only ever costs a slow
//    attempt, never correctness).
//  - avoid_ms == 0: nothing is ever avoided.
//
// Thread safety: every method from any thread (one mutex).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace tessera::router {

class UnresponsiveNodes {
 public:
  using Clock = std::chrono::steady_clock;

  explicit UnresponsiveNodes(uint32_t avoid_ms) : avoid_(std::chrono::milliseconds(avoid_ms)) {}

  void Mark(uint32_t node, Clock::time_point now);
  void Answered(uint32_t node);
  bool Avoided(uint32_t node, Clock::time_point now) const;
  size_t size() const;

 private:
  const Clock::duration avoid_;
  mutable std::mutex mu_;  // guards until_
  std::unordered_map<uint32_t, Clock::time_point> until_;
};

}  // namespace tessera::router
