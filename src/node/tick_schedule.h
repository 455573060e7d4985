// When a group's next consensus tick is due.
//
// Contract: NextAlignedTick(now, interval) is the first multiple of
// `interval` on the steady clock strictly after `now`, so it lies in
// (now, now + interval] and two ticks are never more than one interval
// apart (consensus::Options: "the host ticks at least this often").
// Precondition: interval > 0 (Options::Validate refuses 0).
//
// Why aligned: every group of a process, and every process on one
// machine, then ticks at the same instants, and one wake-up of the io
// thread serves all of them instead of one per group at its own phase
// (D60).
#pragma once

#include <chrono>

#include "common/check.h"

namespace tessera::node {

inline std::chrono::steady_clock::time_point NextAlignedTick(
    std::chrono::steady_clock::time_point now, std::chrono::microseconds interval) {
  TESSERA_CHECK(interval.count() > 0);
  const auto since_epoch =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch());
  return std::chrono::steady_clock::time_point((since_epoch / interval + 1) * interval);
}

}  // namespace tessera::node
