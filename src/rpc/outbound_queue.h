// Outbound frames of one connection: a FIFO whose frames may carry a
// release time (fault-injected delay), taken in batches for one gather
// write; and QueueBudget, the bound on frames accepted and not yet written.
//
// Invariants:
//  1. Frames leave an OutboundQueue in the order they entered.
//  2. TakeBatch never passes a frame whose release time is in the future
//     (head-of-line: the frames behind it wait too).
//  3. A budgeted frame's bytes are acquired from its QueueBudget before it
//     is queued and released exactly once: when written, dropped or
//     discarded.
//
// Thread safety: an OutboundQueue belongs to one strand. QueueBudget may be
// used from any thread (atomics).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/shared_bytes.h"

namespace tessera::rpc::internal {

using Clock = std::chrono::steady_clock;

struct OutFrame {
  explicit OutFrame(std::string frame_bytes, Clock::time_point release_at = {},
                    bool is_budgeted = true)
      : bytes(std::move(frame_bytes)), release(release_at), budgeted(is_budgeted) {}

  std::string bytes;           // header + payload (all of it, or all but `tail`)
  Clock::time_point release{}; // not written before this
  bool budgeted = true;        // false for handshake frames
  // The frame's last bytes, shared with other frames and never copied
  // (EncodeFrameSplit); empty for a frame that is all in `bytes`.
  SharedBytes tail;

  size_t size() const { return bytes.size() + tail.size(); }
};

class QueueBudget {
 public:
  QueueBudget(size_t frames_max, size_t bytes_max)
      : frames_max_(frames_max), bytes_max_(bytes_max) {}

  // Acquires one frame of `bytes`; false (nothing acquired) when that would
  // exceed a bound. An empty budget always admits one frame.
  bool TryAcquire(size_t bytes);
  void Release(size_t frames, size_t bytes);

  size_t frames() const { return frames_.load(std::memory_order_relaxed); }
  size_t bytes() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  const size_t frames_max_;
  const size_t bytes_max_;
  std::atomic<size_t> frames_{0};
  std::atomic<size_t> bytes_{0};
};

class OutboundQueue {
 public:
  void Push(OutFrame frame);

  // Moves into `batch` the frames at the head released by `now`, at most
  // `frames_max` of them and, beyond the first, at most `bytes_max` bytes in
  // all. Returns the number moved.
  size_t TakeBatch(Clock::time_point now, size_t frames_max, size_t bytes_max,
                   std::vector<OutFrame>* batch);

  bool empty() const { return frames_.empty(); }
  size_t size() const { return frames_.size(); }
  Clock::time_point head_release() const { return frames_.front().release; }

  // Removes every frame; returns them (so their budget can be released).
  std::deque<OutFrame> TakeAll();

 private:
  std::deque<OutFrame> frames_;
};

// Releases the budget of the budgeted frames among `frames`; returns how
// many frames that was.
template <typename Frames>
size_t ReleaseBudget(QueueBudget& budget, const Frames& frames) {
  size_t count = 0;
  size_t bytes = 0;
  for (const OutFrame& frame : frames) {
    if (!frame.budgeted) continue;
    ++count;
    bytes += frame.size();
  }
  if (count > 0) budget.Release(count, bytes);
  return count;
}

}  // namespace tessera::rpc::internal
