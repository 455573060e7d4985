#include "autoadmin/balance_planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "common/check.h"

namespace tessera::autoadmin {
namespace {

std::string Fixed(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  return buffer;
}

}  // namespace

double ReplicaLoad(const GroupView& group) { return group.load.write_units_per_s; }

double LeaderLoad(const GroupView& group) {
  if (group.load.requests_per_s > 0) return static_cast<double>(group.load.requests_per_s);
  return group.load.read_units_per_s + group.load.write_units_per_s;
}

Balance::Balance(const ClusterView& view, const BalanceOptions& options)
    : view_(view), options_(options) {
  for (const auto& [id, node] : view.nodes) {
    if (node.health == NodeHealth::kHealthy && !node.draining) nodes_[id].az = node.az;
  }
  for (const auto& [gid, group] : view.groups) {
    std::map<std::string, std::set<uint32_t>> members_per_az;  // for busy_
    bool learner = false;
    for (const pb::ReplicaPlacement& r : group.descriptor.replicas()) {
      const auto view_node = view.nodes.find(r.node_id());
      if (view_node != view.nodes.end()) members_per_az[view_node->second.az].insert(r.node_id());
      learner = learner || r.role() == pb::REPLICA_LEARNER;
      const auto it = nodes_.find(r.node_id());
      if (it == nodes_.end()) continue;
      ++it->second.replicas;
      it->second.bytes += group.state_bytes;
      it->second.load += ReplicaLoad(group);
    }
    const auto leader = nodes_.find(group.leader);
    if (leader != nodes_.end()) {
      ++leader->second.leaders;
      leader->second.leader_load += LeaderLoad(group);
      const auto report = view.nodes.at(group.leader).groups.find(gid);
      if (report != view.nodes.at(group.leader).groups.end()) {
        const pb::Membership& m = report->second.membership;
        learner = learner || m.learners_size() > 0;
        for (uint32_t id : m.voters()) {
          const auto n = view.nodes.find(id);
          if (n != view.nodes.end()) members_per_az[n->second.az].insert(id);
        }
        for (uint32_t id : m.learners()) busy_.insert(id);
      }
    }
    for (const pb::ReplicaPlacement& r : group.descriptor.replicas()) {
      if (r.role() == pb::REPLICA_LEARNER) busy_.insert(r.node_id());
    }
    for (const auto& [az, members] : members_per_az) {
      if (members.size() > 1) busy_.insert(members.begin(), members.end());
    }
  }
  std::map<std::string, std::tuple<double, double, double, double>> per_az;  // nodes, count, bytes, load
  double count = 0, load = 0;
  for (const auto& [id, n] : nodes_) {
    auto& [nodes, replicas, bytes, replica_load] = per_az[n.az];
    nodes += 1;
    replicas += static_cast<double>(n.replicas);
    bytes += static_cast<double>(n.bytes);
    replica_load += n.load;
    count += static_cast<double>(n.leaders);
    load += n.leader_load;
  }
  for (const auto& [az, totals] : per_az) {
    const auto& [nodes, replicas, bytes, replica_load] = totals;
    az_scale_[az] = MakeScale(nodes, replicas, bytes, replica_load);
  }
  leader_scale_ = MakeScale(static_cast<double>(nodes_.size()), count, 0, load);
  leader_scale_.bytes = 0;  // leaderships move no bytes
}

Balance::Scale Balance::MakeScale(double nodes, double count, double bytes, double load) const {
  Scale s;
  if (nodes <= 0) return s;
  s.count = count / nodes;
  s.bytes = std::max(bytes / nodes, static_cast<double>(options_.bytes_floor));
  s.load = std::max(load / nodes, options_.load_floor);
  return s;
}

double Balance::Weight(const Scale& scale, double bytes, double load) const {
  double w = 0;
  if (scale.count > 0) w += 1 / scale.count;
  if (scale.bytes > 0) w += bytes / scale.bytes;
  if (scale.load > 0) w += load / scale.load;
  return w;
}

double Balance::ReplicaScore(uint32_t node) const {
  const auto it = nodes_.find(node);
  if (it == nodes_.end()) return 0;
  const NodeBalance& n = it->second;
  const Scale& s = az_scale_.at(n.az);
  double score = 0;
  if (s.count > 0) score += static_cast<double>(n.replicas) / s.count;
  if (s.bytes > 0) score += static_cast<double>(n.bytes) / s.bytes;
  if (s.load > 0) score += n.load / s.load;
  return score;
}

double Balance::LeaderScore(uint32_t node) const {
  const auto it = nodes_.find(node);
  if (it == nodes_.end()) return 0;
  const NodeBalance& n = it->second;
  double score = 0;
  if (leader_scale_.count > 0) score += static_cast<double>(n.leaders) / leader_scale_.count;
  if (leader_scale_.load > 0) score += n.leader_load / leader_scale_.load;
  return score;
}

bool Balance::SpreadExceeded(const std::vector<double>& scores) const {
  if (scores.size() < 2) return false;
  const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
  double sum = 0;
  for (double s : scores) sum += s;
  const double mean = sum / static_cast<double>(scores.size());
  return mean > 0 && *hi - *lo > mean * options_.threshold_percent / 100.0;
}

std::vector<double> Balance::AzScores(const std::string& az) const {
  std::vector<double> scores;
  for (const auto& [id, n] : nodes_) {
    if (n.az == az) scores.push_back(ReplicaScore(id));
  }
  return scores;
}

std::vector<double> Balance::LeaderScores() const {
  std::vector<double> scores;
  for (const auto& [id, n] : nodes_) scores.push_back(LeaderScore(id));
  return scores;
}

std::optional<double> Balance::MoveGain(uint32_t from, uint32_t to, double weight,
                                        bool leaders) const {
  const NodeBalance& f = nodes_.at(from);
  if (!SpreadExceeded(leaders ? LeaderScores() : AzScores(f.az))) return std::nullopt;
  const double gap = leaders ? LeaderScore(from) - LeaderScore(to)
                             : ReplicaScore(from) - ReplicaScore(to);
  if (weight <= 0 || std::abs(gap - 2 * weight) > gap - weight) return std::nullopt;
  return gap - std::abs(gap - 2 * weight);
}

bool Balance::Hosts(const GroupView& group, uint32_t node) const {
  for (const pb::ReplicaPlacement& r : group.descriptor.replicas()) {
    if (r.node_id() == node) return true;
  }
  const auto it = view_.nodes.find(node);
  return it != view_.nodes.end() && it->second.groups.count(group.descriptor.group_id()) > 0;
}

std::optional<ReplicaMove> Balance::PickReplicaMove(const GroupView& group,
                                                    const std::vector<uint32_t>& voters,
                                                    uint32_t leader) {
  // Best: highest gain, then the emptier target, then the lower ids.
  std::optional<std::tuple<double, double, uint32_t, uint32_t>> best;
  for (uint32_t from : voters) {
    if (from == leader || nodes_.count(from) == 0 || busy_.count(from) > 0) continue;
    if (std::count(voters.begin(), voters.end(), from) != 1) continue;
    const std::string& az = nodes_.at(from).az;
    const double w = Weight(az_scale_.at(az), static_cast<double>(group.state_bytes),
                            ReplicaLoad(group));
    for (const auto& [to, n] : nodes_) {
      if (n.az != az || to == from || busy_.count(to) > 0 || Hosts(group, to) ||
          std::count(voters.begin(), voters.end(), to) > 0) {
        continue;
      }
      const std::optional<double> gain = MoveGain(from, to, w, /*leaders=*/false);
      if (!gain) continue;
      const auto rank = std::make_tuple(*gain, -ReplicaScore(to), 0u - to, 0u - from);
      if (!best || rank > *best) best = rank;
    }
  }
  if (!best) return std::nullopt;
  const uint32_t to = 0u - std::get<2>(*best);
  const uint32_t from = 0u - std::get<3>(*best);
  NodeBalance& f = nodes_.at(from);
  NodeBalance& t = nodes_.at(to);
  ReplicaMove move{from, to,
                   "balance replicas in " + f.az + ": node " + std::to_string(from) + " holds " +
                       std::to_string(f.replicas) + " (score " + Fixed(ReplicaScore(from)) +
                       "), node " + std::to_string(to) + " " + std::to_string(t.replicas) +
                       " (score " + Fixed(ReplicaScore(to)) + ")"};
  --f.replicas;
  f.bytes -= std::min(f.bytes, group.state_bytes);
  f.load = std::max(0.0, f.load - ReplicaLoad(group));
  ++t.replicas;
  t.bytes += group.state_bytes;
  t.load += ReplicaLoad(group);
  busy_.insert(from);
  busy_.insert(to);
  return move;
}

std::optional<uint32_t> Balance::PickLeader(const GroupView& group, uint32_t from,
                                            const std::vector<uint32_t>& candidates) {
  if (nodes_.count(from) == 0) return std::nullopt;
  const double w = Weight(leader_scale_, 0, LeaderLoad(group));
  std::optional<std::tuple<double, double, uint32_t>> best;
  for (uint32_t to : candidates) {
    if (to == from || nodes_.count(to) == 0) continue;
    const std::optional<double> gain = MoveGain(from, to, w, /*leaders=*/true);
    if (!gain) continue;
    const auto rank = std::make_tuple(*gain, -LeaderScore(to), 0u - to);
    if (!best || rank > *best) best = rank;
  }
  if (!best) return std::nullopt;
  const uint32_t to = 0u - std::get<2>(*best);
  NodeBalance& f = nodes_.at(from);
  NodeBalance& t = nodes_.at(to);
  TESSERA_CHECK(f.leaders > 0);
  --f.leaders;
  f.leader_load = std::max(0.0, f.leader_load - LeaderLoad(group));
  ++t.leaders;
  t.leader_load += LeaderLoad(group);
  return to;
}

}  // namespace tessera::autoadmin
