#include "common/latency_window.h"

#include <algorithm>

#include "common/check.h"

namespace tessera {

LatencyWindow::LatencyWindow(size_t capacity) : ring_(capacity) { TESSERA_CHECK(capacity > 0); }

void LatencyWindow::Record(uint64_t at_us, uint64_t duration_us) {
  std::lock_guard lock(mu_);
  ring_[next_] = Sample{at_us, duration_us};
  next_ = (next_ + 1) % ring_.size();
  size_ = std::min(size_ + 1, ring_.size());
}

LatencyWindow::Summary LatencyWindow::Since(uint64_t from_us) const {
  std::vector<uint64_t> durations;
  {
    std::lock_guard lock(mu_);
    durations.reserve(size_);
    for (size_t i = 0; i < size_; ++i) {
      if (ring_[i].at_us >= from_us) durations.push_back(ring_[i].duration_us);
    }
  }
  Summary out;
  out.samples = durations.size();
  if (durations.empty()) return out;
  // Nearest rank: the smallest value with at least 99% of samples <= it.
  const size_t rank = (durations.size() * 99 + 99) / 100;  // ceil(0.99 n), >= 1
  std::nth_element(durations.begin(), durations.begin() + (rank - 1), durations.end());
  out.p99_us = durations[rank - 1];
  out.max_us = *std::max_element(durations.begin(), durations.end());
  return out;
}

}  // namespace tessera
