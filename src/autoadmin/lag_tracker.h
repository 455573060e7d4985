// LagTracker: which voters stay behind their group (docs/autoadmin.md,
// "Health"). Once a round, with the round's view: it remembers each group's
// chosen index as its leader reported it, and marks a voter as lagging when
// its applied index is still below what the group had chosen lag_for_ms ago.
// A healthy follower applies everything chosen a while ago, whatever the
// write rate and however the polls of one round are skewed, so only a
// replica that keeps falling behind (slow disk or links, a stalled apply)
// is marked.
//
// Bounded: per group, one sample per round for lag_for_ms and at most
// kSamplesPerGroupMax; groups that leave the view are forgotten.
//
// Thread safety: none; one thread runs the rounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <utility>

#include "autoadmin/cluster_view.h"

namespace tessera::autoadmin {

class LagTracker {
 public:
  static constexpr size_t kSamplesPerGroupMax = 1024;

  explicit LagTracker(uint64_t lag_for_ms) : lag_for_ms_(lag_for_ms) {}

  // Records the round's leader reports and fills each group's
  // `lagging_voters` in `view` (FindLeaders must have run).
  void OnRound(ClusterView& view, uint64_t now_ms);

 private:
  const uint64_t lag_for_ms_;
  // Per group: (time, the leader's chosen index), oldest first.
  std::map<uint64_t, std::deque<std::pair<uint64_t, uint64_t>>> chosen_;
};

}  // namespace tessera::autoadmin
