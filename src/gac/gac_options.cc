#include "gac/gac_options.h"

#include <cmath>

#include "common/check.h"
#include "tessera/cluster.pb.h"

namespace tessera::gac {

GacOptions GacOptionsOf(const pb::GacSettings& s) {
  GacOptions o;
  if (s.has_interval_ms()) o.interval_ms = s.interval_ms();
  if (s.has_hold_ms()) o.hold_ms = s.hold_ms();
  if (s.has_on_demand_initial_rcu()) o.on_demand_initial_rcu = s.on_demand_initial_rcu();
  if (s.has_on_demand_initial_wcu()) o.on_demand_initial_wcu = s.on_demand_initial_wcu();
  if (s.has_enabled()) o.enabled = s.enabled();
  return o;
}

std::string GacOptionsError(const GacOptions& o) {
  if (!knobs::kGacIntervalMs.Allows(o.interval_ms)) return "interval_ms out of bounds";
  if (!knobs::kGacHoldMs.Allows(o.hold_ms)) return "hold_ms out of bounds";
  if (!std::isfinite(o.on_demand_initial_rcu) || !knobs::kGacOnDemandInitialRcu.Allows(o.on_demand_initial_rcu)) {
    return "on_demand_initial_rcu out of bounds";
  }
  if (!std::isfinite(o.on_demand_initial_wcu) || !knobs::kGacOnDemandInitialWcu.Allows(o.on_demand_initial_wcu)) {
    return "on_demand_initial_wcu out of bounds";
  }
  return "";
}

size_t GacOwnerIndex(std::string_view table, size_t instances) {
  TESSERA_CHECK(instances > 0);
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : table) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return static_cast<size_t>(h % instances);
}

}  // namespace tessera::gac
