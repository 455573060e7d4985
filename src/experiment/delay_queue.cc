#include "experiment/delay_queue.h"

#include <algorithm>
#include <cmath>

#include "common/splitmix64.h"

namespace tessera::experiment {

namespace {
int64_t Nanos(double ms) { return static_cast<int64_t>(std::llround(ms * 1e6)); }
}  // namespace

DelayDraw::DelayDraw(const NetnsShaping& shaping, uint64_t seed)
    : delay_ns_(Nanos(shaping.delay_ms)),
      jitter_ns_(Nanos(shaping.jitter_ms)),
      loss_share_(shaping.loss_percent / 100.0),
      state_(seed) {}

PacketFate DelayDraw::Next() {
  PacketFate fate;
  if (loss_share_ > 0 && UnitInterval(SplitMix64Next(state_)) < loss_share_) {
    fate.lost = true;
    return fate;
  }
  int64_t delay = delay_ns_;
  if (jitter_ns_ > 0) {
    const double offset = (2 * UnitInterval(SplitMix64Next(state_)) - 1) * static_cast<double>(jitter_ns_);
    delay += static_cast<int64_t>(std::llround(offset));
  }
  fate.delay_ns = std::max<int64_t>(0, delay);
  return fate;
}

bool DelayQueue::Push(int64_t release_ns, HeldPacket packet) {
  if (heap_.size() >= capacity_) return false;
  heap_.push(Entry{release_ns, pushed_++, packet});
  return true;
}

std::vector<HeldPacket> DelayQueue::PopDue(int64_t now_ns) {
  std::vector<HeldPacket> due;
  while (!heap_.empty() && heap_.top().release_ns <= now_ns) {
    due.push_back(heap_.top().packet);
    heap_.pop();
  }
  return due;
}

std::vector<HeldPacket> DelayQueue::PopAll() {
  std::vector<HeldPacket> all;
  all.reserve(heap_.size());
  while (!heap_.empty()) {
    all.push_back(heap_.top().packet);
    heap_.pop();
  }
  return all;
}

std::optional<int64_t> DelayQueue::NextRelease() const {
  if (heap_.empty()) return std::nullopt;
  return heap_.top().release_ns;
}

}  // namespace tessera::experiment
