// Balance: where replicas and leaders should move so that every node
// carries its share of the bytes, the load and the replicas
// (docs/autoadmin.md, "Spreading" and "Leaders"; decision D143).
// The planner (planner.h) asks it while nothing needs repair; it answers
// from the ClusterView alone, so it is as stateless between rounds as the
// planner.
//
// Scores. A node's replica score within its AZ is the sum of three terms,
// each its share relative to the AZ's mean over the nodes that may take
// replicas (healthy, not draining), so that a balanced node scores about
// 1 per term:
//     replicas / mean_replicas
//   + bytes    / max(mean_bytes, bytes_floor)
//   + load     / max(mean_load, load_floor)
// where bytes are the state_bytes of the groups it holds a replica of, and
// load the write units per second of those groups (every replica applies
// every write). The floors keep a near-empty cluster (a few KiB, a few
// requests per second) spreading by count: bytes and load count once they
// matter. A node's leader score, cluster-wide (leadership moves across
// AZs), is the same with the groups it leads, and as load their requests
// per second (a leader serves every read and write).
//
// With bytes and load below their floors (a young or idle cluster) the
// count term decides: replicas and leaders spread within one per node.
//
// Moves. A group's replica (or leadership) weighs w, what its move shifts
// from one score to the other. It moves from node F to node T only when
//   * the scores' spread (highest - lowest) exceeds threshold_percent of
//     the mean score (hysteresis: a balanced cluster never chases noise);
//   * the gap g = score(F) - score(T) becomes |g - 2w| <= g - w: the move
//     gains at least its own weight, so it never swings the gap past zero
//     by more than it closes it (no ping-pong: every move lowers the sum
//     of squared scores by at least w^2);
//   * replicas only: neither F nor T takes part in another move (one move
//     in flight per node, as source or target).
// Replicas move within their AZ, add before evict (the planner's steps);
// the voter that leaves is the one on the higher-scored node (Surplus*).
//
// Thread safety: plain values; a Balance belongs to one planning round.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "autoadmin/cluster_view.h"
#include "knobs/knobs.h"

namespace tessera::autoadmin {

struct BalanceOptions {
  // Nothing moves while the scores' spread is within this percentage of
  // the mean score.
  uint32_t threshold_percent = knobs::kAutoadminBalanceThresholdPercent.default_value;
  // Bytes and load below these per node count as if they were this much
  // on average (see the header).
  uint64_t bytes_floor = uint64_t{knobs::kAutoadminBalanceBytesFloorMib.default_value} << 20;
  double load_floor = knobs::kAutoadminBalanceLoadFloor.default_value;
};

// One node's totals and scores, for tests, logs and `autoadmin status`.
struct NodeBalance {
  std::string az;
  size_t replicas = 0;
  uint64_t bytes = 0;
  double load = 0;
  size_t leaders = 0;
  double leader_load = 0;
};

struct ReplicaMove {
  uint32_t from = 0;
  uint32_t to = 0;
  std::string reason;
};

class Balance {
 public:
  // Nodes already taking part in a replica move (source or target) are
  // found in `view`: a group's learner's node, and every voter's node of an
  // AZ where the group has two voters (the new one and the one to leave).
  Balance(const ClusterView& view, const BalanceOptions& options);

  // A move of one of `voters` of `group` (never `leader`) to a node of its
  // AZ that holds nothing of the group, when the rules above allow one;
  // the best-gaining such move. Records it (its nodes are busy, the
  // scores moved) so the round's later decisions see it.
  std::optional<ReplicaMove> PickReplicaMove(const GroupView& group,
                                             const std::vector<uint32_t>& voters,
                                             uint32_t leader);
  // A voter to take `group`'s leadership from `from`, among `candidates`
  // (caught-up voters on healthy nodes), when the rules above allow it;
  // records the transfer.
  std::optional<uint32_t> PickLeader(const GroupView& group, uint32_t from,
                                     const std::vector<uint32_t>& candidates);

  double ReplicaScore(uint32_t node) const;
  double LeaderScore(uint32_t node) const;
  const std::map<uint32_t, NodeBalance>& nodes() const { return nodes_; }

 private:
  // What one unit of each term weighs in a score: the mean count, and the
  // mean bytes and load raised to their floors.
  struct Scale {
    double count = 0;
    double bytes = 0;
    double load = 0;
  };
  Scale MakeScale(double nodes, double count, double bytes, double load) const;
  double Weight(const Scale& scale, double bytes, double load) const;
  // Highest minus lowest score, and whether it exceeds the threshold.
  bool SpreadExceeded(const std::vector<double>& scores) const;
  std::vector<double> AzScores(const std::string& az) const;
  std::vector<double> LeaderScores() const;
  // Whether a move of weight `weight` from `from` to `to` is allowed (see
  // the header); its gain when it is, for ranking.
  std::optional<double> MoveGain(uint32_t from, uint32_t to, double weight, bool leaders) const;
  bool Hosts(const GroupView& group, uint32_t node) const;

  const ClusterView& view_;
  BalanceOptions options_;
  std::map<uint32_t, NodeBalance> nodes_;  // eligible nodes only (healthy, not draining)
  std::map<std::string, Scale> az_scale_;
  Scale leader_scale_;
  std::set<uint32_t> busy_;
};

// The replica load and the leader load of a group (see the header).
double ReplicaLoad(const GroupView& group);
double LeaderLoad(const GroupView& group);

}  // namespace tessera::autoadmin
