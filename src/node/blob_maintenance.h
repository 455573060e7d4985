// BlobMaintenance: a storage node's orphan sweeper and repairer of its own
// blob copies (issue 5 "Space"; docs/formats/blobs.md, "Garbage collection
// and repair"; decision D20).
//
// Each round examines the next page (kBlobSweepBlobsPerRoundMax) of the
// node's BlobStore, in id order, wrapping around at the end. For each blob
// whose file is older than min_age_s:
//  * empty owner (format-1 files): never touched, counted;
//  * otherwise it asks the leader of the `_s3` partition holding the owner
//    (RoutedOwnerRefs, owner_refs.h: partition map from meta.tables once
//    per round; a group the owner moved out of by a split answers
//    WrongPartition, never "unreferenced") whether a record of the owner
//    references the blob:
//    - referenced: every other replica of the blob's slot must hold it
//      (blob.stat); one that lacks it (or holds a bad copy) gets this
//      node's copy (blob.put to that node, same owner);
//    - unreferenced and older than orphan_grace_s: this node deletes its
//      own copy (every holder sweeps its own, so all copies go);
//    - no answer: nothing happens this round.
// A replica that fails once in a round is skipped for the rest of it.
//
// Metrics: tessera_blob_scanned_total, tessera_blob_orphans_deleted_total,
// tessera_blob_repaired_total, tessera_blob_repair_errors_total,
// tessera_blob_handed_off_total,
// tessera_blob_legacy_owner_total, tessera_blob_sweep_errors_total.
//
// Thread safety: rounds run on the sweeper's own thread and block on rpc
// callbacks; Start/Stop from one thread. Everything passed to the
// constructor must outlive the sweeper.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "blob/blob_client.h"
#include "blob/blob_store.h"
#include "common/limits.h"
#include "common/metrics.h"
#include "common/periodic_worker.h"
#include "knobs/knobs.h"
#include "node/owner_refs.h"
#include "node/replication_host.h"
#include "rpc/channel_pool.h"
#include "tessera/cluster_rpc.pb.h"
#include "tessera/s3.pb.h"

namespace tessera::node {

struct BlobSweepOptions {
  uint32_t interval_ms = knobs::kNodeBlobSweepIntervalMs.default_value;  // 0: no sweeper thread
  uint32_t min_age_s = knobs::kNodeBlobMinAgeS.default_value;
  uint32_t orphan_grace_s = knobs::kNodeOrphanGraceS.default_value;
};

class BlobMaintenance {
 public:
  // `pool` must know the addresses of the other storage nodes and of
  // `meta_ids` (the metadata replicas).
  BlobMaintenance(uint32_t self_id, ReplicationHost& replication, blob::BlobStore& store,
                  blob::BlobClient& blobs, rpc::ChannelPool& pool, std::vector<uint32_t> meta_ids,
                  metrics::Registry& metrics, BlobSweepOptions options);
  ~BlobMaintenance();  // Stop
  BlobMaintenance(const BlobMaintenance&) = delete;
  BlobMaintenance& operator=(const BlobMaintenance&) = delete;

  void Start();  // nothing when interval_ms is 0
  void Stop();   // idempotent

  // One round on the calling thread (tests). True when it reached the end
  // of the store (the next round starts over).
  bool RunRound();

 private:
  struct Metrics;
  struct Round;
  void Examine(Round& round, const std::vector<blob::BlobListEntry>& entries);
  void Repair(const blob::BlobListEntry& entry);

  const uint32_t self_id_;
  ReplicationHost& replication_;
  blob::BlobStore& store_;
  blob::BlobClient& blobs_;
  RoutedOwnerRefs owner_refs_;  // the map and the failed replicas of the round
  const BlobSweepOptions options_;
  std::unique_ptr<Metrics> metrics_;
  // Where the next round starts (sweeper thread only).
  uint32_t cursor_slot_ = 0;
  std::optional<blob::BlobId> cursor_after_;
  PeriodicWorker worker_;  // last: stopped (joined) before the members it uses go
};

}  // namespace tessera::node
