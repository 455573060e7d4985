// KvAdmission: a storage node's capacity admission of KV requests
// (docs/admission.md): the pure policy (admission::NodeAdmission) behind a
// lock, fed with the tables' capacities polled from the metadata replicas,
// and counted in metrics per table, partition and kind.
//
// Contract:
//  1. Every capacity_refresh_ms a background thread reads meta.tables from
//     one metadata replica (round robin) and gives each partition this node
//     hosts a replica of its table's capacity divided among the table's
//     partitions; partitions no longer listed are forgotten. A failed poll
//     changes nothing (counted in tessera_admission_capacity_poll_failures_total).
//  2. Admit answers whether a request's units are admitted now; a refusal
//     took nothing. Charge, Return: as NodeAdmission's ChargeMore, Return.
//  3. Without metadata replicas (in-process tests) nothing is polled and
//     nothing is charged.
//  4. Adaptive capacity: after each poll, the node asks the GAC instance
//     owning each provisioned table it charges for the table's consumption
//     (gac.report as an observer) and adapts its partitions' rates
//     (NodeAdmission contract 6); a table whose instance does not answer
//     gets its static shares back. Without GAC instances: static shares.
//
// Metrics (labels table, partition = group id, kind = read|write):
// tessera_admission_admitted_total, tessera_admission_throttled_total,
// tessera_admission_units_total (whole units charged),
// tessera_admission_burst_units_total (whole units of burst credit spent),
// tessera_admission_partition_rate_units_per_s (gauge: the rate in force).
//
// Thread safety: every method from any thread (one mutex guards the policy
// and the metric handles).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "admission/node_admission.h"
#include "common/metrics.h"
#include "common/periodic_worker.h"
#include "rpc/channel_pool.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::node {

class KvAdmission {
 public:
  KvAdmission(uint32_t node_id, admission::NodeAdmissionOptions options, metrics::Registry& metrics);
  ~KvAdmission() { Stop(); }
  KvAdmission(const KvAdmission&) = delete;
  KvAdmission& operator=(const KvAdmission&) = delete;

  // Starts polling `meta_ids` through `pool` (contract 1); none: no
  // polling. `gac_ids`: the GAC instances in layout order (contract 4).
  void Start(std::shared_ptr<rpc::ChannelPool> pool, std::vector<uint32_t> meta_ids,
             std::vector<uint32_t> gac_ids = {});
  // Ends polling and lets go of the channel pool (before its owner drops it).
  void Stop() {
    poller_.Stop();
    pool_.reset();
  }

  // Applies one meta.tables answer (contract 1); public for tests.
  void ApplyTables(const pb::TablesResponse& tables);

  admission::Admission Admit(uint64_t group_id, admission::CapacityKind kind, double units);
  // `units` more for a request `a` admitted (a read's size once served).
  void Charge(uint64_t group_id, admission::CapacityKind kind, const admission::Admission& a,
              double units);
  void Return(uint64_t group_id, admission::CapacityKind kind, const admission::Admission& a);
  // What admission sees of a partition (NodeAdmission::Load): the
  // leader's consumption, boost and caps in admin.status.
  std::optional<admission::PartitionLoad> Load(uint64_t group_id);

 private:
  struct Series {
    metrics::Counter* admitted = nullptr;
    metrics::Counter* throttled = nullptr;
    metrics::Counter* units = nullptr;
    metrics::Counter* burst_units = nullptr;
    metrics::Gauge* rate = nullptr;
    double units_fraction = 0;  // charged, not yet counted as a whole unit
    double burst_fraction = 0;
  };
  void PollOnce();
  void AdaptFromGac();  // contract 4, poller thread
  // One rpc call, waited for (bounded) on the poller thread.
  Result<std::string> CallAndWait(uint32_t peer, std::string_view method, std::string payload);
  Series& SeriesOf(uint64_t group_id, admission::CapacityKind kind);  // under mu_
  static void Count(metrics::Counter& counter, double& fraction, double units);

  const uint32_t node_id_;
  metrics::Registry& metrics_;
  metrics::Counter& poll_failures_;
  std::shared_ptr<rpc::ChannelPool> pool_;
  std::vector<uint32_t> meta_ids_;
  std::vector<uint32_t> gac_ids_;
  size_t next_meta_ = 0;  // poller thread only
  PeriodicWorker poller_;

  std::mutex mu_;  // guards policy_ and series_
  admission::NodeAdmission policy_;
  std::map<std::pair<uint64_t, admission::CapacityKind>, Series> series_;
};

}  // namespace tessera::node
