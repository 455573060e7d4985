// Planner: the autoadmin's decisions, as a pure function of a ClusterView
// (docs/autoadmin.md). Each round the active autoadmin builds the view,
// asks Plan for actions and carries them out; the next round sees their
// effect. Nothing is remembered between rounds, so a standby that takes
// over mid-replacement plans the rest of it from what it sees.
//
// A dead voter is replaced by adding before evicting, one membership step
// per group per round, each step a single-replica change in the group's
// log:
//   1. kAddReplica     meta's descriptor gains the target as a learner (the
//                      intent, so a successor sees it)
//   2. kCreateReplica  the target node creates the group (bootstrap: the
//                      descriptor's voters, itself a learner)
//   3. kAddLearner     the leader adds the learner; it catches up (streamed
//                      snapshot, then log)
//   4. kPromote        once caught up (within promote_lag_slots of the
//                      leader's chosen index) the learner becomes a voter
//   5. kRemove         the dead voter leaves
//   kSyncDescriptor    after 4 and 5, meta's descriptor mirrors the group's
//                      membership (a new epoch each time)
//   kDropStale         a reachable node hosting a group it is no longer a
//                      member of drops the replica and its data
//   kTransferLeader    the leader hands over to a healthy caught-up voter:
//                      first of all when its node is gray or draining, and,
//                      last of all, to keep leaders per node within one of
//                      each other (balance_leaders)
// Log replicas (log_replicas): when the voter to replace no longer answers
// (dead, or its replica stopped), the group first gets a log replica on a
// healthy node outside the lost voter's AZ (steps 1-5 with a log-only
// learner, which catches up from the leader's log alone); once the lost
// voter is removed the group tolerates one more failure again. The log
// replica then must leave like any voter: a full replica is added in an AZ
// the group's other voters do not use, and the log replica is removed once
// it is a voter.
// A voter on a node gray for gray_replace_after_ms is replaced the same way
// (its leadership moved away first), and so is a voter that stays behind
// its group (GroupView::lagging_voters, lag_tracker.h). A voter on a draining node is replaced
// the same way (it is healthy, so
// the group never runs short of voters), and its replica is then dropped.
// So is a voter sharing its AZ with another voter once a healthy node of
// an AZ the group does not use exists (the group was repaired across AZs
// while its own AZ had no node): it moves back, the leader last. And,
// while nothing anywhere needs repair, a non-leader voter moves to another
// node of its AZ to balance replicas by count, bytes and load, one move in
// flight per node (balance_planner.h); the voter that then leaves is the
// one on the higher-scored node.
//
// Safety rules (each checked before an action is planned):
//   * nothing happens to a group without a reachable leader, or while its
//     leader reports a membership change not yet chosen;
//   * at most one action per group per round;
//   * a replacement starts only when a majority of the group's voters is
//     healthy, and at most max_concurrent groups are mid-replacement;
//   * a voter is removed only when the remaining voters still have an
//     answering majority, and so do the current voters (who must choose
//     the removal);
//   * leadership moves only to a voter on a healthy node that is caught up
//     (within promote_lag_slots), at most max_concurrent transfers a round;
//   * a replica is dropped only when neither the group's membership nor
//     meta's descriptor names it.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "autoadmin/balance_planner.h"
#include "autoadmin/cluster_view.h"
#include "knobs/knobs.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::autoadmin {

struct PlannerOptions {
  size_t replication_factor = 3;  // voters every group should have
  size_t max_concurrent = knobs::kAutoadminMaxConcurrent.default_value;  // groups mid-replacement cluster-wide
  uint64_t promote_lag_slots = 64;
  // A gray node's replicas are replaced once it has been gray this long.
  uint64_t gray_replace_after_ms = knobs::kAutoadminGrayReplaceAfterMs.default_value;
  // Keep leaders spread over the nodes, by count and load
  // (balance_planner.h).
  bool balance_leaders = knobs::kAutoadminBalanceLeaders.default_value;
  // How replicas spread within an AZ and leaders over the cluster
  // (balance_planner.h).
  BalanceOptions balance;
  // A voter that no longer answers is first stood in for by a log replica
  // (add a log-only learner, promote it, remove the lost voter), then the
  // log replica is replaced by a full one like any voter that must leave.
  bool log_replicas = knobs::kAutoadminLogReplicas.default_value;
  // A partition whose leader reports more state bytes than this splits
  // (split_planner.h).
  uint64_t split_bytes = knobs::kAutoadminSplitBytes.default_value;
  // A partition whose leader serves more KV requests per second than this
  // for split_after_ms splits at the key that halves its load
  // (load_split_planner.h); 0: never.
  uint64_t split_load = knobs::kAutoadminSplitLoad.default_value;
  uint64_t split_after_ms = uint64_t{knobs::kAutoadminSplitAfterS.default_value} * 1000;
  // Splits for consumption (load_split_planner.h), for split_after_ms too:
  // a partition whose rate adaptive capacity boosted more than this many
  // percent above its static share; 0: never.
  uint32_t split_boost_percent = knobs::kAutoadminSplitBoostPercent.default_value;
  // A partition consuming more than this percentage of the per-partition
  // cap (read or write); 0: never.
  uint32_t split_consumption_percent = knobs::kAutoadminSplitConsumptionPercent.default_value;
  // Merges (merge_planner.h): adjacent partitions of one table storing
  // together fewer bytes than merge_bytes (0: never; at most split_bytes / 2
  // counts) and loaded together below merge_load_percent of every split
  // trigger, for merge_after_ms.
  uint64_t merge_bytes = knobs::kAutoadminMergeBytes.default_value;
  uint64_t merge_after_ms = uint64_t{knobs::kAutoadminMergeAfterS.default_value} * 1000;
  uint32_t merge_load_percent = knobs::kAutoadminMergeLoadPercent.default_value;
};

enum class ActionKind {
  kAddReplica,
  kCreateReplica,
  kAddLearner,
  kPromote,
  kRemove,
  kSyncDescriptor,
  kDropStale,
  kMoveBlobSlots,  // blob slots off lost nodes, or spread (blob_slot_planner.h), in meta
  kTransferLeader,
};
const char* ActionKindName(ActionKind kind);

struct Action {
  ActionKind kind = ActionKind::kAddReplica;
  uint64_t group_id = 0;
  // The process to call: the leader (kAddLearner, kPromote, kRemove,
  // kTransferLeader: `replica` is the new leader), the
  // target (kCreateReplica), the stale node (kDropStale); 0 for meta.
  uint32_t node = 0;
  uint32_t replica = 0;  // the replica the step is about
  // kAddReplica, kAddLearner: the new replica is a log replica.
  bool log_only = false;
  // kAddReplica, kSyncDescriptor: the descriptor to store (epoch + 1);
  // kCreateReplica: the descriptor the target creates the group from.
  pb::PartitionDescriptor descriptor;
  // kMoveBlobSlots: the slots' new replicas, and the assignments' version
  // they were planned from.
  std::vector<pb::BlobSlotReplicas> blob_slots;
  uint64_t blob_slots_version = 0;
  std::string reason;  // for logs and `tessera autoadmin status`
};

// Actions for this round, at most one per group, groups in ascending id;
// none for a group that is `splitting`.
std::vector<Action> Plan(const ClusterView& view, const PlannerOptions& options);

}  // namespace tessera::autoadmin
