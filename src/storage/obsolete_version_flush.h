// ObsoleteVersionFlush: decides when the applied state's memtable should be
// flushed because scans spend their time stepping over obsolete versions.
//
// Why: RocksDB keeps every version of a key in the memtable until it is
// flushed. A hot key set overwritten thousands of times (an S3 object
// rewritten in a loop, the usage counters) leaves dozens of versions per key
// there, and every scan over them (a listing, the reads of an S3 op) steps
// through all of them: a 1,000-key listing went from 1.9 ms to 17 ms after
// 43k overwrites of its keys. A flush writes one version per key and starts
// an empty memtable, so scans are cheap again. (RocksDB 9 added the same
// rule itself as memtable_op_scan_flush_trigger; Debian 12 ships 7.8.)
//
// Contract:
//  1. Observe(work, now) is told what one scan did in the memtable. Scans
//     are judged together, in windows: once the scans observed since the
//     last judgement took at least options.steps_min memtable steps (Next +
//     Seek), the window is judged and a new one starts. (A listing reads in
//     pages of ~128 rows, each scan alone too small to judge.)
//  2. Observe answers true (the caller should request a flush now) when the
//     window it closed took more than options.steps_per_row_max steps per
//     row returned and no flush was requested in the last
//     options.interval_min; `now` is then recorded as the last request.
//  3. A scan returning no rows counts as one row (a scan that found nothing
//     behind many obsolete entries is the worst case, not a division by 0).
//
// Thread safety: Observe and flushes_requested may be called from any
// thread concurrently (a mutex guards the window).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

namespace tessera::storage {

struct ObsoleteVersionFlushOptions {
  uint64_t steps_min = 20'000;
  uint64_t steps_per_row_max = 4;
  std::chrono::steady_clock::duration interval_min = std::chrono::seconds(5);
};

// What one scan did in the memtable (RocksDB's per-thread perf context).
struct MemtableScanWork {
  uint64_t memtable_steps = 0;  // next_on_memtable_count + seek_on_memtable_count
  uint64_t rows = 0;            // rows the scan returned
};

class ObsoleteVersionFlush {
 public:
  explicit ObsoleteVersionFlush(ObsoleteVersionFlushOptions options = {});

  bool Observe(const MemtableScanWork& work, std::chrono::steady_clock::time_point now);
  uint64_t flushes_requested() const { return flushes_requested_.load(std::memory_order_relaxed); }

 private:
  const ObsoleteVersionFlushOptions options_;
  std::mutex mu_;  // guards the window and last_request_
  uint64_t window_steps_ = 0;
  uint64_t window_rows_ = 0;
  std::optional<std::chrono::steady_clock::time_point> last_request_;
  std::atomic<uint64_t> flushes_requested_{0};
};

}  // namespace tessera::storage
