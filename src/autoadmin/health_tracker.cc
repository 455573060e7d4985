#include "autoadmin/health_tracker.h"

namespace tessera::autoadmin {

HealthTracker::HealthTracker(const std::vector<Node>& nodes, uint64_t dead_after_ms,
                             const GrayOptions& gray, uint64_t now_ms)
    : dead_after_ms_(dead_after_ms), gray_(gray) {
  for (const Node& n : nodes) AddNode(n, now_ms);
}

bool HealthTracker::AddNode(const Node& node, uint64_t now_ms) {
  if (nodes_.count(node.id)) return false;
  disks_.emplace(node.id, GrayDetector(gray_));
  NodeView& v = nodes_[node.id];
  v.id = node.id;
  v.az = node.az;
  v.health = NodeHealth::kUnreachable;  // until it answers
  last_answer_ms_[node.id] = now_ms;
  return true;
}

ReplicaReport ReportOf(const pb::GroupStatusProto& status) {
  ReplicaReport r;
  r.role = status.role();
  r.applied = status.applied();
  r.chosen = status.chosen();
  r.ballot_round = status.ballot().round();
  r.ballot_replica = status.ballot().replica();
  *r.membership.mutable_voters() = status.voters();
  *r.membership.mutable_learners() = status.learners();
  *r.membership.mutable_log_only() = status.log_only();
  r.membership_pending = status.membership_pending();
  r.state_bytes = status.state_bytes();
  r.state_keys = status.state_keys();
  r.load.requests_per_s = status.load_rps();
  r.load.reason = status.load_split_reason();
  r.load.split_key = status.load_split_key();
  r.load.share_permille = status.load_split_share_permille();
  r.load.read_units_per_s = status.load_read_units_per_s();
  r.load.write_units_per_s = status.load_write_units_per_s();
  r.load.boost_permille = status.load_boost_permille();
  r.load.rcu_max = status.partition_rcu_max();
  r.load.wcu_max = status.partition_wcu_max();
  r.stopped = status.stopped();
  return r;
}

void HealthTracker::OnPoll(uint32_t node, const pb::NodeStatus* status, uint64_t now_ms) {
  const auto it = nodes_.find(node);
  if (it == nodes_.end()) return;
  NodeView& v = it->second;
  if (status != nullptr) {
    last_answer_ms_[node] = now_ms;
    peer_links_[node].assign(status->peer_links().begin(), status->peer_links().end());
    GrayDetector& disk = disks_.at(node);
    disk.OnReport(status->disk(), PeerTimeoutReason(node, peer_links_, gray_.peer_timeouts), now_ms);
    v.health = disk.gray() ? NodeHealth::kGray : NodeHealth::kHealthy;
    v.gray_for_ms = disk.GrayForMs(now_ms);
    v.degraded_reason = disk.reason();
    v.unreachable_for_ms = 0;
    v.groups.clear();
    for (const pb::GroupStatusProto& g : status->groups()) v.groups[g.group_id()] = ReportOf(g);
    return;
  }
  peer_links_.erase(node);  // an unreachable node's view of its peers is stale
  const uint64_t last = last_answer_ms_[node];
  v.unreachable_for_ms = now_ms > last ? now_ms - last : 0;
  v.gray_for_ms = 0;
  v.health = v.unreachable_for_ms >= dead_after_ms_ ? NodeHealth::kDead : NodeHealth::kUnreachable;
}

}  // namespace tessera::autoadmin
