#include "autoadmin/lag_tracker.h"

#include <set>

namespace tessera::autoadmin {

void LagTracker::OnRound(ClusterView& view, uint64_t now_ms) {
  std::set<uint64_t> seen;
  for (auto& [group_id, group] : view.groups) {
    group.lagging_voters.clear();
    seen.insert(group_id);
    if (group.leader == 0) continue;
    const auto leader_node = view.nodes.find(group.leader);
    if (leader_node == view.nodes.end()) continue;
    const auto leader = leader_node->second.groups.find(group_id);
    if (leader == leader_node->second.groups.end()) continue;
    auto& samples = chosen_[group_id];
    samples.emplace_back(now_ms, leader->second.chosen);
    // Keep the newest sample at least lag_for old, and everything after it.
    while (samples.size() > kSamplesPerGroupMax ||
           (samples.size() >= 2 && now_ms >= samples[1].first + lag_for_ms_)) {
      samples.pop_front();
    }
    if (now_ms < samples.front().first + lag_for_ms_) continue;  // not watched long enough
    const uint64_t chosen_then = samples.front().second;
    for (uint32_t voter : leader->second.membership.voters()) {
      if (voter == group.leader) continue;
      const auto node = view.nodes.find(voter);
      if (node == view.nodes.end() || !Answered(node->second.health)) continue;
      const auto report = node->second.groups.find(group_id);
      if (report != node->second.groups.end() && report->second.applied < chosen_then) {
        group.lagging_voters.insert(voter);
      }
    }
  }
  for (auto it = chosen_.begin(); it != chosen_.end();) {
    it = seen.count(it->first) ? std::next(it) : chosen_.erase(it);
  }
}

}  // namespace tessera::autoadmin
