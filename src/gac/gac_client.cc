#include "gac/gac_client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <future>

#include "tessera/gac.pb.h"

namespace tessera::gac {
namespace {

using admission::CapacityKind;
using Clock = admission::Clock;

const char* KindName(CapacityKind kind) { return kind == CapacityKind::kRead ? "read" : "write"; }

}  // namespace

GacClient::GacClient(GacOptions options, uint32_t router_id, uint32_t routers,
                     std::vector<uint32_t> gac_ids, rpc::ChannelPool& pool, metrics::Registry& metrics)
    : options_(options),
      router_id_(router_id),
      gac_ids_(std::move(gac_ids)),
      pool_(pool),
      metrics_(metrics),
      report_failures_(metrics.GetCounter("tessera_gac_router_report_failures_total",
                                          "Reports to a GAC instance that got no grant")),
      shares_(options, routers) {}

void GacClient::Start() {
  if (!active()) return;
  reporter_.Start("gac-client", options_.interval_ms, [this] { ReportRound(); });
}

void GacClient::ReportRound() {
  const Clock::time_point now = Clock::now();
  const uint32_t elapsed_ms =
      last_report_ == Clock::time_point{}
          ? 0
          : static_cast<uint32_t>(std::min<int64_t>(
                std::chrono::duration_cast<std::chrono::milliseconds>(now - last_report_).count(),
                int64_t{3'600'000}));
  last_report_ = now;
  for (size_t i = 0; i < gac_ids_.size(); ++i) ReportTo(i, elapsed_ms);
  std::lock_guard lock(mu_);
  shares_.ApplyHold(Clock::now());
  for (auto& [key, series] : series_) {
    const auto state = shares_.State(key.first);
    if (state) series.granted->Set(key.second == CapacityKind::kRead ? state->read_rate : state->write_rate);
  }
}

void GacClient::ReportTo(size_t index, uint32_t elapsed_ms) {
  pb::GacReportRequest request;
  {
    std::lock_guard lock(mu_);
    request = shares_.TakeReport([&](const std::string& table) {
      return GacOwnerIndex(table, gac_ids_.size()) == index;
    });
  }
  if (request.tables_size() == 0) return;
  request.set_router_id(router_id_);
  request.set_elapsed_ms(elapsed_ms);
  auto channel = pool_.Get(gac_ids_[index]);
  if (!channel.ok()) {
    report_failures_.Increment();
    return;
  }
  auto promise = std::make_shared<std::promise<Result<std::string>>>();
  auto answer = promise->get_future();
  const auto timeout = std::chrono::milliseconds(options_.interval_ms);
  const Status accepted = (*channel)->Call(
      "gac.report", request.SerializeAsString(), timeout,
      [promise](Result<std::string> r) { promise->set_value(std::move(r)); });
  // The promise outlives a late answer (shared); this thread waits bounded.
  if (!accepted.ok() || answer.wait_for(timeout + std::chrono::milliseconds(200)) !=
                            std::future_status::ready) {
    report_failures_.Increment();
    return;
  }
  Result<std::string> raw = answer.get();
  pb::GacReportResponse response;
  if (!raw.ok() || !response.ParseFromString(*raw)) {
    report_failures_.Increment();
    spdlog::debug("gac.report_failed gac={} status=\"{}\"", gac_ids_[index],
                  raw.ok() ? "unparsable" : raw.status().ToString());
    return;
  }
  std::lock_guard lock(mu_);
  const Clock::time_point now = Clock::now();
  for (const pb::GacTableGrant& grant : response.grants()) shares_.ApplyGrant(grant, now);
  shares_.ForgetUnknown(request, response);
}

GacClient::Series& GacClient::SeriesOf(const std::string& table, CapacityKind kind) {
  Series& s = series_[{table, kind}];
  if (s.admitted == nullptr) {
    const metrics::Labels labels = {{"table", table}, {"kind", KindName(kind)}};
    s.admitted = &metrics_.GetCounter("tessera_gac_router_admitted_total",
                                      "KV and S3 requests admitted against this router's GAC share", labels);
    s.throttled = &metrics_.GetCounter("tessera_gac_router_throttled_total",
                                       "KV and S3 requests refused: this router's GAC share is spent", labels);
    s.units = &metrics_.GetCounter("tessera_gac_router_admitted_units_total",
                                   "Capacity units admitted against GAC shares (whole units)", labels);
    s.granted = &metrics_.GetGauge("tessera_gac_router_granted_units_per_s",
                                   "This router's share of the table's capacity in force", labels);
  }
  return s;
}

void GacClient::CountUnits(Series& s, double units) {
  s.units_fraction += units;
  const double whole = std::floor(s.units_fraction);
  if (whole >= 1) {
    s.units->Increment(static_cast<uint64_t>(whole));
    s.units_fraction -= whole;
  }
}

RouterTicket GacClient::Admit(const std::string& table, CapacityKind kind, double units) {
  if (!active()) return RouterTicket{};
  std::lock_guard lock(mu_);
  const RouterTicket t = shares_.Admit(table, kind, units, Clock::now());
  if (!t.charged) return t;
  Series& s = SeriesOf(table, kind);
  if (!t.admitted) {
    s.throttled->Increment();
    return t;
  }
  s.admitted->Increment();
  CountUnits(s, units);
  return t;
}

void GacClient::ChargeMore(const std::string& table, CapacityKind kind, double units) {
  if (!active() || units <= 0) return;
  std::lock_guard lock(mu_);
  shares_.ChargeMore(table, kind, units, Clock::now());
  auto it = series_.find({table, kind});
  if (it != series_.end()) CountUnits(it->second, units);
}

}  // namespace tessera::gac
