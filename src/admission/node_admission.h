// NodeAdmission: a storage node's admission policy for KV requests, in
// capacity units (capacity_units.h): one read and one write PartitionBudget
// per partition it knows a capacity for, and a node-wide read and write
// bucket that protects the node whatever the tables ask.
//
// Contract:
//  1. A partition of a provisioned table gets its share of the table's
//     capacity: rcu / partitions and wcu / partitions, each capped by
//     partition_rcu_max / partition_wcu_max. A request is admitted when its
//     partition's budget (steady, or burst credit while the node has spare
//     capacity, see 3) and the node-wide bucket both hold its units.
//  2. A partition of an on-demand table has no budget of its own yet (the
//     global admission controller will give it one): only the node-wide
//     bucket admits it. A partition of a table with no capacity set, or one
//     not (yet) learned, is not charged at all: today's behaviour.
//  3. Burst credit is spent only while the node-wide bucket would still
//     hold node_spare_fraction of its cap after the request (the node has
//     spare capacity); an unlimited node (rate 0) always has.
//  4. A refusal takes nothing from any budget.
//  5. Return gives a request's units back where they were taken from (a
//     request the node did not serve after all: NotLeader, NotFound).
//  6. Adaptive capacity: Adapt, given a table's consumption over all
//     routers (from GAC), moves each of its provisioned partitions' rates a
//     gain's share towards a target: what the partition is asked for (its
//     admitted and refused units per second since the last Adapt) with a
//     quarter more, but no more than what the rest of the table leaves
//     (capacity - (consumption - the partition's demand)), nor the
//     partition cap, and never below the static share. So a hot partition
//     takes the capacity the table does not use (skew alone does not
//     throttle) and gives it back as its load falls or the rest of the
//     table grows. A table without consumption gets its static shares back.
//  7. Load reports what a partition consumed (units admitted or charged
//     more, less those returned) per second over the last complete window
//     of kConsumptionWindowMs, how far its rate is above its static share,
//     and the per-partition caps: the leader's report to the autoadmin's
//     consumption split triggers (autoadmin/load_split_planner.h).
//
// Pure: time comes in; no clock, no lock, no metrics (the caller counts
// what each call answers).
//
// Thread safety: none; the owner serialises calls.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "admission/partition_budget.h"
#include "knobs/knobs.h"

namespace tessera::admission {

// Defaults of the node's admission knobs, in one place (the knob registry
// takes them over).
struct NodeAdmissionOptions {
  // Caps on one partition's share, per second (DynamoDB's 3000 / 1000).
  double partition_rcu_max = knobs::kNodeAdmissionPartitionRcuMax.default_value;
  double partition_wcu_max = knobs::kNodeAdmissionPartitionWcuMax.default_value;
  // The node-wide buckets, units per second; 0: unlimited. Far above what
  // a node serves today, so that they protect without biting normal use.
  double node_rcu_per_s = knobs::kNodeAdmissionNodeRcuPerS.default_value;
  double node_wcu_per_s = knobs::kNodeAdmissionNodeWcuPerS.default_value;
  // Seconds of unused capacity a partition keeps as burst credit.
  double burst_window_s = knobs::kNodeAdmissionBurstWindowS.default_value;
  // Burst credit is spent only while the node-wide bucket keeps at least
  // this fraction of its cap (0..1).
  double node_spare_fraction = knobs::kNodeAdmissionNodeSpareFraction.default_value;
  // How often a node polls the metadata replicas for table capacities.
  uint32_t capacity_refresh_ms = knobs::kNodeAdmissionCapacityRefreshMs.default_value;
  // Adaptive capacity (contract 6): on, and the share of the gap to its
  // target a partition's rate closes per Adapt (0 < gain <= 1).
  bool adaptive = knobs::kNodeAdmissionAdaptive.default_value;
  double adaptive_gain = knobs::kNodeAdmissionAdaptiveGain.default_value;
};

// InvalidArgument-style check: the text of what is wrong, empty when fine.
std::string NodeAdmissionOptionsError(const NodeAdmissionOptions& options);

enum class CapacityMode : uint8_t { kUnset, kProvisioned, kOnDemand };
enum class CapacityKind : uint8_t { kRead, kWrite };

// What a partition is given: its table's mode and the table's capacity
// divided among `partitions` partitions.
struct PartitionCapacity {
  std::string table;
  CapacityMode mode = CapacityMode::kUnset;
  double table_rcu = 0;
  double table_wcu = 0;
  uint32_t partitions = 1;
};

// What admission sees of one partition (contract 7).
struct PartitionLoad {
  double read_units_per_s = 0;  // consumed, over the last complete window
  double write_units_per_s = 0;
  // Its rate above its static share, in thousandths of the share (the
  // larger of read and write); 0 unless provisioned and boosted.
  uint32_t boost_permille = 0;
  double rcu_max = 0;  // the per-partition caps (options)
  double wcu_max = 0;
};

// One admission decision; Return takes it back.
struct Admission {
  bool admitted = true;
  bool charged = false;  // false: unset mode or unknown partition
  double units = 0;
  BudgetSource source = BudgetSource::kSteady;  // the partition's (provisioned only)
};

class NodeAdmission {
 public:
  NodeAdmission(NodeAdmissionOptions options, Clock::time_point now);

  // Sets (or changes, from `now` on) what `group_id` is given. Budgets of
  // a partition whose share is unchanged keep their tokens and credit.
  void SetPartition(uint64_t group_id, const PartitionCapacity& capacity, Clock::time_point now);
  // Forgets every partition not in `group_ids`.
  void RetainOnly(const std::set<uint64_t>& group_ids);

  // A table's consumption over all routers, units per second.
  struct TableUse {
    double read_units_per_s = 0;
    double write_units_per_s = 0;
  };
  // Contract 6 (no-op with adaptive off); `use` by table name.
  void Adapt(const std::map<std::string, TableUse>& use, Clock::time_point now);
  // The provisioned tables this node charges (those Adapt wants).
  std::set<std::string> ProvisionedTables() const;

  Admission Admit(uint64_t group_id, CapacityKind kind, double units, Clock::time_point now);
  // Charges `units` more to an admitted request (a read's size known once
  // served), taking only what is there.
  void ChargeMore(uint64_t group_id, CapacityKind kind, double units, Clock::time_point now);
  void Return(uint64_t group_id, CapacityKind kind, const Admission& admission, Clock::time_point now);

  // The table of a known partition (metric labels); nullopt when unknown.
  std::optional<std::string> TableOf(uint64_t group_id) const;
  // The per-second rate a partition's budget refills at; nullopt when it
  // has none (unset, on-demand, unknown).
  std::optional<double> PartitionRate(uint64_t group_id, CapacityKind kind) const;
  // Contract 7; nullopt for an unknown partition. Closes the window when
  // it is over (an idle partition's consumption falls to 0).
  std::optional<PartitionLoad> Load(uint64_t group_id, Clock::time_point now);
  // As long as the load split finder's (node/load_split_finder.h), so the
  // leader's figures cover the same span.
  static constexpr uint64_t kConsumptionWindowMs = 5'000;
  const NodeAdmissionOptions& options() const { return options_; }

 private:
  struct Partition {
    PartitionCapacity capacity;
    std::optional<PartitionBudget> read;   // provisioned only
    std::optional<PartitionBudget> write;
    double read_base = 0, write_base = 0;  // the static shares
    double read_asked = 0, write_asked = 0;  // admitted + refused units since the last Adapt
    // Contract 7: units consumed since window_start, and the last window's rates.
    Clock::time_point window_start;
    double read_consumed = 0, write_consumed = 0;
    double read_per_s = 0, write_per_s = 0;
  };
  void Consume(Partition& p, CapacityKind kind, double units, Clock::time_point now);
  void CloseWindowIfOver(Partition& p, Clock::time_point now);
  void AdaptOne(Partition& p, CapacityKind kind, double table_use, double elapsed_s,
                Clock::time_point now);
  std::optional<TokenBucket>& NodeBucket(CapacityKind kind) {
    return kind == CapacityKind::kRead ? node_read_ : node_write_;
  }
  bool NodeHasSpare(CapacityKind kind, double units, Clock::time_point now);

  NodeAdmissionOptions options_;
  std::optional<TokenBucket> node_read_;   // nullopt: unlimited
  std::optional<TokenBucket> node_write_;
  std::map<uint64_t, Partition> partitions_;
  Clock::time_point last_adapt_;
};

}  // namespace tessera::admission
