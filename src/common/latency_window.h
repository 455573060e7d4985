// LatencyWindow: the durations of the most recent events of one kind (e.g.
// synced log writes), for a percentile over a recent span. Bounded: it
// keeps the last `capacity` samples, so a span holding more events than
// that is summarised from its newest `capacity` ones.
//
// Thread safety: Record and Since may be called concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace tessera {

class LatencyWindow {
 public:
  explicit LatencyWindow(size_t capacity);

  // An event that ended at `at_us` (a monotonic clock) took `duration_us`.
  void Record(uint64_t at_us, uint64_t duration_us);

  struct Summary {
    uint64_t samples = 0;
    uint64_t p99_us = 0;  // nearest-rank 99th percentile; 0 without samples
    uint64_t max_us = 0;
  };
  // The events that ended at or after `from_us`.
  Summary Since(uint64_t from_us) const;

 private:
  struct Sample {
    uint64_t at_us = 0;
    uint64_t duration_us = 0;
  };
  mutable std::mutex mu_;
  std::vector<Sample> ring_;  // guarded by mu_; capacity fixed at construction
  size_t next_ = 0;           // guarded by mu_
  size_t size_ = 0;           // guarded by mu_
};

}  // namespace tessera
