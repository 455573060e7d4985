// OpLog: where the clients of every workload record their operations, and
// the run's clock. Bounded: at most kHistoryOpsMax operations; a client
// asks for an index before invoking and stops when none is left.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "experiment/history.h"

namespace tessera::experiment {

// Microseconds since the workloads started (steady clock).
class RunClock {
 public:
  RunClock() : start_(std::chrono::steady_clock::now()) {}
  uint64_t NowUs() const {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::steady_clock::now() - start_)
                                     .count());
  }
  std::chrono::steady_clock::time_point start() const { return start_; }

 private:
  std::chrono::steady_clock::time_point start_;
};

class OpLog {
 public:
  explicit OpLog(uint64_t ops_max) : ops_max_(ops_max) {}

  // The next operation's index; nullopt once ops_max indexes were handed out.
  std::optional<uint64_t> Reserve();
  // Records a completed operation (any outcome).
  void Add(OpRecord op);

  uint64_t ok() const { return ok_.load(); }
  uint64_t failed() const { return failed_.load(); }
  uint64_t unknown() const { return unknown_.load(); }
  uint64_t completed() const { return ok() + failed() + unknown(); }
  // Everything recorded so far, in recording order.
  std::vector<OpRecord> Snapshot() const;

 private:
  const uint64_t ops_max_;
  std::atomic<uint64_t> next_index_{0};
  std::atomic<uint64_t> ok_{0}, failed_{0}, unknown_{0};
  mutable std::mutex mu_;  // guards ops_
  std::vector<OpRecord> ops_;
};

}  // namespace tessera::experiment
