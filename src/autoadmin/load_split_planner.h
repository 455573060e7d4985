// Load-based splits: which partitions the autoadmin splits because of
// their load (docs/partition-splits.md, "Splits by load" and "Splits for
// consumption").
//
// Each leader reports the KV requests per second its partition served in
// the last window, what admission saw of it (units consumed per second, its
// rate's boost above its static share, the per-partition caps) and its
// load split finder's answer (node/load_split_finder.h). A group is hot
// while one of these triggers holds (LoadSplitTrigger), checked in this
// order:
//   * consumption: it consumes more than split_consumption_percent of the
//     per-partition cap, read or write (on-demand or provisioned: the cap
//     is all one partition can ever get, so growth needs more partitions);
//   * boost: adaptive capacity raised its rate more than
//     split_boost_percent above its static share (provisioned: its
//     children each get a share again, which removes the need for the
//     boost);
//   * load: it served more than split_load requests per second (tables
//     without capacity too).
// A group is split when all of these hold:
//   * it has been hot in every round for split_after_ms (this planner
//     remembers, per group, since when: an observation, not a decision; a
//     restarted autoadmin waits split_after again, which only delays a
//     split; the trigger may change meanwhile);
//   * the leader names a split key (LOAD_SPLIT_KEY_FOUND);
//   * the conditions of a size split (split_planner.h): a reachable leader,
//     no membership change pending, no learner, every voter's node
//     healthy, no split of it in progress;
//   * fewer than max_concurrent splits are in progress (`room`).
// A group hot for split_after whose leader names no key because one key
// carries the load, the keys increase (only the newest range is hot) or no
// key balances it is refused with that reason and its trigger (shown by
// `tessera autoadmin status`, counted in a metric); it keeps being watched
// and splits once a key is found.
//
// `_s3` partitions alike: their leaders sample S3 requests by the object's
// prefix `B K` (node/partition_range.h, S3LoadKey), so the key named is
// always between two objects, and one hot object is one hot key.
//
// The split itself is carried out by SplitDriver (split_driver.h) at the
// reported key: reserve, order, create the child, commit.
//
// Thread safety: a LoadSplitPlanner is used by the round thread only.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "autoadmin/cluster_view.h"
#include "autoadmin/planner.h"
#include "autoadmin/split_driver.h"

namespace tessera::autoadmin {

// "key_found", "one_hot_key", "sequential", "unbalanced",
// "too_few_samples", "unknown".
const char* LoadSplitReasonName(pb::LoadSplitReason reason);

// Why a group is hot (the header's order).
enum class LoadSplitTrigger : uint8_t { kConsumption, kBoost, kLoad };
// "consumption", "boost", "load".
const char* LoadSplitTriggerName(LoadSplitTrigger trigger);

struct LoadSplitRefusal {
  uint64_t group_id = 0;
  std::string table;
  pb::LoadSplitReason reason = pb::LOAD_SPLIT_UNKNOWN;
  LoadSplitTrigger trigger = LoadSplitTrigger::kLoad;
  std::string text;  // for `tessera autoadmin status`
};

struct LoadSplitPlan {
  std::vector<SplitWork> work;  // split_key set: carried out as given
  std::vector<LoadSplitTrigger> triggers;  // work[i]'s trigger
  std::vector<LoadSplitRefusal> refusals;
  // Groups whose refusal reason is new this round (for the metric: one
  // count per group and reason, not one per round).
  std::vector<LoadSplitRefusal> new_refusals;
};

class LoadSplitPlanner {
 public:
  // `busy`: groups a split already takes this round (intents, requests,
  // size-planned); `room`: splits that may still start.
  LoadSplitPlan Plan(const ClusterView& view, const PlannerOptions& options,
                     const std::set<uint64_t>& busy, size_t room, uint64_t now_ms);

 private:
  struct Watch {
    uint64_t above_since_ms = 0;
    pb::LoadSplitReason last_refusal = pb::LOAD_SPLIT_UNKNOWN;
    LoadSplitTrigger last_trigger = LoadSplitTrigger::kLoad;
  };
  std::map<uint64_t, Watch> watched_;  // hot groups; bounded by the map's groups
};

}  // namespace tessera::autoadmin
