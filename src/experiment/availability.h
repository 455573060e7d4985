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
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/history.h"
#include "tessera/experiment.pb.h"

namespace tessera::experiment {

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
// least `min_ok_share_outside_faults`; the summary is one line per window.
pb::CheckerResult CheckAvailability(const std::vector<pb::AvailabilityWindow>& windows,
                                    double min_ok_share_outside_faults);

// "partition-az az3 [10 s, 30 s): 812 ops, 61.2% ok, write gap 20.1 s,
// p50 3.1 ms, p99 2000.4 ms".
std::string DescribeWindow(const pb::AvailabilityWindow& w);

}  // namespace tessera::experiment
