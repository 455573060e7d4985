#include "autoadmin/planner.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace tessera::autoadmin {
namespace {

bool Has(const google::protobuf::RepeatedField<uint32_t>& ids, uint32_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

bool IsMember(const pb::Membership& m, uint32_t id) {
  return Has(m.voters(), id) || Has(m.learners(), id);
}

bool IsLogOnly(const pb::Membership& m, uint32_t id) { return Has(m.log_only(), id); }

const pb::ReplicaPlacement* Placement(const pb::PartitionDescriptor& d, uint32_t node) {
  for (const pb::ReplicaPlacement& r : d.replicas()) {
    if (r.node_id() == node) return &r;
  }
  return nullptr;
}

// Everything a round's decisions share: the view, the options, and the
// replica counts of nodes (updated as targets are chosen, to spread them).
class Round {
 public:
  Round(const ClusterView& view, const PlannerOptions& options)
      : view_(view), options_(options), balance_(view, options.balance) {
    for (const auto& [id, node] : view.nodes) load_[id] = leaders_[id] = 0;
    for (const auto& [id, group] : view.groups) {
      if (group.leader != 0) ++leaders_[group.leader];
      for (const pb::ReplicaPlacement& r : group.descriptor.replicas()) {
        if (ToMove(r.node_id()) || !Answered(Health(r.node_id()))) repairs_wanted_ = true;
      }
      if (!group.lagging_voters.empty()) repairs_wanted_ = true;
      for (const pb::ReplicaPlacement& r : group.descriptor.replicas()) {
        if (r.log_only()) repairs_wanted_ = true;  // temporary by design
      }
      for (const pb::ReplicaPlacement& r : group.descriptor.replicas()) ++load_[r.node_id()];
      if (MidReplacement(group)) ++in_flight_;
    }
  }

  std::optional<Action> Decide(const GroupView& group) {
    if (group.leader == 0) return std::nullopt;
    const ReplicaReport* leader = Report(group.leader, group.descriptor.group_id());
    if (leader == nullptr || leader->membership_pending) return std::nullopt;
    const pb::Membership& m = leader->membership;
    if (auto a = MoveLeadership(group, m, *leader, /*to_balance=*/false)) return a;
    if (auto a = ContinueAdd(group, m)) return a;
    if (auto a = SyncDescriptor(group, m)) return a;
    if (auto a = ProgressLearners(group, m, *leader)) return a;
    if (auto a = RemoveSurplusVoter(group, m)) return a;
    if (auto a = StartReplacement(group, m)) return a;
    if (auto a = DropStale(group, m)) return a;
    if (auto a = StartSpreading(group, m)) return a;
    return MoveLeadership(group, m, *leader, /*to_balance=*/true);
  }

 private:
  const ReplicaReport* Report(uint32_t node, uint64_t group_id) const {
    const auto n = view_.nodes.find(node);
    if (n == view_.nodes.end()) return nullptr;
    const auto g = n->second.groups.find(group_id);
    return g == n->second.groups.end() ? nullptr : &g->second;
  }

  NodeHealth Health(uint32_t node) const {
    const auto it = view_.nodes.find(node);
    return it == view_.nodes.end() ? NodeHealth::kDead : it->second.health;
  }

  bool Draining(uint32_t node) const {
    const auto it = view_.nodes.find(node);
    return it != view_.nodes.end() && it->second.draining;
  }

  bool GrayForLong(uint32_t node) const {
    const auto it = view_.nodes.find(node);
    return it != view_.nodes.end() && it->second.health == NodeHealth::kGray &&
           it->second.gray_for_ms >= options_.gray_replace_after_ms;
  }

  // A replica that must move: its node is dead, draining, or gray for long.
  bool ToMove(uint32_t node) const {
    return Health(node) == NodeHealth::kDead || Draining(node) || GrayForLong(node);
  }

  // Why a replica on `node` must move (ToMove), for reasons.
  std::string WhyMove(uint32_t node) const {
    if (Draining(node)) return "draining";
    if (GrayForLong(node)) return "gray";
    return NodeHealthName(Health(node));
  }

  // A voter that must leave `group`: its node must be left (ToMove), or it
  // stays behind the group (lag_tracker.h).
  bool MustLeave(const GroupView& group, uint32_t voter) const {
    return ToMove(voter) || group.lagging_voters.count(voter) > 0 ||
           group.stopped_voters.count(voter) > 0 || LogReplica(group, voter);
  }
  std::string WhyLeave(const GroupView& group, uint32_t voter) const {
    if (ToMove(voter)) return WhyMove(voter);
    if (LogReplica(group, voter)) return "a log replica";
    if (group.stopped_voters.count(voter) > 0) return "stopped";
    return group.lagging_voters.count(voter) > 0 ? "lagging" : NodeHealthName(Health(voter));
  }

  // A log replica of the group, as meta's descriptor names it.
  static bool LogReplica(const GroupView& group, uint32_t node) {
    const pb::ReplicaPlacement* p = Placement(group.descriptor, node);
    return p != nullptr && p->log_only();
  }

  std::string AzOf(uint32_t node) const {
    const auto it = view_.nodes.find(node);
    return it == view_.nodes.end() ? std::string() : it->second.az;
  }

  bool MidReplacement(const GroupView& group) const {
    for (const pb::ReplicaPlacement& r : group.descriptor.replicas()) {
      if (r.role() == pb::REPLICA_LEARNER) return true;
    }
    if (group.leader == 0) return false;
    const ReplicaReport* leader = Report(group.leader, group.descriptor.group_id());
    return leader != nullptr && (leader->membership.learners_size() > 0 ||
                                 static_cast<size_t>(leader->membership.voters_size()) >
                                     options_.replication_factor);
  }

  // Nothing to repair: replication_factor voters, all answering, none to
  // move, no learner.
  bool Settled(const GroupView& group, const pb::Membership& m) const {
    if (MidReplacement(group) || m.learners_size() > 0 ||
        static_cast<size_t>(m.voters_size()) != options_.replication_factor) {
      return false;
    }
    return std::all_of(m.voters().begin(), m.voters().end(),
                       [&](uint32_t v) { return Answered(Health(v)) && !MustLeave(group, v); });
  }

  // Voters whose nodes answered (healthy or gray): they take part in quorums.
  size_t AnsweringAmong(const std::vector<uint32_t>& voters) const {
    return static_cast<size_t>(std::count_if(voters.begin(), voters.end(), [&](uint32_t v) {
      return Answered(Health(v));
    }));
  }

  // Leadership leaves a gray or draining node first of all (to_balance
  // false); otherwise (to_balance true) it moves only from a node leading at
  // least two groups more than the target, in a group not mid-replacement.
  // The target: a voter on a healthy node, caught up, leading fewest.
  std::optional<Action> MoveLeadership(const GroupView& group, const pb::Membership& m,
                                       const ReplicaReport& leader, bool to_balance) {
    const uint32_t from = group.leader;
    const bool must_leave = Health(from) == NodeHealth::kGray || Draining(from);
    if (to_balance ? (!options_.balance_leaders || must_leave || !Settled(group, m))
                   : !must_leave) {
      return std::nullopt;
    }
    if (transfers_ >= options_.max_concurrent) return std::nullopt;
    std::optional<std::pair<size_t, uint32_t>> best;
    std::vector<uint32_t> candidates;
    for (uint32_t v : m.voters()) {
      if (v == from || Health(v) != NodeHealth::kHealthy || Draining(v)) continue;
      const ReplicaReport* report = Report(v, group.descriptor.group_id());
      if (report == nullptr || report->stopped || MustLeave(group, v) || IsLogOnly(m, v) ||
          report->applied + options_.promote_lag_slots < leader.chosen) {
        continue;
      }
      candidates.push_back(v);
      const auto rank = std::make_pair(leaders_[v], v);
      if (!best || rank < *best) best = rank;
    }
    if (!best) return std::nullopt;
    // Balancing: by count and load (balance_planner.h).
    const std::optional<uint32_t> balanced =
        to_balance ? balance_.PickLeader(group, from, candidates) : std::nullopt;
    if (to_balance && !balanced) return std::nullopt;
    const uint32_t to = to_balance ? *balanced : best->second;
    std::string reason =
        to_balance ? "balance leaders (" + std::to_string(leaders_[from]) + " on node " +
                         std::to_string(from) + ", " + std::to_string(leaders_[to]) + " on node " +
                         std::to_string(to) + ")"
                   : "leader's node " + std::to_string(from) + " is " +
                         (Draining(from) ? std::string("draining") : std::string("gray"));
    --leaders_[from];
    ++leaders_[to];
    ++transfers_;
    return Make(ActionKind::kTransferLeader, group, from, to, std::move(reason));
  }

  Action Make(ActionKind kind, const GroupView& group, uint32_t node, uint32_t replica,
              std::string reason) const {
    Action a;
    a.kind = kind;
    a.group_id = group.descriptor.group_id();
    a.node = node;
    a.replica = replica;
    a.reason = std::move(reason);
    return a;
  }

  // Step 2/3 of an add: meta names a learner the group does not have yet.
  std::optional<Action> ContinueAdd(const GroupView& group, const pb::Membership& m) {
    for (const pb::ReplicaPlacement& r : group.descriptor.replicas()) {
      if (r.role() != pb::REPLICA_LEARNER || IsMember(m, r.node_id())) continue;
      const uint32_t target = r.node_id();
      if (Health(target) != NodeHealth::kHealthy || Draining(target)) {
        // The target failed (or is drained) before joining: withdraw the intent.
        Action a = Make(ActionKind::kSyncDescriptor, group, 0, target,
                        "target " + std::to_string(target) + " is " +
                            (Draining(target) ? "draining" : NodeHealthName(Health(target))) +
                            " before joining");
        a.descriptor = Mirror(group, m, /*keep_pending_except=*/target);
        return a;
      }
      if (Report(target, group.descriptor.group_id()) == nullptr) {
        Action a = Make(ActionKind::kCreateReplica, group, target, target,
                        "create the new replica on its node");
        a.descriptor = group.descriptor;
        return a;
      }
      Action a = Make(ActionKind::kAddLearner, group, group.leader, target,
                      r.log_only() ? "add the log replica as a learner"
                                   : "add the new replica as a learner");
      a.log_only = r.log_only();
      return a;
    }
    return std::nullopt;
  }

  // The descriptor that mirrors membership `m` (voters, then learners), keeping
  // meta's learners that are not members yet (adds in progress) except
  // `keep_pending_except`; epoch + 1.
  pb::PartitionDescriptor Mirror(const GroupView& group, const pb::Membership& m,
                                 uint32_t keep_pending_except = 0) const {
    pb::PartitionDescriptor d = group.descriptor;
    d.clear_replicas();
    auto add = [&](uint32_t id, pb::ReplicaRole role, bool log_only) {
      pb::ReplicaPlacement* r = d.add_replicas();
      r->set_node_id(id);
      r->set_az(AzOf(id));
      r->set_role(role);
      r->set_log_only(log_only);
    };
    for (uint32_t v : m.voters()) add(v, pb::REPLICA_VOTER, IsLogOnly(m, v));
    for (uint32_t l : m.learners()) add(l, pb::REPLICA_LEARNER, IsLogOnly(m, l));
    for (const pb::ReplicaPlacement& r : group.descriptor.replicas()) {
      if (r.role() == pb::REPLICA_LEARNER && !IsMember(m, r.node_id()) &&
          r.node_id() != keep_pending_except) {
        add(r.node_id(), pb::REPLICA_LEARNER, r.log_only());
      }
    }
    d.set_epoch(group.descriptor.epoch() + 1);
    d.set_leader_hint(group.leader);
    return d;
  }

  std::optional<Action> SyncDescriptor(const GroupView& group, const pb::Membership& m) {
    pb::PartitionDescriptor mirrored = Mirror(group, m);
    auto roles = [](const pb::PartitionDescriptor& d) {
      std::map<uint32_t, std::pair<int, bool>> out;
      for (const pb::ReplicaPlacement& r : d.replicas()) out[r.node_id()] = {r.role(), r.log_only()};
      return out;
    };
    if (roles(mirrored) == roles(group.descriptor)) return std::nullopt;
    Action a = Make(ActionKind::kSyncDescriptor, group, 0, 0,
                    "meta's descriptor follows the group's membership");
    a.descriptor = std::move(mirrored);
    return a;
  }

  std::optional<Action> ProgressLearners(const GroupView& group, const pb::Membership& m,
                                         const ReplicaReport& leader) {
    for (uint32_t learner : m.learners()) {
      const NodeHealth health = Health(learner);
      if (ToMove(learner)) {
        return Make(ActionKind::kRemove, group, group.leader, learner,
                    "learner's node is " + WhyMove(learner));
      }
      if (health != NodeHealth::kHealthy) continue;
      const ReplicaReport* report = Report(learner, group.descriptor.group_id());
      if (report == nullptr) continue;
      if (report->applied > 0 && report->applied + options_.promote_lag_slots >= leader.chosen) {
        return Make(ActionKind::kPromote, group, group.leader, learner,
                    "learner caught up (applied " + std::to_string(report->applied) +
                        ", leader chosen " + std::to_string(leader.chosen) + ")");
      }
    }
    return std::nullopt;
  }

  std::optional<Action> RemoveSurplusVoter(const GroupView& group, const pb::Membership& m) {
    const std::vector<uint32_t> voters(m.voters().begin(), m.voters().end());
    if (voters.size() <= options_.replication_factor) return std::nullopt;
    std::map<std::string, int> per_az;
    for (uint32_t v : voters) ++per_az[AzOf(v)];
    // Rank: a voter to move (dead, draining, gray for long) first, then a
    // log replica (it stood in for the voter a full replica now replaces),
    // then one merely unreachable, then a voter sharing its AZ, not the
    // leader, on the highest-scored node (balance_planner.h: a balancing
    // move's source), the most replicas, highest id.
    std::optional<std::tuple<int, int, int, double, size_t, uint32_t>> best;
    uint32_t chosen = 0;
    for (uint32_t v : voters) {
      const int unhealthy = LogReplica(group, v) && !ToMove(v) ? 2
                            : MustLeave(group, v)               ? 3
                            : Health(v) != NodeHealth::kHealthy ? 1
                                                                : 0;
      const auto rank = std::make_tuple(unhealthy, per_az[AzOf(v)] > 1 ? 1 : 0,
                                        v != group.leader ? 1 : 0, balance_.ReplicaScore(v),
                                        load_[v], v);
      if (!best || rank > *best) {
        best = rank;
        chosen = v;
      }
    }
    std::vector<uint32_t> rest;
    for (uint32_t v : voters) {
      if (v != chosen) rest.push_back(v);
    }
    // The removal must be chosen by a quorum of the current voters too: with
    // too few of them healthy it would only hang, uncommitted.
    if (AnsweringAmong(rest) < rest.size() / 2 + 1) return std::nullopt;
    if (AnsweringAmong(voters) < voters.size() / 2 + 1) return std::nullopt;
    return Make(ActionKind::kRemove, group, group.leader, chosen,
                "voter " + std::to_string(chosen) + " is surplus (" + WhyLeave(group, chosen) + ")");
  }

  // A healthy voter sharing its AZ with another voter while a healthy node
  // of an AZ the group does not use could hold it (the group was repaired
  // across AZs when its own AZ had no node): the one to move back, not the
  // leader if avoidable, else 0. Its target comes from that unused AZ.
  uint32_t Misplaced(const GroupView& group, const pb::Membership& m) const {
    std::map<std::string, std::vector<uint32_t>> per_az;
    for (uint32_t v : m.voters()) per_az[AzOf(v)].push_back(v);
    uint32_t chosen = 0;
    for (const auto& [az, voters] : per_az) {
      if (voters.size() < 2) continue;
      for (uint32_t v : voters) {
        if (chosen == 0 || (chosen == group.leader && v != group.leader)) chosen = v;
      }
    }
    if (chosen == 0) return 0;
    const uint32_t target = ChooseTarget(group, m, 0);
    return target != 0 && per_az.count(AzOf(target)) == 0 ? chosen : 0;
  }

  std::optional<Action> StartReplacement(const GroupView& group, const pb::Membership& m) {
    if (m.learners_size() > 0) return std::nullopt;
    const std::vector<uint32_t> voters(m.voters().begin(), m.voters().end());
    uint32_t lost = 0;  // a dead voter first, else one that must leave otherwise
    for (uint32_t v : voters) {
      if (MustLeave(group, v) && (lost == 0 || Health(v) == NodeHealth::kDead)) lost = v;
    }
    const uint32_t misplaced =
        lost == 0 && voters.size() >= options_.replication_factor ? Misplaced(group, m) : 0;
    if (lost == 0 && misplaced == 0 && voters.size() >= options_.replication_factor) {
      return std::nullopt;
    }
    if (AnsweringAmong(voters) < voters.size() / 2 + 1) return std::nullopt;  // no quorum
    if (in_flight_ >= options_.max_concurrent) return std::nullopt;
    if (lost != 0 && StandInWithLogReplica(group, m, lost)) {
      // A log replica outside the lost voter's AZ, whose best node stays
      // free for the full replacement.
      const uint32_t log_target = ChooseTarget(group, m, 0, /*avoid_az=*/AzOf(lost));
      // Only while another node remains for the full replacement: a log
      // replica on the last possible target would keep it from ever coming.
      if (log_target != 0 && ChooseTarget(group, m, lost, std::string(), log_target) != 0) {
        return AddReplica(group, log_target,
                          "log replica for " + WhyLeave(group, lost) + " voter " +
                              std::to_string(lost),
                          /*log_only=*/true);
      }
    }
    // A misplaced voter's target is in an AZ the group does not use (lost
    // 0), and so is a log replica's full replacement.
    const uint32_t target = ChooseTarget(group, m, LogReplica(group, lost) ? 0 : lost);
    if (target == 0) return std::nullopt;
    std::string reason;
    if (lost != 0) {
      reason = "replace " + WhyLeave(group, lost) + " voter " + std::to_string(lost);
    } else if (misplaced != 0) {
      reason = "move voter " + std::to_string(misplaced) + " back to an AZ of its own";
    } else {
      reason = "group has " + std::to_string(voters.size()) + " voters";
    }
    return AddReplica(group, target, std::move(reason));
  }

  // The lost voter no longer takes part (its node is dead, or its replica
  // stopped), the group has no log replica yet, and none of its voters is
  // surplus: a log replica restores its tolerance first.
  bool StandInWithLogReplica(const GroupView& group, const pb::Membership& m, uint32_t lost) const {
    const bool gone = Health(lost) == NodeHealth::kDead || group.stopped_voters.count(lost) > 0;
    return options_.log_replicas && gone && m.log_only_size() == 0 &&
           static_cast<size_t>(m.voters_size()) <= options_.replication_factor &&
           std::none_of(group.descriptor.replicas().begin(), group.descriptor.replicas().end(),
                        [](const pb::ReplicaPlacement& r) { return r.log_only(); });
  }

  // Step 1 of an add: meta's descriptor names `target` as a learner.
  Action AddReplica(const GroupView& group, uint32_t target, std::string reason,
                    bool log_only = false) {
    ++in_flight_;
    ++load_[target];
    Action a = Make(ActionKind::kAddReplica, group, 0, target, std::move(reason));
    a.log_only = log_only;
    a.descriptor = group.descriptor;
    pb::ReplicaPlacement* r = a.descriptor.add_replicas();
    r->set_node_id(target);
    r->set_az(AzOf(target));
    r->set_role(pb::REPLICA_LEARNER);
    r->set_log_only(log_only);
    a.descriptor.set_epoch(group.descriptor.epoch() + 1);
    a.descriptor.set_leader_hint(group.leader);
    return a;
  }

  // Balances replicas within an AZ (balance_planner.h): while nothing
  // anywhere needs repair, a settled group's voter (never the leader) is
  // replaced, add before evict, by one on a node of its AZ the balance
  // chooses; RemoveSurplusVoter later removes the higher-scored node's.
  std::optional<Action> StartSpreading(const GroupView& group, const pb::Membership& m) {
    if (repairs_wanted_ || !Settled(group, m) || in_flight_ >= options_.max_concurrent) {
      return std::nullopt;
    }
    const std::vector<uint32_t> voters(m.voters().begin(), m.voters().end());
    std::optional<ReplicaMove> move = balance_.PickReplicaMove(group, voters, group.leader);
    if (!move) return std::nullopt;
    --load_[move->from];  // it leaves once `to` is a voter
    return AddReplica(group, move->to, std::move(move->reason));
  }

  // A healthy node holding nothing of the group, other than `exclude`: in
  // the lost replica's AZ when it has one, else in an AZ the group's live
  // voters do not use, else anywhere (in `avoid_az` last of all); the
  // fewest replicas first, then the lowest id.
  uint32_t ChooseTarget(const GroupView& group, const pb::Membership& m, uint32_t lost,
                        const std::string& avoid_az = std::string(), uint32_t exclude = 0) const {
    const uint64_t gid = group.descriptor.group_id();
    std::set<std::string> used_azs;
    for (uint32_t v : m.voters()) {
      if (v != lost && !MustLeave(group, v)) used_azs.insert(AzOf(v));
    }
    const std::string lost_az = lost != 0 ? AzOf(lost) : std::string();
    std::optional<std::tuple<int, size_t, uint32_t>> best;
    uint32_t chosen = 0;
    for (const auto& [id, node] : view_.nodes) {
      if (id == exclude || node.health != NodeHealth::kHealthy || node.draining ||
          IsMember(m, id) || Placement(group.descriptor, id) != nullptr || node.groups.count(gid)) {
        continue;
      }
      const int az_rank = !avoid_az.empty() && node.az == avoid_az ? 3
                          : node.az == lost_az                      ? 0
                          : used_azs.count(node.az)                 ? 2
                                                                    : 1;
      const auto rank = std::make_tuple(az_rank, load_.at(id), id);
      if (!best || rank < *best) {
        best = rank;
        chosen = id;
      }
    }
    return chosen;
  }

  std::optional<Action> DropStale(const GroupView& group, const pb::Membership& m) {
    const uint64_t gid = group.descriptor.group_id();
    for (const auto& [id, node] : view_.nodes) {
      if (!Answered(node.health) || !node.groups.count(gid)) continue;
      if (IsMember(m, id) || Placement(group.descriptor, id) != nullptr) continue;
      return Make(ActionKind::kDropStale, group, id, id,
                  "node " + std::to_string(id) + " holds a replica the group no longer has");
    }
    return std::nullopt;
  }

  const ClusterView& view_;
  const PlannerOptions& options_;
  std::map<uint32_t, size_t> load_;
  std::map<uint32_t, size_t> leaders_;  // groups led per node, as planned so far
  Balance balance_;  // replica and leader scores, as planned so far
  size_t in_flight_ = 0;
  size_t transfers_ = 0;
  // Some group has a replica to move or that does not answer: replicas
  // spread onto emptier nodes only once nothing needs repair.
  bool repairs_wanted_ = false;
};

}  // namespace

const char* ActionKindName(ActionKind kind) {
  switch (kind) {
    case ActionKind::kAddReplica: return "add_replica";
    case ActionKind::kCreateReplica: return "create_replica";
    case ActionKind::kAddLearner: return "add_learner";
    case ActionKind::kPromote: return "promote";
    case ActionKind::kRemove: return "remove";
    case ActionKind::kSyncDescriptor: return "sync_descriptor";
    case ActionKind::kDropStale: return "drop_stale";
    case ActionKind::kMoveBlobSlots: return "move_blob_slots";
    case ActionKind::kTransferLeader: return "transfer_leader";
  }
  return "?";
}

std::vector<Action> Plan(const ClusterView& view, const PlannerOptions& options) {
  Round round(view, options);
  std::vector<Action> actions;
  for (const auto& [id, group] : view.groups) {
    // A splitting group's replica set must stay the one the split was
    // ordered on (split_driver.h).
    if (group.splitting) continue;
    if (auto a = round.Decide(group)) actions.push_back(std::move(*a));
  }
  return actions;
}

}  // namespace tessera::autoadmin
