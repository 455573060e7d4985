// Merges: which pairs of adjacent partitions the autoadmin merges back into
// one (docs/partition-merges.md), so a table's partition count follows its
// data after its load or its keys went away.
//
// A pair of partitions L = [a, b) and R = [b, c) is merged when all of
// these hold:
//   * L and R are adjacent partitions of one table in meta's map (L's end is
//     R's start), and the table is not `_s3` (its partition-internal usage
//     and GC records have no merge rule yet: docs/partition-merges.md,
//     "`_s3`");
//   * b is not one of the table's created split points
//     (ClusterView::created_split_points): a boundary the operator asked for at
//     creation (`--partitions N`, or given points) is kept, so a presplit
//     table never has fewer partitions than it was created with, and
//     exactly those boundaries stay;
//   * each side has a reachable leader that reports the group, no
//     membership change pending, no learner, every voter's node healthy
//     and no replica stopped (the merge orders entries in both logs and
//     copies the donor's state through the survivor's);
//   * neither side is `splitting` (a split or merge in progress takes it)
//     nor in `busy` (a merge intent in meta names it);
//   * their state bytes (the leaders' estimates) sum to less than
//     merge_bytes, capped at split_bytes / 2 so the merged partition is
//     far from splitting again; merge_bytes 0 turns merges off;
//   * the pair is cold: summed over both sides, every split trigger of
//     load_split_planner.h stays below merge_load_percent of its threshold
//     (consumption of the per-partition cap, read and write; boost above
//     the static share; requests per second when split_load is set), so
//     the merged partition does not split again for load either;
//   * the pair has been small and cold in every round for merge_after_ms
//     (remembered per pair, like the load split planner's watch: an
//     observation, not a decision; a restarted autoadmin waits again,
//     which only delays a merge).
// Each group takes part in at most one merge at a time; among ripe pairs
// the smallest combined state goes first (ties: lower left group id), and
// at most `room` merges start this round (the caller counts splits and
// merges in progress against max_concurrent).
//
// The survivor (the group that keeps serving, widened to [a, c)) is the
// side whose leader reports the higher chosen slot (ties: the left), and
// the donor the other: every record the donor copies keeps its version (a
// slot of the donor's log), and a write in the survivor after the merge
// must get a higher version. The survivor chosen so is the one most likely
// to pass the freeze bound (docs/partition-merges.md, "Versions"); the
// bound itself is what guarantees it.
//
// Thread safety: a MergePlanner is used by the round thread only.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "autoadmin/cluster_view.h"
#include "autoadmin/planner.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::autoadmin {

struct MergeDecision {
  std::string table;
  pb::PartitionDescriptor left;   // [a, b), meta's
  pb::PartitionDescriptor right;  // [b, c), meta's
  uint64_t survivor_group_id = 0;
  uint64_t donor_group_id = 0;
  uint32_t survivor_leader = 0;
  uint32_t donor_leader = 0;
  uint64_t state_bytes = 0;  // both sides' estimates summed
  std::string reason;        // for logs and `tessera autoadmin status`
};

struct MergePlan {
  std::vector<MergeDecision> decisions;
  // Pairs small and cold this round that have not yet been so for
  // merge_after_ms (for `tessera autoadmin status`).
  size_t waiting = 0;
};

// The merge threshold in force: merge_bytes, capped at split_bytes / 2; 0
// when merges are off.
uint64_t EffectiveMergeBytes(const PlannerOptions& options);

// Merges that may start this round: max_concurrent less the splits in
// progress (groups `splitting` in the view) and `merges_in_progress` (the
// merge intents; call it before marking their groups `splitting`, or they
// count twice).
size_t MergeRoom(const ClusterView& view, const PlannerOptions& options, size_t merges_in_progress);

class MergePlanner {
 public:
  // `busy`: groups a merge intent names; `room`: merges that may start this
  // round; `now_ms`: the round's time (monotonic). The created boundaries
  // are the view's created_split_points.
  MergePlan Plan(const ClusterView& view, const PlannerOptions& options, const std::set<uint64_t>& busy,
                 size_t room, uint64_t now_ms);

 private:
  // (left group id, right group id) -> since when the pair has been small
  // and cold; pairs no longer so are forgotten each round, so it is
  // bounded by the map's partitions.
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> cold_since_ms_;
};

}  // namespace tessera::autoadmin
