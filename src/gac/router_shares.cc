#include "gac/router_shares.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "admission/partition_budget.h"
#include "common/check.h"
#include "common/limits.h"

namespace tessera::gac {
namespace {

using admission::CapacityKind;
using admission::TokenBucket;

bool Charged(const pb::TableCapacity& c) { return c.mode() != pb::TableCapacity::CAPACITY_UNSET; }

}  // namespace

RouterShares::RouterShares(GacOptions options, uint32_t routers)
    : options_(options), routers_(std::max<uint32_t>(1, routers)) {
  TESSERA_CHECK(GacOptionsError(options_).empty());
}

RouterTicket RouterShares::Admit(const std::string& table, CapacityKind kind, double units,
                                 admission::Clock::time_point now) {
  RouterTicket ticket;
  auto it = shares_.find(table);
  if (it == shares_.end()) {
    if (shares_.size() >= limits::kGacTablesPerReportMax) return ticket;
    it = shares_.emplace(table, Share{}).first;
  }
  Share& s = it->second;
  std::optional<TokenBucket>& bucket = kind == CapacityKind::kRead ? s.read : s.write;
  double& used = kind == CapacityKind::kRead ? s.read_units : s.write_units;
  if (!s.granted || !Charged(s.capacity) || !bucket) {
    used += units;
    return ticket;
  }
  ticket.charged = true;
  if (!bucket->TryTake(now, units)) {
    ticket.admitted = false;
    (kind == CapacityKind::kRead ? s.read_refused : s.write_refused) += units;
    return ticket;
  }
  used += units;
  return ticket;
}

void RouterShares::ChargeMore(const std::string& table, CapacityKind kind, double units,
                              admission::Clock::time_point now) {
  if (units <= 0) return;
  auto it = shares_.find(table);
  if (it == shares_.end()) return;
  Share& s = it->second;
  (kind == CapacityKind::kRead ? s.read_units : s.write_units) += units;
  std::optional<TokenBucket>& bucket = kind == CapacityKind::kRead ? s.read : s.write;
  if (!bucket) return;
  const double there = std::min(units, bucket->Available(now));
  if (there > 0) (void)bucket->TryTake(now, there);
}

pb::GacReportRequest RouterShares::TakeReport(const std::function<bool(const std::string&)>& select) {
  pb::GacReportRequest request;
  for (auto& [name, s] : shares_) {
    if (!select(name)) continue;
    pb::GacTableReport* r = request.add_tables();
    r->set_table(name);
    r->set_read_units(s.read_units);
    r->set_write_units(s.write_units);
    r->set_read_refused_units(s.read_refused);
    r->set_write_refused_units(s.write_refused);
    if (s.granted && s.capacity.mode() == pb::TableCapacity::CAPACITY_ON_DEMAND) {
      r->set_read_peak_units_per_s(static_cast<double>(s.capacity.rcu()) / 2);
      r->set_write_peak_units_per_s(static_cast<double>(s.capacity.wcu()) / 2);
    }
    s.read_units = s.write_units = s.read_refused = s.write_refused = 0;
  }
  return request;
}

void RouterShares::SetRates(Share& s, double read_rate, double write_rate,
                            admission::Clock::time_point now) {
  const auto set = [now](std::optional<TokenBucket>& bucket, double rate) {
    rate = std::max(0.0, rate);
    const double cap = admission::SteadyCapFor(rate);
    if (!bucket) {
      bucket.emplace(rate, cap, now);
      return;
    }
    bucket->SetRate(rate, now);
    bucket->SetBurst(cap, now);
  };
  set(s.read, read_rate);
  set(s.write, write_rate);
}

void RouterShares::ApplyGrant(const pb::GacTableGrant& grant, admission::Clock::time_point now) {
  auto it = shares_.find(grant.table());
  if (it == shares_.end()) return;  // forgotten meanwhile
  Share& s = it->second;
  s.capacity = grant.capacity();
  s.granted = true;
  s.fallback = false;
  s.granted_at = now;
  if (!Charged(s.capacity)) {
    s.read.reset();
    s.write.reset();
    return;
  }
  SetRates(s, grant.rcu_per_s(), grant.wcu_per_s(), now);
}

void RouterShares::ForgetUnknown(const pb::GacReportRequest& sent, const pb::GacReportResponse& answer) {
  std::set<std::string_view> granted;
  for (const pb::GacTableGrant& g : answer.grants()) granted.insert(g.table());
  for (const pb::GacTableReport& r : sent.tables()) {
    if (granted.count(r.table())) continue;
    auto it = shares_.find(r.table());
    if (it != shares_.end() && !(it->second.granted && Charged(it->second.capacity))) shares_.erase(it);
  }
}

void RouterShares::ApplyHold(admission::Clock::time_point now) {
  const auto hold = std::chrono::milliseconds(options_.hold_ms);
  for (auto& [name, s] : shares_) {
    if (!s.granted || s.fallback || !Charged(s.capacity) || now - s.granted_at <= hold) continue;
    s.fallback = true;
    SetRates(s, static_cast<double>(s.capacity.rcu()) / routers_,
             static_cast<double>(s.capacity.wcu()) / routers_, now);
  }
}

std::optional<RouterShares::TableState> RouterShares::State(const std::string& table) const {
  auto it = shares_.find(table);
  if (it == shares_.end()) return std::nullopt;
  const Share& s = it->second;
  TableState state;
  state.charged = s.granted && Charged(s.capacity);
  state.fallback = s.fallback;
  if (s.read) state.read_rate = s.read->rate_per_s();
  if (s.write) state.write_rate = s.write->rate_per_s();
  return state;
}

}  // namespace tessera::gac
