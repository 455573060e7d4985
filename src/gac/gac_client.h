// GacClient: a router's global admission control (docs/admission.md): its
// RouterShares behind a lock, a background thread that reports each
// table's use to the GAC instance owning it (GacOwnerIndex) every
// interval_ms and applies the grants, and the metrics.
//
// Contract:
//  1. Admit / ChargeMore: as RouterShares (contract 1), at the steady
//     clock's now, counted in the metrics.
//  2. A report that gets no answer within interval_ms changes no share:
//     the tables of an unreachable instance keep their last share for
//     hold_ms, then fall back (RouterShares contract 4).
//  3. Without GAC instances, or with enabled = false, nothing is charged
//     and no thread runs.
//
// Metrics (labels table, kind = read|write):
// tessera_gac_router_admitted_total, tessera_gac_router_throttled_total
// (requests), tessera_gac_router_admitted_units_total (whole units),
// tessera_gac_router_granted_units_per_s (gauge: the share in force),
// tessera_gac_router_report_failures_total (no label).
//
// Thread safety: every method from any thread; Start and Stop from the
// owner.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/metrics.h"
#include "common/periodic_worker.h"
#include "gac/router_shares.h"
#include "rpc/channel_pool.h"

namespace tessera::gac {

class GacClient {
 public:
  // `gac_ids`: the GAC instances' peer ids in layout order (their addresses
  // already set in `pool`); `routers`: the layout's router count.
  GacClient(GacOptions options, uint32_t router_id, uint32_t routers, std::vector<uint32_t> gac_ids,
            rpc::ChannelPool& pool, metrics::Registry& metrics);
  ~GacClient() { Stop(); }
  GacClient(const GacClient&) = delete;
  GacClient& operator=(const GacClient&) = delete;

  void Start();
  void Stop() { reporter_.Stop(); }

  RouterTicket Admit(const std::string& table, admission::CapacityKind kind, double units);
  void ChargeMore(const std::string& table, admission::CapacityKind kind, double units);

  bool active() const { return options_.enabled && !gac_ids_.empty(); }

 private:
  struct Series {
    metrics::Counter* admitted = nullptr;
    metrics::Counter* throttled = nullptr;
    metrics::Counter* units = nullptr;
    metrics::Gauge* granted = nullptr;
    double units_fraction = 0;
  };
  void ReportRound();
  void ReportTo(size_t index, uint32_t elapsed_ms);
  Series& SeriesOf(const std::string& table, admission::CapacityKind kind);  // under mu_
  void CountUnits(Series& series, double units);                             // under mu_

  const GacOptions options_;
  const uint32_t router_id_;
  const std::vector<uint32_t> gac_ids_;
  rpc::ChannelPool& pool_;
  metrics::Registry& metrics_;
  metrics::Counter& report_failures_;
  PeriodicWorker reporter_;
  admission::Clock::time_point last_report_{};  // reporter thread only

  std::mutex mu_;  // guards shares_ and series_
  RouterShares shares_;
  std::map<std::pair<std::string, admission::CapacityKind>, Series> series_;
};

}  // namespace tessera::gac
