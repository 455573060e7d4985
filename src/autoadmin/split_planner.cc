#include "autoadmin/split_planner.h"

#include <algorithm>

namespace tessera::autoadmin {
namespace {

bool VotersAnswer(const GroupView& group, const ClusterView& view) {
  for (const pb::ReplicaPlacement& r : group.descriptor.replicas()) {
    if (r.role() == pb::REPLICA_LEARNER) return false;  // membership is changing
    const auto node = view.nodes.find(r.node_id());
    if (node == view.nodes.end() || node->second.health != NodeHealth::kHealthy) return false;
  }
  return group.descriptor.replicas_size() > 0;
}

bool MembershipPending(const GroupView& group, const ClusterView& view) {
  const auto node = view.nodes.find(group.leader);
  if (node == view.nodes.end()) return true;
  const auto report = node->second.groups.find(group.descriptor.group_id());
  return report == node->second.groups.end() || report->second.membership_pending;
}

}  // namespace

std::vector<SplitDecision> PlanSizeSplits(const ClusterView& view, const PlannerOptions& options) {
  size_t in_progress = 0;
  std::vector<SplitDecision> candidates;
  for (const auto& [id, group] : view.groups) {
    if (group.splitting) {
      ++in_progress;
      continue;
    }
    if (group.state_bytes <= options.split_bytes || group.leader == 0) continue;
    if (MembershipPending(group, view) || !VotersAnswer(group, view)) continue;
    candidates.push_back(SplitDecision{id, group.leader, group.state_bytes});
  }
  std::sort(candidates.begin(), candidates.end(), [](const SplitDecision& a, const SplitDecision& b) {
    return a.state_bytes != b.state_bytes ? a.state_bytes > b.state_bytes : a.group_id < b.group_id;
  });
  const size_t room = options.max_concurrent > in_progress ? options.max_concurrent - in_progress : 0;
  if (candidates.size() > room) candidates.resize(room);
  return candidates;
}

}  // namespace tessera::autoadmin
