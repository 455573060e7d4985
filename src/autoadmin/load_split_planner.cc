#include "autoadmin/load_split_planner.h"

#include <algorithm>

namespace tessera::autoadmin {
namespace {

// The S3 table: its splits are refused by the size path (split_driver.cc);
// its requests are not sampled by the nodes' finders either.
constexpr std::string_view kS3Table = "_s3";

bool Settled(const GroupView& group, const ClusterView& view) {
  if (group.leader == 0 || group.descriptor.replicas_size() == 0) return false;
  for (const pb::ReplicaPlacement& r : group.descriptor.replicas()) {
    if (r.role() == pb::REPLICA_LEARNER) return false;
    const auto node = view.nodes.find(r.node_id());
    if (node == view.nodes.end() || node->second.health != NodeHealth::kHealthy) return false;
  }
  const auto node = view.nodes.find(group.leader);
  if (node == view.nodes.end()) return false;
  const auto report = node->second.groups.find(group.descriptor.group_id());
  return report != node->second.groups.end() && !report->second.membership_pending;
}

std::string RefusalText(const GroupView& g, const PlannerOptions& options) {
  const char* why = "";
  switch (g.load.reason) {
    case pb::LOAD_SPLIT_ONE_HOT_KEY: why = "one key carries the load"; break;
    case pb::LOAD_SPLIT_SEQUENTIAL: why = "keys increase, only the newest range is hot"; break;
    case pb::LOAD_SPLIT_UNBALANCED: why = "no sampled key balances the load"; break;
    default: break;
  }
  return "load " + std::to_string(g.load.requests_per_s) + " req/s > split_load " +
         std::to_string(options.split_load) + ": no load split, " + LoadSplitReasonName(g.load.reason) +
         " (" + why + ", " + std::to_string(g.load.share_permille / 10) + "%)";
}

}  // namespace

const char* LoadSplitReasonName(pb::LoadSplitReason reason) {
  switch (reason) {
    case pb::LOAD_SPLIT_KEY_FOUND: return "key_found";
    case pb::LOAD_SPLIT_TOO_FEW_SAMPLES: return "too_few_samples";
    case pb::LOAD_SPLIT_ONE_HOT_KEY: return "one_hot_key";
    case pb::LOAD_SPLIT_SEQUENTIAL: return "sequential";
    case pb::LOAD_SPLIT_UNBALANCED: return "unbalanced";
    default: return "unknown";
  }
}

LoadSplitPlan LoadSplitPlanner::Plan(const ClusterView& view, const PlannerOptions& options,
                                     const std::set<uint64_t>& busy, size_t room, uint64_t now_ms) {
  LoadSplitPlan plan;
  std::map<uint64_t, Watch> still;
  std::vector<std::pair<uint64_t, uint64_t>> ready;  // (load, group)
  for (const auto& [id, g] : view.groups) {
    if (options.split_load == 0 || g.splitting || busy.count(id) > 0) continue;
    if (g.descriptor.table() == kS3Table || g.load.requests_per_s <= options.split_load) continue;
    const auto seen = watched_.find(id);
    Watch w = seen == watched_.end() ? Watch{now_ms, pb::LOAD_SPLIT_UNKNOWN} : seen->second;
    if (now_ms - w.above_since_ms >= options.split_after_ms && Settled(g, view)) {
      if (g.load.reason == pb::LOAD_SPLIT_KEY_FOUND && !g.load.split_key.empty()) {
        ready.emplace_back(g.load.requests_per_s, id);
      } else if (g.load.reason == pb::LOAD_SPLIT_ONE_HOT_KEY || g.load.reason == pb::LOAD_SPLIT_SEQUENTIAL ||
                 g.load.reason == pb::LOAD_SPLIT_UNBALANCED) {
        LoadSplitRefusal r{id, g.descriptor.table(), g.load.reason, RefusalText(g, options)};
        if (w.last_refusal != g.load.reason) plan.new_refusals.push_back(r);
        w.last_refusal = g.load.reason;
        plan.refusals.push_back(std::move(r));
      }
    }
    still[id] = w;
  }
  watched_ = std::move(still);
  // The busiest first, ties by group id.
  std::sort(ready.begin(), ready.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (const auto& [load, id] : ready) {
    if (plan.work.size() >= room) break;
    const GroupView& g = view.groups.at(id);
    SplitWork w;
    w.parent = g.descriptor;
    w.leader = g.leader;
    w.split_key = g.load.split_key;
    w.reason = "load " + std::to_string(load) + " req/s > split_load " + std::to_string(options.split_load) +
               " for " + std::to_string(options.split_after_ms / 1000) + " s, " +
               std::to_string(g.load.share_permille / 10) + "% of it left of the key";
    plan.work.push_back(std::move(w));
    watched_.erase(id);  // watched afresh after the split
  }
  return plan;
}

}  // namespace tessera::autoadmin
