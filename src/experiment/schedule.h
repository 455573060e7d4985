// The nemesis schedule of one run: every fault with its start and end, made
// from the experiment, its layout, the seed and the duration alone, so the
// same file and seed always give the same schedule (and a failing run can
// be replayed).
//
// Contract:
//  1. Deterministic: BuildSchedule depends only on its arguments; random
//     choices come from sim::Prng streams derived from `seed`.
//  2. Every fault lies inside [0, duration): start_ms < end_ms <= duration.
//  3. The result is sorted by start time (ties: the file's order) and holds
//     at most kFaultsMax faults.
//  4. random_node and random_az targets are resolved here (to a storage
//     node's name, an AZ); kv_leader is resolved when the fault starts,
//     since only the running cluster knows its leaders.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "tessera/cluster.pb.h"
#include "tessera/experiment.pb.h"

namespace tessera::experiment {

struct ScheduledFault {
  pb::FaultKind kind = pb::FAULT_UNSPECIFIED;
  pb::FaultTarget target;  // process, az or kv_leader (contract 4)
  uint64_t start_ms = 0;   // after the workloads start
  uint64_t end_ms = 0;
  uint32_t slow_ms = 0;    // FAULT_SLOW_DISK
  std::string peer_az;     // FAULT_PARTITION_ONE_WAY; empty: every other AZ
  int64_t offset_ms = 0;   // FAULT_CLOCK_JUMP
  int32_t skew_ppm = 0;    // FAULT_CLOCK_SKEW

  bool operator==(const ScheduledFault& o) const;
};

// Builds the schedule of `spec` (validated: experiment_file.h) for `seed`
// and `duration_s`. Fixed steps past a shortened --duration are cut at its
// end (dropped when they would start at or after it). InvalidArgument when
// a random target has nothing to choose from.
Result<std::vector<ScheduledFault>> BuildSchedule(const pb::Experiment& spec,
                                                  const pb::ClusterLayout& layout, uint64_t seed,
                                                  uint32_t duration_s);

// One cut of an AZ-level network fault: the processes of `from` drop every
// message to those of `to`, and the reverse too unless `one_way`.
struct AzCut {
  std::string from;
  std::string to;
  bool one_way = false;
  bool operator==(const AzCut& o) const = default;
};

// The cuts of an AZ-level fault whose target resolved to `az`, among the
// layout's `azs` (in layout order):
//   FAULT_PARTITION_AZ       az <-> every other AZ
//   FAULT_PARTITION_ONE_WAY  az -> peer_az (empty: every other AZ), one way
//   FAULT_MAJORITY_RING      az is the bridge and keeps every link; the
//                            other AZs in layout order split into a first
//                            half (the larger when odd) and a second, and
//                            every pair across the halves is cut both ways
// Empty for every other kind (and for a ring of fewer than three AZs).
std::vector<AzCut> AzCuts(pb::FaultKind kind, const std::vector<std::string>& azs,
                          const std::string& az, const std::string& peer_az);

// Whether the fault is made of admin.faults rules (AZ cuts, disk faults,
// clock faults), which replace each other and are applied again after a
// process returns.
bool IsRuleFault(pb::FaultKind kind);
// Whether the fault offsets or skews the target's clocks.
bool IsClockFault(pb::FaultKind kind);
// Whether the fault targets an AZ as a whole (AzCuts applies).
bool IsAzFault(pb::FaultKind kind);

// "FAULT_PARTITION_AZ" -> "partition-az", and so on.
std::string FaultKindName(pb::FaultKind kind);
// "az2", "az1-n1", "kv-leader".
std::string TargetName(const pb::FaultTarget& target);
// One line: "partition-az az2 [10 s, 30 s)".
std::string Describe(const ScheduledFault& fault);

}  // namespace tessera::experiment
