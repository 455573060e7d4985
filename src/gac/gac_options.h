// GacOptions: the settings of global admission control (docs/admission.md),
// shared by the GAC instances (gac_allocator.h) and the routers
// (router_shares.h); layout `gac_settings`, defaults from the knobs.
//
// Thread safety: a value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "knobs/knobs.h"

namespace tessera::pb {
class GacSettings;
}  // namespace tessera::pb

namespace tessera::gac {

struct GacOptions {
  // How often a router reports and gets its next share; a share is a rate
  // for the interval that follows.
  uint32_t interval_ms = knobs::kGacIntervalMs.default_value;
  // A router that got no grant for a table this long falls back from its
  // last share to capacity / routers.
  uint32_t hold_ms = knobs::kGacHoldMs.default_value;
  // On-demand tables: the peak they start with, units per second; the
  // table may use twice its peak, and the peak follows what it uses.
  double on_demand_initial_rcu = knobs::kGacOnDemandInitialRcu.default_value;
  double on_demand_initial_wcu = knobs::kGacOnDemandInitialWcu.default_value;
  // false: routers charge nothing (the nodes' budgets alone admit).
  bool enabled = knobs::kGacEnabled.default_value;
};

// The options of a layout's gac_settings (within the knobs' bounds: the
// layout was validated).
GacOptions GacOptionsOf(const pb::GacSettings& settings);

// What is wrong with `options`; empty when fine.
std::string GacOptionsError(const GacOptions& options);

// The index of the GAC instance (of `instances`, in layout order) that owns
// `table`: FNV-1a of the name, modulo. Every process computes the same.
size_t GacOwnerIndex(std::string_view table, size_t instances);

}  // namespace tessera::gac
