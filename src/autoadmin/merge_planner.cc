#include "autoadmin/merge_planner.h"

#include <algorithm>

namespace tessera::autoadmin {
namespace {

// The table whose partitions hold the S3 metadata (docs/formats/s3-keys.md).
constexpr const char* kS3Table = "_s3";

// The leader's report of `group`, or null when its leader is unknown or
// did not report the group.
const ReplicaReport* LeaderReport(const GroupView& group, const ClusterView& view) {
  if (group.leader == 0) return nullptr;
  const auto node = view.nodes.find(group.leader);
  if (node == view.nodes.end()) return nullptr;
  const auto report = node->second.groups.find(group.descriptor.group_id());
  return report == node->second.groups.end() ? nullptr : &report->second;
}

// Both logs take entries and every replica applies them in its own store:
// a leader, no membership change, no learner, every voter answering.
bool ReadyToMerge(const GroupView& group, const ClusterView& view) {
  const ReplicaReport* report = LeaderReport(group, view);
  if (report == nullptr || report->membership_pending || !group.stopped_voters.empty()) return false;
  for (const pb::ReplicaPlacement& r : group.descriptor.replicas()) {
    if (r.role() == pb::REPLICA_LEARNER) return false;
    const auto node = view.nodes.find(r.node_id());
    if (node == view.nodes.end() || node->second.health != NodeHealth::kHealthy) return false;
  }
  return group.descriptor.replicas_size() > 0;
}

// The pair's summed load stays below merge_load_percent of every split
// trigger that is on (load_split_planner.h), so the merged partition is
// not hot.
bool Cold(const LoadReport& l, const LoadReport& r, const PlannerOptions& options) {
  const double share = options.merge_load_percent / 100.0;
  if (options.split_consumption_percent > 0) {
    const double limit = options.split_consumption_percent / 100.0 * share;
    const double rcu_max = std::max(l.rcu_max, r.rcu_max);
    const double wcu_max = std::max(l.wcu_max, r.wcu_max);
    if (rcu_max > 0 && l.read_units_per_s + r.read_units_per_s >= rcu_max * limit) return false;
    if (wcu_max > 0 && l.write_units_per_s + r.write_units_per_s >= wcu_max * limit) return false;
  }
  if (options.split_boost_percent > 0) {
    const double limit_permille = options.split_boost_percent * 10.0 * share;
    if (std::max(l.boost_permille, r.boost_permille) >= limit_permille) return false;
  }
  if (options.split_load > 0) {
    const double limit = static_cast<double>(options.split_load) * share;
    if (static_cast<double>(l.requests_per_s + r.requests_per_s) >= limit) return false;
  }
  return true;
}

// Every table's partitions in key order.
std::map<std::string, std::vector<const GroupView*>> PartitionsByTable(const ClusterView& view) {
  std::map<std::string, std::vector<const GroupView*>> tables;
  for (const auto& [id, group] : view.groups) tables[group.descriptor.table()].push_back(&group);
  for (auto& [table, groups] : tables) {
    std::sort(groups.begin(), groups.end(), [](const GroupView* a, const GroupView* b) {
      return a->descriptor.start_key() < b->descriptor.start_key();
    });
  }
  return tables;
}

bool Available(const GroupView& group, const std::set<uint64_t>& busy) {
  return !group.splitting && busy.count(group.descriptor.group_id()) == 0;
}

MergeDecision Decide(const GroupView& left, const GroupView& right, const ClusterView& view) {
  MergeDecision d;
  d.table = left.descriptor.table();
  d.left = left.descriptor;
  d.right = right.descriptor;
  d.state_bytes = left.state_bytes + right.state_bytes;
  // The side further ahead in its log survives (ties: the left).
  const bool right_survives = LeaderReport(right, view)->chosen > LeaderReport(left, view)->chosen;
  const GroupView& survivor = right_survives ? right : left;
  const GroupView& donor = right_survives ? left : right;
  d.survivor_group_id = survivor.descriptor.group_id();
  d.donor_group_id = donor.descriptor.group_id();
  d.survivor_leader = survivor.leader;
  d.donor_leader = donor.leader;
  return d;
}

}  // namespace

uint64_t EffectiveMergeBytes(const PlannerOptions& options) {
  return std::min(options.merge_bytes, options.split_bytes / 2);
}

size_t MergeRoom(const ClusterView& view, const PlannerOptions& options, size_t merges_in_progress) {
  size_t in_progress = merges_in_progress;
  for (const auto& [id, group] : view.groups) in_progress += group.splitting ? 1 : 0;
  return options.max_concurrent > in_progress ? options.max_concurrent - in_progress : 0;
}

MergePlan MergePlanner::Plan(const ClusterView& view, const PlannerOptions& options,
                             const std::set<uint64_t>& busy, size_t room, uint64_t now_ms) {
  const std::map<std::string, std::set<std::string>>& created_boundaries = view.created_split_points;
  MergePlan plan;
  const uint64_t merge_bytes = EffectiveMergeBytes(options);
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> still_cold;
  std::vector<MergeDecision> ripe;
  for (const auto& [table, groups] : PartitionsByTable(view)) {
    if (merge_bytes == 0 || table == kS3Table) continue;
    const auto created = created_boundaries.find(table);
    for (size_t i = 0; i + 1 < groups.size(); ++i) {
      const GroupView& left = *groups[i];
      const GroupView& right = *groups[i + 1];
      const std::string& boundary = left.descriptor.end_key();
      if (boundary.empty() || boundary != right.descriptor.start_key()) continue;  // not adjacent
      if (created != created_boundaries.end() && created->second.count(boundary)) continue;
      if (!Available(left, busy) || !Available(right, busy)) continue;
      if (!ReadyToMerge(left, view) || !ReadyToMerge(right, view)) continue;
      if (left.state_bytes + right.state_bytes >= merge_bytes) continue;
      if (!Cold(left.load, right.load, options)) continue;
      const std::pair<uint64_t, uint64_t> pair{left.descriptor.group_id(), right.descriptor.group_id()};
      const auto seen = cold_since_ms_.find(pair);
      const uint64_t since = seen == cold_since_ms_.end() ? now_ms : seen->second;
      still_cold[pair] = since;
      if (now_ms - since < options.merge_after_ms) {
        ++plan.waiting;
        continue;
      }
      MergeDecision d = Decide(left, right, view);
      d.reason = "state about " + std::to_string(d.state_bytes) + " bytes < merge_bytes " +
                 std::to_string(merge_bytes) + ", cold for " + std::to_string((now_ms - since) / 1000) + " s";
      ripe.push_back(std::move(d));
    }
  }
  cold_since_ms_ = std::move(still_cold);
  std::sort(ripe.begin(), ripe.end(), [](const MergeDecision& a, const MergeDecision& b) {
    return a.state_bytes != b.state_bytes ? a.state_bytes < b.state_bytes
                                          : a.left.group_id() < b.left.group_id();
  });
  std::set<uint64_t> taken;
  for (MergeDecision& d : ripe) {
    if (plan.decisions.size() >= room) break;
    if (taken.count(d.left.group_id()) || taken.count(d.right.group_id())) continue;
    taken.insert(d.left.group_id());
    taken.insert(d.right.group_id());
    plan.decisions.push_back(std::move(d));
  }
  return plan;
}

}  // namespace tessera::autoadmin
