// GacService: one global admission control instance (`tessera gac`,
// docs/admission.md): serves gac.report on its peer port with a
// GacAllocator, and polls the metadata replicas for the tables'
// capacities every interval.
//
// Contract:
//  1. gac.report is answered from the allocator (GacAllocator contract 2);
//     Unavailable until the first meta.tables answer; InvalidArgument for a
//     report of more than limits::kGacTablesPerReportMax tables or without
//     a router id.
//  2. A failed poll changes nothing (tessera_gac_table_poll_failures_total).
//  3. Nothing is stored: a restarted instance starts empty.
//
// Metrics: tessera_gac_reports_total; gauges per table and kind
// tessera_gac_table_units_per_s (consumption over its routers),
// tessera_gac_table_capacity_units_per_s, and per table, kind and router
// tessera_gac_granted_units_per_s.
//
// Thread safety: Start and Stop from the owner; handlers on the rpc
// threads (one mutex guards the allocator).
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "cluster/process_table.h"
#include "common/metrics.h"
#include "common/periodic_worker.h"
#include "gac/gac_allocator.h"
#include "rpc/channel_pool.h"
#include "rpc/server.h"

namespace tessera::gac {

struct GacServiceOptions {
  cluster::ProcessEntry self;
  std::vector<cluster::ProcessEntry> processes;  // the meta replicas are asked
  rpc::Identity identity;
  GacOptions gac;
};

class GacService {
 public:
  static Result<std::unique_ptr<GacService>> Start(rpc::RpcContext context, GacServiceOptions options);
  ~GacService() { Stop(); }
  GacService(const GacService&) = delete;
  GacService& operator=(const GacService&) = delete;

  void Stop();
  uint16_t port() const { return server_->port(); }

 private:
  GacService(rpc::RpcContext context, GacServiceOptions options);
  Status Init();
  void PollTables();
  // One call to a meta replica, waited for at most kPollTimeout and a second.
  Result<std::string> CallMeta(uint32_t meta, const std::string& method, const std::string& payload);
  void UpdateGauges();  // under mu_
  void HandleReport(pb::Envelope& request, rpc::Responder responder);

  rpc::RpcContext context_;
  const GacServiceOptions options_;
  std::unique_ptr<rpc::ChannelPool> pool_;
  std::unique_ptr<rpc::RpcServer> server_;
  std::vector<uint32_t> meta_ids_;
  size_t next_meta_ = 0;  // poller thread only
  PeriodicWorker poller_;
  metrics::Counter& reports_;
  metrics::Counter& poll_failures_;

  std::mutex mu_;  // guards allocator_
  GacAllocator allocator_;
};

}  // namespace tessera::gac
