// The autoadmin's split driver (docs/partition-splits.md, "The steps of one
// split"): each round it decides every split's next step again from what
// it sees (meta's map, the intents "s/<parent>" and requested splits
// "sr/<group>" that meta.splits lists, the nodes' reports), so a restarted
// or newly elected autoadmin finishes or abandons a split it did not
// start. Nothing is remembered between rounds except the refusals shown by
// `tessera autoadmin status`.
//
// A round:
//   1. PlanSplits: every intent is carried on (its parent is marked
//      `splitting`, so no other action is planned for it); requested
//      splits, then size-planned ones (split_planner.h) start while fewer
//      than max_concurrent splits are in progress (`_s3` like any table:
//      its key falls between objects); a request for a partition that is
//      gone is refused.
//   2. SplitDriver::Carry, per split, as far as it gets this round:
//        start:  the key (given, or admin.split_key at the leader) ->
//                reserve (meta.split_partition, child 0; deletes the
//                request) -> continue as below with the intent;
//        intent: admin.split_group at the parent's leader (idempotent) ->
//                admin.create_group of the child on every replica node of
//                the parent (with split_parent_group_id: Unavailable until
//                that replica reached the split) -> commit.
//      A size-planned split whose exact state (admin.split_key's count)
//      is not above split_bytes stops there: the estimate counts what
//      compactions have not dropped yet (a parent just after its split).
//      Its estimate is remembered, and the group is not scanned again
//      until its estimate grows past it or 10 rounds passed (memtable
//      estimates move in coarse steps).
//      A split the parent refuses for good (admin.split_group answers
//      InvalidArgument or Conflict: the entry was refused, so it applied
//      nowhere) is abandoned; a key that cannot be chosen or reserved
//      (InvalidArgument) refuses a requested split (abandon deletes the
//      request). Any other error leaves the split for the next round.
//
// Thread safety: PlanSplits is pure; a SplitDriver is used by the round
// thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autoadmin/cluster_view.h"
#include "autoadmin/planner.h"
#include "common/result.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::autoadmin {

struct SplitWork {
  pb::PartitionDescriptor parent;  // meta's, as this round sees it
  uint32_t leader = 0;             // the parent's leader; 0 when unknown
  // The reserved split to carry on; nullopt: a split to start.
  std::optional<pb::SplitPartitionResponse> intent;
  std::string split_key;           // start: the requested key; empty: choose at the leader
  bool requested = false;          // start: an operator's request (refusal abandons it)
  // start, size-planned: the leader's estimate, and the bound the exact
  // figure admin.split_key counts must exceed (0: split whatever it is).
  uint64_t estimated_bytes = 0;
  uint64_t split_bytes = 0;
  std::string reason;              // why it splits, for logs and status
};

struct SplitRefusal {
  uint64_t group_id = 0;
  std::string table;
  std::string reason;
  bool abandon_request = false;  // a requested split to delete from meta
};

struct SplitPlan {
  std::vector<SplitWork> work;
  std::vector<SplitRefusal> refusals;
};

// Step 1 above. Marks the parent of every intent `splitting` in `view`.
SplitPlan PlanSplits(ClusterView& view, const pb::SplitsResponse& splits,
                     const PlannerOptions& options);

// The calls the driver makes: meta (any replica; followers forward) and one
// storage node, each answering the payload or the error.
struct SplitCalls {
  std::function<Result<std::string>(const std::string& method, const std::string& payload,
                                    std::chrono::milliseconds timeout)>
      meta;
  std::function<Result<std::string>(uint32_t node, const std::string& method,
                                    const std::string& payload, std::chrono::milliseconds timeout)>
      node;
  // Testing only (may be empty): called as a split reaches each fault
  // point, "reserve" (reserved), "order" (ordered at the parent),
  // "create_one" (the child created on the first replica node) and
  // "before_commit"; `tessera autoadmin --testing-exit-at-split-step`
  // kills the process there.
  std::function<void(std::string_view step)> reached;
};

struct SplitTimeouts {
  std::chrono::milliseconds call{2'000};
  // admin.split_key scans the whole state; admin.split_group answers once
  // the entry applied (a local copy of half the partition).
  std::chrono::milliseconds scan{30'000};
  std::chrono::milliseconds order{30'000};
};

// What Carry did: `committed` when meta's map now shows both halves;
// `abandoned` when the split (or request) was dropped, with `status` the
// reason; otherwise `status` is the error that stopped it this round (OK
// when it moved on and waits for the next round).
struct SplitOutcome {
  Status status = Status::Ok();
  bool committed = false;
  bool abandoned = false;
  std::string step;  // the last step tried ("choose_key", "reserve", ...)
};

class SplitDriver {
 public:
  SplitDriver(SplitCalls calls, SplitTimeouts timeouts) : calls_(std::move(calls)), timeouts_(timeouts) {}
  // Step 2 above for one split, every call fenced by `epoch`.
  SplitOutcome Carry(const SplitWork& work, uint64_t epoch);
  // Deletes a refused request from meta (meta.split_partition abandon).
  Status Abandon(const pb::PartitionDescriptor& parent, uint64_t epoch);

 private:
  Result<pb::SplitKeyResponse> ChooseKey(const SplitWork& work);
  Result<pb::SplitPartitionResponse> Reserve(const SplitWork& work, const std::string& key,
                                             uint64_t epoch);
  SplitOutcome Finish(const SplitWork& work, const pb::SplitPartitionResponse& intent,
                      uint64_t epoch);
  void Reached(std::string_view step) const {
    if (calls_.reached) calls_.reached(step);
  }

  SplitCalls calls_;
  SplitTimeouts timeouts_;
  // Size-planned groups whose exact state was at most split_bytes: the
  // estimate at that check (see above). Bounded by the groups planned.
  struct SmallGroup {
    uint64_t estimate = 0;
    uint32_t skips_left = 0;
  };
  std::map<uint64_t, SmallGroup> small_at_estimate_;
};

}  // namespace tessera::autoadmin
