#include "admission/node_admission.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace tessera::admission {
namespace {

std::optional<TokenBucket> NodeBucketOf(double rate_per_s, Clock::time_point now) {
  if (rate_per_s <= 0) return std::nullopt;
  return TokenBucket(rate_per_s, SteadyCapFor(rate_per_s), now);
}

// A partition's share of a table's capacity, capped.
double ShareOf(double table_units, uint32_t partitions, double cap) {
  return std::min(cap, table_units / std::max<uint32_t>(1, partitions));
}

}  // namespace

std::string NodeAdmissionOptionsError(const NodeAdmissionOptions& o) {
  const auto bad = [](double v, double max) { return !std::isfinite(v) || v < 0 || v > max; };
  if (bad(o.partition_rcu_max, 1e9) || o.partition_rcu_max < 1) return "partition_rcu_max must be 1..1e9";
  if (bad(o.partition_wcu_max, 1e9) || o.partition_wcu_max < 1) return "partition_wcu_max must be 1..1e9";
  if (bad(o.node_rcu_per_s, 1e12)) return "node_rcu_per_s must be 0 (unlimited)..1e12";
  if (bad(o.node_wcu_per_s, 1e12)) return "node_wcu_per_s must be 0 (unlimited)..1e12";
  if (bad(o.burst_window_s, 86'400)) return "burst_window_s must be 0..86400";
  if (bad(o.node_spare_fraction, 1)) return "node_spare_fraction must be 0..1";
  if (o.capacity_refresh_ms < 10 || o.capacity_refresh_ms > 600'000) {
    return "capacity_refresh_ms must be 10..600000";
  }
  return "";
}

NodeAdmission::NodeAdmission(NodeAdmissionOptions options, Clock::time_point now)
    : options_(options),
      node_read_(NodeBucketOf(options.node_rcu_per_s, now)),
      node_write_(NodeBucketOf(options.node_wcu_per_s, now)) {
  TESSERA_CHECK(NodeAdmissionOptionsError(options_).empty());
}

void NodeAdmission::SetPartition(uint64_t group_id, const PartitionCapacity& capacity,
                                 Clock::time_point now) {
  Partition& p = partitions_[group_id];
  p.capacity = capacity;
  if (capacity.mode != CapacityMode::kProvisioned) {
    p.read.reset();
    p.write.reset();
    return;
  }
  const double rcu = ShareOf(capacity.table_rcu, capacity.partitions, options_.partition_rcu_max);
  const double wcu = ShareOf(capacity.table_wcu, capacity.partitions, options_.partition_wcu_max);
  const auto set = [&](std::optional<PartitionBudget>& budget, double rate) {
    if (!budget) {
      budget.emplace(rate, options_.burst_window_s, now);
    } else if (budget->rate_per_s() != rate || budget->burst_window_s() != options_.burst_window_s) {
      budget->SetRate(rate, options_.burst_window_s, now);
    }
  };
  set(p.read, rcu);
  set(p.write, wcu);
}

void NodeAdmission::RetainOnly(const std::set<uint64_t>& group_ids) {
  std::erase_if(partitions_, [&](const auto& entry) { return !group_ids.count(entry.first); });
}

bool NodeAdmission::NodeHasSpare(CapacityKind kind, double units, Clock::time_point now) {
  std::optional<TokenBucket>& node = NodeBucket(kind);
  if (!node) return true;
  return node->Available(now) - units >= options_.node_spare_fraction * node->burst();
}

Admission NodeAdmission::Admit(uint64_t group_id, CapacityKind kind, double units,
                               Clock::time_point now) {
  Admission a;
  a.units = units;
  auto it = partitions_.find(group_id);
  if (it == partitions_.end() || it->second.capacity.mode == CapacityMode::kUnset) return a;
  a.charged = true;
  std::optional<TokenBucket>& node = NodeBucket(kind);
  if (node && !node->Has(now, units)) {
    a.admitted = false;
    return a;
  }
  Partition& p = it->second;
  std::optional<PartitionBudget>& budget = kind == CapacityKind::kRead ? p.read : p.write;
  if (budget) {
    a.source = budget->TryTake(now, units, NodeHasSpare(kind, units, now));
    if (a.source == BudgetSource::kRefused) {
      a.admitted = false;
      return a;
    }
  }
  if (node) {
    const bool taken = node->TryTake(now, units);  // Has() held a moment ago
    TESSERA_CHECK(taken);
  }
  return a;
}

void NodeAdmission::ChargeMore(uint64_t group_id, CapacityKind kind, double units,
                               Clock::time_point now) {
  if (units <= 0) return;
  auto it = partitions_.find(group_id);
  if (it == partitions_.end() || it->second.capacity.mode == CapacityMode::kUnset) return;
  std::optional<TokenBucket>& node = NodeBucket(kind);
  if (node) {
    const double there = std::min(units, node->Available(now));
    if (there > 0) (void)node->TryTake(now, there);
  }
  std::optional<PartitionBudget>& budget =
      kind == CapacityKind::kRead ? it->second.read : it->second.write;
  if (budget) budget->TakeUpTo(now, units);
}

void NodeAdmission::Return(uint64_t group_id, CapacityKind kind, const Admission& admission,
                           Clock::time_point now) {
  if (!admission.admitted || !admission.charged) return;
  if (std::optional<TokenBucket>& node = NodeBucket(kind)) node->Return(now, admission.units);
  auto it = partitions_.find(group_id);
  if (it == partitions_.end()) return;
  std::optional<PartitionBudget>& budget =
      kind == CapacityKind::kRead ? it->second.read : it->second.write;
  if (budget) budget->Return(now, admission.units, admission.source);
}

std::optional<std::string> NodeAdmission::TableOf(uint64_t group_id) const {
  auto it = partitions_.find(group_id);
  if (it == partitions_.end()) return std::nullopt;
  return it->second.capacity.table;
}

std::optional<double> NodeAdmission::PartitionRate(uint64_t group_id, CapacityKind kind) const {
  auto it = partitions_.find(group_id);
  if (it == partitions_.end()) return std::nullopt;
  const std::optional<PartitionBudget>& budget =
      kind == CapacityKind::kRead ? it->second.read : it->second.write;
  if (!budget) return std::nullopt;
  return budget->rate_per_s();
}

}  // namespace tessera::admission
