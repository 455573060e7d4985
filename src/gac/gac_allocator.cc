#include "gac/gac_allocator.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

#include "common/check.h"
#include "common/limits.h"

namespace tessera::gac {

std::vector<double> FairShares(double capacity, std::span<const double> demands) {
  std::vector<double> shares(demands.size(), 0);
  if (demands.empty()) return shares;
  std::vector<size_t> order(demands.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return demands[a] < demands[b]; });
  double left = std::max(0.0, capacity);
  size_t unmet = demands.size();
  for (size_t i : order) {
    const double even = left / static_cast<double>(unmet);
    shares[i] = std::min(std::max(0.0, demands[i]), even);
    left -= shares[i];
    --unmet;
  }
  // What demand left over goes to everyone alike.
  const double extra = left / static_cast<double>(demands.size());
  for (double& s : shares) s += extra;
  return shares;
}

GacAllocator::GacAllocator(GacOptions options) : options_(options) {
  TESSERA_CHECK(GacOptionsError(options_).empty());
}

void GacAllocator::SetTables(const pb::TablesResponse& tables) {
  std::map<std::string, Table> next;
  for (const pb::TableDescriptor& d : tables.tables()) {
    auto it = tables_.find(d.name());
    Table t = it != tables_.end() ? std::move(it->second) : Table{};
    if (t.capacity.mode() != pb::TableCapacity::CAPACITY_ON_DEMAND) {
      t.read_peak = options_.on_demand_initial_rcu;
      t.write_peak = options_.on_demand_initial_wcu;
    }
    t.capacity = d.capacity();
    next.emplace(d.name(), std::move(t));
  }
  tables_ = std::move(next);
  has_tables_ = true;
}

double GacAllocator::ElapsedSeconds(uint32_t elapsed_ms) const {
  // A first report (0) counts as one interval; a report far late is
  // averaged over at most ten.
  const uint32_t ms = elapsed_ms == 0 ? options_.interval_ms
                                      : std::clamp(elapsed_ms, options_.interval_ms / 4,
                                                   options_.interval_ms * 10);
  return std::max(1u, ms) / 1000.0;
}

void GacAllocator::Forget(Table& table, Clock::time_point now) const {
  const auto silent = std::chrono::milliseconds(3 * uint64_t{options_.interval_ms});
  std::erase_if(table.routers, [&](const auto& entry) { return now - entry.second.at > silent; });
}

std::pair<double, double> GacAllocator::Capacity(const Table& table) const {
  switch (table.capacity.mode()) {
    case pb::TableCapacity::CAPACITY_PROVISIONED:
      return {static_cast<double>(table.capacity.rcu()), static_cast<double>(table.capacity.wcu())};
    case pb::TableCapacity::CAPACITY_ON_DEMAND:
      return {2 * table.read_peak, 2 * table.write_peak};
    default:
      return {0, 0};
  }
}

pb::GacTableGrant GacAllocator::Grant(const std::string& name, Table& table, uint32_t router) const {
  pb::GacTableGrant grant;
  grant.set_table(name);
  *grant.mutable_capacity() = table.capacity;
  double read_used = 0, write_used = 0;
  std::vector<double> read_demands, write_demands;
  size_t self = 0;
  for (const auto& [id, use] : table.routers) {
    if (id == router) self = read_demands.size();
    read_demands.push_back(use.read_demand);
    write_demands.push_back(use.write_demand);
    read_used += use.read_used;
    write_used += use.write_used;
  }
  grant.set_table_read_units_per_s(read_used);
  grant.set_table_write_units_per_s(write_used);
  if (table.capacity.mode() == pb::TableCapacity::CAPACITY_UNSET) return grant;
  const auto [read_capacity, write_capacity] = Capacity(table);
  if (table.capacity.mode() == pb::TableCapacity::CAPACITY_ON_DEMAND) {
    grant.mutable_capacity()->set_rcu(static_cast<uint64_t>(std::ceil(read_capacity)));
    grant.mutable_capacity()->set_wcu(static_cast<uint64_t>(std::ceil(write_capacity)));
  }
  RouterUse& use = table.routers.at(router);
  use.read_grant = FairShares(read_capacity, read_demands)[self];
  use.write_grant = FairShares(write_capacity, write_demands)[self];
  grant.set_rcu_per_s(use.read_grant);
  grant.set_wcu_per_s(use.write_grant);
  return grant;
}

pb::GacTableGrant GacAllocator::Observed(const std::string& name, const Table& table) const {
  pb::GacTableGrant grant;
  grant.set_table(name);
  *grant.mutable_capacity() = table.capacity;
  const auto [read_capacity, write_capacity] = Capacity(table);
  grant.mutable_capacity()->set_rcu(static_cast<uint64_t>(std::ceil(read_capacity)));
  grant.mutable_capacity()->set_wcu(static_cast<uint64_t>(std::ceil(write_capacity)));
  double read_used = 0, write_used = 0;
  for (const auto& [id, use] : table.routers) {
    read_used += use.read_used;
    write_used += use.write_used;
  }
  grant.set_table_read_units_per_s(read_used);
  grant.set_table_write_units_per_s(write_used);
  return grant;
}

pb::GacReportResponse GacAllocator::Report(const pb::GacReportRequest& request, Clock::time_point now) {
  pb::GacReportResponse response;
  response.set_interval_ms(options_.interval_ms);
  const double seconds = ElapsedSeconds(request.elapsed_ms());
  for (const pb::GacTableReport& r : request.tables()) {
    auto it = tables_.find(r.table());
    if (it == tables_.end()) continue;
    Table& table = it->second;
    Forget(table, now);
    if (request.observer()) {
      *response.add_grants() = Observed(it->first, table);
      continue;
    }
    if (!table.routers.count(request.router_id()) &&
        table.routers.size() >= limits::kGacRoutersPerTableMax) {
      continue;
    }
    RouterUse& use = table.routers[request.router_id()];
    use.at = now;
    use.read_used = std::max(0.0, r.read_units()) / seconds;
    use.write_used = std::max(0.0, r.write_units()) / seconds;
    use.read_demand = use.read_used + std::max(0.0, r.read_refused_units()) / seconds;
    use.write_demand = use.write_used + std::max(0.0, r.write_refused_units()) / seconds;
    if (table.capacity.mode() == pb::TableCapacity::CAPACITY_ON_DEMAND) {
      // The peak a router carries from before a restart of this instance.
      table.read_peak = std::max(table.read_peak, std::max(0.0, r.read_peak_units_per_s()));
      table.write_peak = std::max(table.write_peak, std::max(0.0, r.write_peak_units_per_s()));
      double read_total = 0, write_total = 0;
      for (const auto& [id, u] : table.routers) {
        read_total += u.read_used;
        write_total += u.write_used;
      }
      table.read_peak = std::max(table.read_peak, read_total);
      table.write_peak = std::max(table.write_peak, write_total);
    }
    *response.add_grants() = Grant(it->first, table, request.router_id());
  }
  return response;
}

std::vector<GacAllocator::TableView> GacAllocator::View(Clock::time_point now) const {
  std::vector<TableView> out;
  const auto silent = std::chrono::milliseconds(3 * uint64_t{options_.interval_ms});
  for (const auto& [name, table] : tables_) {
    TableView v;
    v.table = name;
    std::tie(v.read_capacity, v.write_capacity) = Capacity(table);
    for (const auto& [id, use] : table.routers) {
      if (now - use.at > silent) continue;
      v.read_units_per_s += use.read_used;
      v.write_units_per_s += use.write_used;
      v.grants[id] = {use.read_grant, use.write_grant};
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace tessera::gac
