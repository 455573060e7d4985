// The availability summary of a run: for each fault window and for the time
// outside every fault, the share of operations that succeeded, the longest
// gap without a successful write, and latency p50/p99 of the successful
// operations.
//
// Contract:
//  1. An operation belongs to a window when it was invoked inside it
//     ([start_us, end_us)); "outside faults" holds the operations invoked
//     in no fault window, between 0 and `end_us` of the run.
//  2. ok_share counts kOk operations (a cas that found another value is ok:
//     the cluster answered) over all; 1 for a window without operations.
//  3. The longest write gap runs between successive completions of writes
//     that took effect, including from the window's start to the first and
//     from the last to the window's end; for "outside faults" a gap counts
//     only its time outside every fault window.
//  4. A fault window's "after its first second" figures count the
//     operations invoked in [start + 1 s, end): what clients see once a
//     failover had its second.
//  5. Steady state is the operations invoked before the first fault began;
//     "outside faults" carries their p99 and its own p99 over it, both 0
//     when fewer than kSteadyOpsMin of them succeeded.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/history.h"
#include "tessera/experiment.pb.h"

namespace tessera::experiment {

// The grace a fault window's "after its first second" figures leave out.
inline constexpr uint64_t kFailoverGraceUs = 1'000'000;
// Successful operations before the first fault needed for a steady p99.
inline constexpr uint64_t kSteadyOpsMin = 100;

struct FaultWindow {
  std::string label;  // "partition-az az3 [10 s, 30 s)"
  uint64_t start_us = 0;
  uint64_t end_us = 0;
};

// One summary per fault window (in the given order), then "outside faults".
std::vector<pb::AvailabilityWindow> SummarizeAvailability(const std::vector<OpRecord>& ops,
                                                          const std::vector<FaultWindow>& faults,
                                                          uint64_t end_us);

// The availability checker: passes when the ok share outside faults is at
// least `min_ok_share_outside_faults`, every fault window's share after its
// first second at least `min_ok_share_after_first_s`, and the p99 outside
// faults at most `max_p99_over_steady` times the steady p99 (each bound 0:
// not checked; an unknown steady p99 is not checked either); the summary is
// one line per window, then one per bound missed.
pb::CheckerResult CheckAvailability(const std::vector<pb::AvailabilityWindow>& windows,
                                    const pb::AvailabilityChecker& bounds);

// "partition-az az3 [10 s, 30 s): 812 ops, 61.2% ok (99.1% after its
// first second), longest write gap 20.1 s, p50 3.1 ms, p99 2000.4 ms";
// "outside faults" adds "(1.3x the steady p99 of 4.0 ms)" when known.
std::string DescribeWindow(const pb::AvailabilityWindow& w);

}  // namespace tessera::experiment
