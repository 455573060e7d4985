#include "autoadmin/load_split_planner.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace tessera::autoadmin {
namespace {

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

std::string Whole(double v) { return std::to_string(std::llround(v)); }

// The trigger that makes `g` hot, if any, and what it saw (status text).
struct Hot {
  LoadSplitTrigger trigger = LoadSplitTrigger::kLoad;
  std::string what;
};

std::optional<Hot> HotTrigger(const GroupView& g, const PlannerOptions& o) {
  const LoadReport& l = g.load;
  if (o.split_consumption_percent > 0) {
    const double share = o.split_consumption_percent / 100.0;
    if (l.rcu_max > 0 && l.read_units_per_s > share * l.rcu_max) {
      return Hot{LoadSplitTrigger::kConsumption,
                 "consumption " + Whole(l.read_units_per_s) + " RCU/s > " +
                     std::to_string(o.split_consumption_percent) + "% of the partition cap " + Whole(l.rcu_max)};
    }
    if (l.wcu_max > 0 && l.write_units_per_s > share * l.wcu_max) {
      return Hot{LoadSplitTrigger::kConsumption,
                 "consumption " + Whole(l.write_units_per_s) + " WCU/s > " +
                     std::to_string(o.split_consumption_percent) + "% of the partition cap " + Whole(l.wcu_max)};
    }
  }
  if (o.split_boost_percent > 0 && l.boost_permille > uint64_t{o.split_boost_percent} * 10) {
    return Hot{LoadSplitTrigger::kBoost, "boost " + std::to_string(l.boost_permille / 10) +
                                             "% above its static share > split_boost_percent " +
                                             std::to_string(o.split_boost_percent)};
  }
  if (o.split_load > 0 && l.requests_per_s > o.split_load) {
    return Hot{LoadSplitTrigger::kLoad, "load " + std::to_string(l.requests_per_s) + " req/s > split_load " +
                                            std::to_string(o.split_load)};
  }
  return std::nullopt;
}

std::string RefusalText(const GroupView& g, const Hot& hot) {
  const char* why = "";
  switch (g.load.reason) {
    case pb::LOAD_SPLIT_ONE_HOT_KEY: why = "one key carries the load"; break;
    case pb::LOAD_SPLIT_SEQUENTIAL: why = "keys increase, only the newest range is hot"; break;
    case pb::LOAD_SPLIT_UNBALANCED: why = "no sampled key balances the load"; break;
    default: break;
  }
  return hot.what + ": no load split, " + LoadSplitReasonName(g.load.reason) + " (" + why + ", " +
         std::to_string(g.load.share_permille / 10) + "%)";
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

const char* LoadSplitTriggerName(LoadSplitTrigger trigger) {
  switch (trigger) {
    case LoadSplitTrigger::kConsumption: return "consumption";
    case LoadSplitTrigger::kBoost: return "boost";
    case LoadSplitTrigger::kLoad: return "load";
  }
  return "load";
}

LoadSplitPlan LoadSplitPlanner::Plan(const ClusterView& view, const PlannerOptions& options,
                                     const std::set<uint64_t>& busy, size_t room, uint64_t now_ms) {
  LoadSplitPlan plan;
  std::map<uint64_t, Watch> still;
  struct Ready {
    uint64_t load;
    uint64_t group;
    Hot hot;
  };
  std::vector<Ready> ready;
  for (const auto& [id, g] : view.groups) {
    if (g.splitting || busy.count(id) > 0) continue;
    std::optional<Hot> hot = HotTrigger(g, options);
    if (!hot) continue;
    const auto seen = watched_.find(id);
    Watch w = seen == watched_.end() ? Watch{now_ms} : seen->second;
    if (now_ms - w.above_since_ms >= options.split_after_ms && Settled(g, view)) {
      if (g.load.reason == pb::LOAD_SPLIT_KEY_FOUND && !g.load.split_key.empty()) {
        ready.push_back({g.load.requests_per_s, id, std::move(*hot)});
      } else if (g.load.reason == pb::LOAD_SPLIT_ONE_HOT_KEY || g.load.reason == pb::LOAD_SPLIT_SEQUENTIAL ||
                 g.load.reason == pb::LOAD_SPLIT_UNBALANCED) {
        LoadSplitRefusal r{id, g.descriptor.table(), g.load.reason, hot->trigger, RefusalText(g, *hot)};
        if (w.last_refusal != g.load.reason || w.last_trigger != hot->trigger) plan.new_refusals.push_back(r);
        w.last_refusal = g.load.reason;
        w.last_trigger = hot->trigger;
        plan.refusals.push_back(std::move(r));
      }
    }
    still[id] = w;
  }
  watched_ = std::move(still);
  // The busiest first, ties by group id.
  std::sort(ready.begin(), ready.end(), [](const Ready& a, const Ready& b) {
    return a.load != b.load ? a.load > b.load : a.group < b.group;
  });
  for (Ready& r : ready) {
    if (plan.work.size() >= room) break;
    const GroupView& g = view.groups.at(r.group);
    SplitWork w;
    w.parent = g.descriptor;
    w.leader = g.leader;
    w.split_key = g.load.split_key;
    // The text starts with the trigger's name ("consumption ...").
    w.reason = r.hot.what + " for " +
               std::to_string(options.split_after_ms / 1000) + " s, " +
               std::to_string(g.load.share_permille / 10) + "% of the load left of the key";
    plan.work.push_back(std::move(w));
    plan.triggers.push_back(r.hot.trigger);
    watched_.erase(r.group);  // watched afresh after the split
  }
  return plan;
}

}  // namespace tessera::autoadmin
