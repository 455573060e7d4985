// ReadAheadBudget: the router-wide bound on the memory GETs spend reading
// ahead. Every GET may always hold one piece, so each stream makes progress
// whatever the others hold; each piece it reads ahead beyond that takes its
// bytes from this budget and gives them back once written or dropped. With
// the budget spent, streams read one piece at a time (D51).
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>

#include "common/check.h"

namespace tessera::s3::front {

class ReadAheadBudget {
 public:
  explicit ReadAheadBudget(size_t bytes_max) : bytes_max_(bytes_max) {}
  ReadAheadBudget(const ReadAheadBudget&) = delete;
  ReadAheadBudget& operator=(const ReadAheadBudget&) = delete;

  // Takes `bytes`; false (nothing taken) when that would pass the maximum.
  bool TryAcquire(size_t bytes) {
    size_t held = bytes_.load(std::memory_order_relaxed);
    do {
      if (bytes > bytes_max_ - held) return false;
    } while (!bytes_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
    return true;
  }

  // Gives back bytes an earlier TryAcquire took.
  void Release(size_t bytes) {
    const size_t before = bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    TESSERA_CHECK(before >= bytes);
  }

  size_t bytes() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  const size_t bytes_max_;
  std::atomic<size_t> bytes_{0};
};

}  // namespace tessera::s3::front
