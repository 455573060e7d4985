#include "node/kv_admission.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <future>
#include <set>

#include "gac/gac_options.h"
#include "tessera/gac.pb.h"

namespace tessera::node {
namespace {

using admission::CapacityKind;
using admission::CapacityMode;
using admission::Clock;

constexpr std::chrono::milliseconds kPollTimeout{2'000};

CapacityMode ModeOf(const pb::TableCapacity& c) {
  switch (c.mode()) {
    case pb::TableCapacity::CAPACITY_PROVISIONED: return CapacityMode::kProvisioned;
    case pb::TableCapacity::CAPACITY_ON_DEMAND: return CapacityMode::kOnDemand;
    default: return CapacityMode::kUnset;
  }
}

const char* KindName(CapacityKind kind) { return kind == CapacityKind::kRead ? "read" : "write"; }

}  // namespace

KvAdmission::KvAdmission(uint32_t node_id, admission::NodeAdmissionOptions options,
                         metrics::Registry& metrics)
    : node_id_(node_id),
      metrics_(metrics),
      poll_failures_(metrics.GetCounter("tessera_admission_capacity_poll_failures_total",
                                        "meta.tables polls for table capacities that failed")),
      policy_(options, Clock::now()) {}

void KvAdmission::Start(std::shared_ptr<rpc::ChannelPool> pool, std::vector<uint32_t> meta_ids,
                        std::vector<uint32_t> gac_ids) {
  if (meta_ids.empty()) return;
  pool_ = std::move(pool);
  meta_ids_ = std::move(meta_ids);
  gac_ids_ = std::move(gac_ids);
  poller_.Start("kv-admission", policy_.options().capacity_refresh_ms, [this] { PollOnce(); });
}

Result<std::string> KvAdmission::CallAndWait(uint32_t peer, std::string_view method,
                                             std::string payload) {
  auto channel = pool_->Get(peer);
  if (!channel.ok()) return channel.status();
  auto promise = std::make_shared<std::promise<Result<std::string>>>();
  auto answer = promise->get_future();
  TESSERA_RETURN_IF_ERROR((*channel)->Call(method, std::move(payload), kPollTimeout,
                                           [promise](Result<std::string> r) {
                                             promise->set_value(std::move(r));
                                           }));
  // The promise outlives a late answer (shared); this thread waits bounded.
  if (answer.wait_for(kPollTimeout + std::chrono::seconds(1)) != std::future_status::ready) {
    return Status::Timeout(std::string(method) + " unanswered");
  }
  return answer.get();
}

void KvAdmission::PollOnce() {
  const uint32_t meta = meta_ids_[next_meta_++ % meta_ids_.size()];
  Result<std::string> raw = CallAndWait(meta, "meta.tables", pb::TablesRequest().SerializeAsString());
  pb::TablesResponse tables;
  if (!raw.ok() || !tables.ParseFromString(*raw)) {
    poll_failures_.Increment();
    return;
  }
  ApplyTables(tables);
  AdaptFromGac();
}

void KvAdmission::AdaptFromGac() {
  std::set<std::string> tables;
  {
    std::lock_guard lock(mu_);
    if (!policy_.options().adaptive) return;
    tables = policy_.ProvisionedTables();
  }
  std::map<std::string, admission::NodeAdmission::TableUse> use;
  for (size_t i = 0; i < gac_ids_.size() && !tables.empty(); ++i) {
    pb::GacReportRequest request;
    request.set_router_id(node_id_);
    request.set_observer(true);
    for (const std::string& t : tables) {
      if (gac::GacOwnerIndex(t, gac_ids_.size()) == i) request.add_tables()->set_table(t);
    }
    if (request.tables_size() == 0) continue;
    Result<std::string> raw = CallAndWait(gac_ids_[i], "gac.report", request.SerializeAsString());
    pb::GacReportResponse response;
    if (!raw.ok() || !response.ParseFromString(*raw)) continue;  // static shares meanwhile
    for (const pb::GacTableGrant& g : response.grants()) {
      use[g.table()] = {g.table_read_units_per_s(), g.table_write_units_per_s()};
    }
  }
  std::lock_guard lock(mu_);
  const Clock::time_point now = Clock::now();
  policy_.Adapt(use, now);
  for (auto& [key, series] : series_) {
    const auto rate = policy_.PartitionRate(key.first, key.second);
    if (rate && series.rate != nullptr) series.rate->Set(*rate);
  }
}

void KvAdmission::ApplyTables(const pb::TablesResponse& tables) {
  std::map<std::string, uint32_t> partitions_of;
  for (const pb::PartitionDescriptor& p : tables.partitions()) ++partitions_of[p.table()];
  std::map<std::string, const pb::TableDescriptor*> by_name;
  for (const pb::TableDescriptor& t : tables.tables()) by_name[t.name()] = &t;
  std::set<uint64_t> hosted;
  const Clock::time_point now = Clock::now();
  std::lock_guard lock(mu_);
  for (const pb::PartitionDescriptor& p : tables.partitions()) {
    bool here = false;
    for (const pb::ReplicaPlacement& r : p.replicas()) here |= r.node_id() == node_id_;
    auto table = by_name.find(p.table());
    if (!here || table == by_name.end()) continue;
    const pb::TableCapacity& c = table->second->capacity();
    policy_.SetPartition(p.group_id(),
                         admission::PartitionCapacity{p.table(), ModeOf(c), static_cast<double>(c.rcu()),
                                                      static_cast<double>(c.wcu()),
                                                      partitions_of[p.table()]},
                         now);
    hosted.insert(p.group_id());
  }
  policy_.RetainOnly(hosted);
}

KvAdmission::Series& KvAdmission::SeriesOf(uint64_t group_id, CapacityKind kind) {
  Series& s = series_[{group_id, kind}];
  if (s.admitted == nullptr) {
    const metrics::Labels labels = {{"table", policy_.TableOf(group_id).value_or("")},
                                    {"partition", std::to_string(group_id)},
                                    {"kind", KindName(kind)}};
    s.admitted = &metrics_.GetCounter("tessera_admission_admitted_total",
                                      "KV requests admitted against a table's capacity", labels);
    s.throttled = &metrics_.GetCounter("tessera_admission_throttled_total",
                                       "KV requests refused: throughput exceeded", labels);
    s.units = &metrics_.GetCounter("tessera_admission_units_total",
                                   "Capacity units charged (whole units)", labels);
    s.burst_units = &metrics_.GetCounter("tessera_admission_burst_units_total",
                                         "Capacity units taken from burst credit (whole units)", labels);
    s.rate = &metrics_.GetGauge("tessera_admission_partition_rate_units_per_s",
                                "The rate a partition's budget refills at (adapted)", labels);
    if (auto rate = policy_.PartitionRate(group_id, kind)) s.rate->Set(*rate);
  }
  return s;
}

void KvAdmission::Count(metrics::Counter& counter, double& fraction, double units) {
  fraction += units;
  const double whole = std::floor(fraction);
  if (whole >= 1) {
    counter.Increment(static_cast<uint64_t>(whole));
    fraction -= whole;
  }
}

admission::Admission KvAdmission::Admit(uint64_t group_id, CapacityKind kind, double units) {
  std::lock_guard lock(mu_);
  const admission::Admission a = policy_.Admit(group_id, kind, units, Clock::now());
  if (!a.charged) return a;
  Series& s = SeriesOf(group_id, kind);
  if (!a.admitted) {
    s.throttled->Increment();
    return a;
  }
  s.admitted->Increment();
  Count(*s.units, s.units_fraction, units);
  if (a.source == admission::BudgetSource::kBurst) Count(*s.burst_units, s.burst_fraction, units);
  return a;
}

void KvAdmission::Charge(uint64_t group_id, CapacityKind kind, const admission::Admission& a,
                         double units) {
  if (units <= 0 || !a.charged || !a.admitted) return;
  std::lock_guard lock(mu_);
  policy_.ChargeMore(group_id, kind, units, Clock::now());
  Series& s = SeriesOf(group_id, kind);
  Count(*s.units, s.units_fraction, units);
}

void KvAdmission::Return(uint64_t group_id, CapacityKind kind, const admission::Admission& a) {
  if (!a.charged || !a.admitted) return;
  std::lock_guard lock(mu_);
  policy_.Return(group_id, kind, a, Clock::now());
}

std::optional<admission::PartitionLoad> KvAdmission::Load(uint64_t group_id) {
  std::lock_guard lock(mu_);
  return policy_.Load(group_id, Clock::now());
}

}  // namespace tessera::node
