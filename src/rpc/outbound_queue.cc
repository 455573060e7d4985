#include "rpc/outbound_queue.h"

#include "common/check.h"

namespace tessera::rpc::internal {

bool QueueBudget::TryAcquire(size_t bytes) {
  const size_t frames_before = frames_.fetch_add(1, std::memory_order_relaxed);
  const size_t bytes_before = bytes_.fetch_add(bytes, std::memory_order_relaxed);
  if (frames_before == 0) return true;
  if (frames_before < frames_max_ && bytes_before + bytes <= bytes_max_) return true;
  Release(1, bytes);
  return false;
}

void QueueBudget::Release(size_t frames, size_t bytes) {
  const size_t frames_before = frames_.fetch_sub(frames, std::memory_order_relaxed);
  const size_t bytes_before = bytes_.fetch_sub(bytes, std::memory_order_relaxed);
  TESSERA_CHECK(frames_before >= frames && bytes_before >= bytes);
}

void OutboundQueue::Push(OutFrame frame) { frames_.push_back(std::move(frame)); }

size_t OutboundQueue::TakeBatch(Clock::time_point now, size_t frames_max, size_t bytes_max,
                                std::vector<OutFrame>* batch) {
  size_t taken = 0;
  size_t bytes = 0;
  while (!frames_.empty() && taken < frames_max) {
    OutFrame& head = frames_.front();
    if (head.release > now) break;
    if (taken > 0 && bytes + head.size() > bytes_max) break;
    bytes += head.size();
    batch->push_back(std::move(head));
    frames_.pop_front();
    ++taken;
  }
  return taken;
}

std::deque<OutFrame> OutboundQueue::TakeAll() {
  std::deque<OutFrame> all;
  all.swap(frames_);
  return all;
}

}  // namespace tessera::rpc::internal
