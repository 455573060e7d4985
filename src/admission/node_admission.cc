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
  if (!std::isfinite(o.adaptive_gain) || o.adaptive_gain < 0.01 || o.adaptive_gain > 1) {
    return "adaptive_gain must be 0.01..1";
  }
  return "";
}

NodeAdmission::NodeAdmission(NodeAdmissionOptions options, Clock::time_point now)
    : options_(options),
      node_read_(NodeBucketOf(options.node_rcu_per_s, now)),
      node_write_(NodeBucketOf(options.node_wcu_per_s, now)),
      last_adapt_(now) {
  TESSERA_CHECK(NodeAdmissionOptionsError(options_).empty());
}

void NodeAdmission::SetPartition(uint64_t group_id, const PartitionCapacity& capacity,
                                 Clock::time_point now) {
  const auto [it, added] = partitions_.try_emplace(group_id);
  Partition& p = it->second;
  if (added) p.window_start = now;
  p.capacity = capacity;
  if (capacity.mode != CapacityMode::kProvisioned) {
    p.read.reset();
    p.write.reset();
    return;
  }
  const double rcu = ShareOf(capacity.table_rcu, capacity.partitions, options_.partition_rcu_max);
  const double wcu = ShareOf(capacity.table_wcu, capacity.partitions, options_.partition_wcu_max);
  // An adapted rate stays while the static share is unchanged.
  const auto set = [&](std::optional<PartitionBudget>& budget, double& base, double rate) {
    if (!budget) {
      budget.emplace(rate, options_.burst_window_s, now);
    } else if (base != rate || budget->burst_window_s() != options_.burst_window_s) {
      budget->SetRate(rate, options_.burst_window_s, now);
    }
    base = rate;
  };
  set(p.read, p.read_base, rcu);
  set(p.write, p.write_base, wcu);
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
    (kind == CapacityKind::kRead ? p.read_asked : p.write_asked) += units;
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
  Consume(p, kind, units, now);
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
  Consume(it->second, kind, units, now);
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
  Consume(it->second, kind, -admission.units, now);
}

void NodeAdmission::CloseWindowIfOver(Partition& p, Clock::time_point now) {
  const auto window = std::chrono::milliseconds(kConsumptionWindowMs);
  if (now < p.window_start + window) return;
  // More than two windows since it opened: the last complete one was idle.
  const double elapsed_s = std::chrono::duration<double>(now - p.window_start).count();
  const bool idle_since = now >= p.window_start + 2 * window;
  p.read_per_s = idle_since ? 0 : p.read_consumed / elapsed_s;
  p.write_per_s = idle_since ? 0 : p.write_consumed / elapsed_s;
  p.read_consumed = p.write_consumed = 0;
  p.window_start = now;
}

void NodeAdmission::Consume(Partition& p, CapacityKind kind, double units, Clock::time_point now) {
  CloseWindowIfOver(p, now);
  double& consumed = kind == CapacityKind::kRead ? p.read_consumed : p.write_consumed;
  consumed = std::max(0.0, consumed + units);  // a return of the last window's units
}

std::optional<PartitionLoad> NodeAdmission::Load(uint64_t group_id, Clock::time_point now) {
  auto it = partitions_.find(group_id);
  if (it == partitions_.end()) return std::nullopt;
  Partition& p = it->second;
  CloseWindowIfOver(p, now);
  PartitionLoad load;
  load.read_units_per_s = p.read_per_s;
  load.write_units_per_s = p.write_per_s;
  load.rcu_max = options_.partition_rcu_max;
  load.wcu_max = options_.partition_wcu_max;
  const auto boost = [](const std::optional<PartitionBudget>& budget, double base) -> uint32_t {
    if (!budget || base <= 0 || budget->rate_per_s() <= base) return 0;
    return static_cast<uint32_t>(std::min(1e9, (budget->rate_per_s() / base - 1) * 1000));
  };
  load.boost_permille = std::max(boost(p.read, p.read_base), boost(p.write, p.write_base));
  return load;
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

std::set<std::string> NodeAdmission::ProvisionedTables() const {
  std::set<std::string> tables;
  for (const auto& [id, p] : partitions_) {
    if (p.capacity.mode == CapacityMode::kProvisioned) tables.insert(p.capacity.table);
  }
  return tables;
}

void NodeAdmission::AdaptOne(Partition& p, CapacityKind kind, double table_use, double elapsed_s,
                             Clock::time_point now) {
  const bool read = kind == CapacityKind::kRead;
  std::optional<PartitionBudget>& budget = read ? p.read : p.write;
  double& asked = read ? p.read_asked : p.write_asked;
  const double base = read ? p.read_base : p.write_base;
  const double table_capacity = read ? p.capacity.table_rcu : p.capacity.table_wcu;
  const double cap = std::min(read ? options_.partition_rcu_max : options_.partition_wcu_max,
                              table_capacity);
  const double demand = asked / elapsed_s;
  asked = 0;
  if (!budget) return;
  const double left_by_others = table_capacity - std::max(0.0, table_use - demand);
  const double target = std::max(base, std::min({1.25 * demand, left_by_others, cap}));
  const double rate = budget->rate_per_s();
  const double next = std::max(base, rate + options_.adaptive_gain * (target - rate));
  if (std::fabs(next - rate) >= 1e-6) budget->SetRate(next, options_.burst_window_s, now);
}

void NodeAdmission::Adapt(const std::map<std::string, TableUse>& use, Clock::time_point now) {
  const double elapsed_s = std::chrono::duration<double>(now - last_adapt_).count();
  if (elapsed_s <= 0) return;
  last_adapt_ = now;
  for (auto& [id, p] : partitions_) {
    if (p.capacity.mode != CapacityMode::kProvisioned) continue;
    auto it = use.find(p.capacity.table);
    if (!options_.adaptive || it == use.end()) {
      // Static shares: back to the base.
      p.read_asked = p.write_asked = 0;
      if (p.read && p.read->rate_per_s() != p.read_base) p.read->SetRate(p.read_base, options_.burst_window_s, now);
      if (p.write && p.write->rate_per_s() != p.write_base) {
        p.write->SetRate(p.write_base, options_.burst_window_s, now);
      }
      continue;
    }
    AdaptOne(p, CapacityKind::kRead, it->second.read_units_per_s, elapsed_s, now);
    AdaptOne(p, CapacityKind::kWrite, it->second.write_units_per_s, elapsed_s, now);
  }
}

}  // namespace tessera::admission
