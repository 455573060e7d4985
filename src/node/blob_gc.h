// BlobGc: a storage node's garbage collector of blobs (issue 5 "Space";
// docs/formats/blobs.md, "Garbage collection and repair"; decision D20).
//
// Every interval, for each `_s3` partition this node currently leads (a
// STRONG read succeeds only under the leader's lease):
//  1. read at most kGcRecordsPerRoundMax GC records (`0 'g' slot`), and in
//     the same read, for each record, which of its blobs a record of its
//     owner (bucket id + key) still references;
//  2. delete every other blob on all replicas of its slot, this node's
//     own copy included (the node's pool has a channel to the node itself;
//     BlobClient::Delete answers OK only when every replica itself
//     confirmed the blob deleted or absent, and a replica it cannot reach,
//     for want of a channel or otherwise, keeps the blob in the record);
//  3. propose GcDoneOp{slot, deleted + still referenced} through the group,
//     which retires those ids and the record once empty. A blob whose
//     delete failed (a replica down) stays in the record for a later round.
// Referenced blobs are dropped from the record without being deleted: they
// indicate a bug elsewhere, or a retried put that named them again
// (counted, logged).
//
// The owner rule (gc_check.h): a record whose owner a split moved out of
// the group's range is checked at the owner's current group through
// RoutedOwnerRefs (partition map read once per round when needed); no
// answer keeps the record whole for a later round, never deletes.
//
// Metrics: tessera_s3_gc_records_total (records fully retired),
// tessera_s3_gc_blob_copies_deleted_total (files actually removed, counted
// when removed), tessera_s3_gc_blobs_retired_total (blobs confirmed gone on
// every replica and retired from their record),
// tessera_s3_gc_referenced_skipped_total, tessera_s3_gc_errors_total,
// tessera_s3_gc_checked_at_owner_total (records checked at another group).
//
// Thread safety: the rounds run on the collector's own thread and block on
// the group and blob callbacks; Start/Stop from one thread. The replication
// host, the blob client and the owner refs must outlive the collector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "blob/blob_client.h"
#include "common/limits.h"
#include "common/metrics.h"
#include "common/periodic_worker.h"
#include "knobs/knobs.h"
#include "node/gc_check.h"
#include "node/owner_refs.h"
#include "node/replication_host.h"

namespace tessera::node {

struct BlobGcOptions {
  uint32_t interval_ms = knobs::kNodeGcIntervalMs.default_value;  // 0: no collector thread
};

class BlobGc {
 public:
  // `owner_refs` may be null: records of moved owners are then kept.
  BlobGc(ReplicationHost& replication, blob::BlobClient& blobs, RoutedOwnerRefs* owner_refs,
         metrics::Registry& metrics, BlobGcOptions options);
  ~BlobGc();  // Stop
  BlobGc(const BlobGc&) = delete;
  BlobGc& operator=(const BlobGc&) = delete;

  // Starts the collector thread (nothing when interval_ms is 0).
  void Start();
  // Ends the current round early and joins the thread. Idempotent.
  void Stop();

  // One round on the calling thread (tests); the number of GC records
  // fully retired.
  size_t RunRound();

 private:
  struct Metrics;
  struct Work;
  size_t CollectGroup(uint64_t group_id);
  bool CheckOwnerElsewhere(CheckedGcRecord& record);

  ReplicationHost& replication_;
  blob::BlobClient& blobs_;
  RoutedOwnerRefs* const owner_refs_;
  bool map_refreshed_ = false;  // this round (collector thread only)
  const BlobGcOptions options_;
  std::unique_ptr<Metrics> metrics_;
  PeriodicWorker worker_;  // last: stopped (joined) before the members it uses go
};

}  // namespace tessera::node
