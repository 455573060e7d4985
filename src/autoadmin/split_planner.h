// Size-based splits: which partitions the autoadmin splits this round
// (docs/partition-splits.md). A pure function of the ClusterView, like
// Plan (planner.h): nothing is remembered between rounds.
//
// A group is split when all of these hold:
//   * its leader reports more than PlannerOptions::split_bytes of state;
//   * it has a reachable leader and no membership change pending (the
//     split is ordered in its log, and the children start on its replica
//     set, which must not be changing under them);
//   * every voter's node answers (each replica applies the split in its
//     own store; one that cannot would have to catch up the child by
//     snapshot, which is correct but is the slow path);
//   * no split of it is in progress.
// At most max_concurrent splits are in progress cluster-wide (those in
// progress count), the largest partitions first, ties by group id.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "autoadmin/cluster_view.h"
#include "autoadmin/planner.h"

namespace tessera::autoadmin {

struct SplitDecision {
  uint64_t group_id = 0;
  uint32_t leader = 0;       // the node that chooses the split key and orders the split
  uint64_t state_bytes = 0;  // as the leader reported it
};

// The splits to start this round (see the header comment).
std::vector<SplitDecision> PlanSizeSplits(const ClusterView& view, const PlannerOptions& options);

}  // namespace tessera::autoadmin
