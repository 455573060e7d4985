// SlotMapRefresher: keeps a BlobClient's slot map current with the blob
// slot assignments the autoadmin writes to meta (docs/formats/blobs.md,
// "Slot map"; meta key "a/blob_slots").
//
// Contract: every interval_ms (constant work, whatever changed) it asks one
// metadata replica, in rotation, for meta.blob_slots. An answer whose
// version is above the installed map's is applied to the layout's map
// (`base`) and installed (BlobClient::SetSlotMap); an older or equal version
// changes nothing (a lagging meta follower never moves a map back). An
// assignment that does not apply to `base` (a node the layout does not
// know, a wrong replica count) is refused, logged and counted: the map in
// use stays. The map also names the storage nodes added to the cluster
// beyond the layout (cluster/added_nodes.h): their addresses are set in
// `pool` before the map is installed, so every process that polls the map
// can reach a new node as soon as a slot or a partition names it.
//
// Metrics: tessera_blob_slot_map_version (gauge), and
// tessera_blob_slot_map_refresh_errors_total.
//
// Thread safety: Start/Stop from one owner thread; RefreshOnce from any one
// thread at a time (the refresher's own once started). Everything passed to
// the constructor must outlive it.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "blob/blob_client.h"
#include "blob/blob_slot_map.h"
#include "common/metrics.h"
#include "common/periodic_worker.h"
#include "common/result.h"
#include "rpc/channel_pool.h"

namespace tessera::blob {

class SlotMapRefresher {
 public:
  // One poll a second: a moved slot reaches every process within about a
  // second, for one small call per process per second.
  static constexpr uint32_t kIntervalMsDefault = 1000;

  // `meta_ids`: the metadata replicas' process ids, addresses set in `pool`.
  SlotMapRefresher(rpc::ChannelPool& pool, std::vector<uint32_t> meta_ids, BlobSlotMap base,
                   BlobClient& client, metrics::Registry& metrics, uint32_t interval_ms);
  ~SlotMapRefresher();  // Stop
  SlotMapRefresher(const SlotMapRefresher&) = delete;
  SlotMapRefresher& operator=(const SlotMapRefresher&) = delete;

  void Start();  // nothing when interval_ms is 0
  void Stop();   // idempotent

  // One refresh on the calling thread: the installed map's version after it,
  // or why no replica answered / the answer was refused.
  Result<uint64_t> RefreshOnce();

 private:
  Result<pb::BlobSlotAssignments> Fetch();

  rpc::ChannelPool& pool_;
  const std::vector<uint32_t> meta_ids_;
  const BlobSlotMap base_;
  BlobClient& client_;
  metrics::Gauge& version_gauge_;
  metrics::Counter& errors_;
  const uint32_t interval_ms_;
  size_t next_meta_ = 0;
  PeriodicWorker worker_;  // last: joined before the members it uses go
};

}  // namespace tessera::blob
