#include "storage/obsolete_version_flush.h"

#include <algorithm>

namespace tessera::storage {

ObsoleteVersionFlush::ObsoleteVersionFlush(ObsoleteVersionFlushOptions options)
    : options_(options) {}

bool ObsoleteVersionFlush::Observe(const MemtableScanWork& work,
                                   std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mu_);
  window_steps_ += work.memtable_steps;
  window_rows_ += std::max<uint64_t>(work.rows, 1);
  if (window_steps_ < options_.steps_min) return false;
  const bool mostly_obsolete = window_steps_ > options_.steps_per_row_max * window_rows_;
  window_steps_ = 0;
  window_rows_ = 0;
  if (!mostly_obsolete) return false;
  if (last_request_ && now - *last_request_ < options_.interval_min) return false;
  last_request_ = now;
  flushes_requested_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace tessera::storage
