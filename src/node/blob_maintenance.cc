#include "node/blob_maintenance.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>

#include "common/fault_clock.h"
#include "common/wait_for.h"

namespace tessera::node {
namespace {

// Longest wait for one blob stat or put of a repair.
constexpr std::chrono::milliseconds kStepWait{30'000};

// The wall clock with the process's injected offset (admin.faults
// clock_offset_ms), compared with blob files' mtimes.
int64_t NowMs() { return fault_clock::WallNowMs(); }

}  // namespace

struct BlobMaintenance::Metrics {
  explicit Metrics(metrics::Registry& r)
      : scanned(r.GetCounter("tessera_blob_scanned_total", "Blob copies the sweeper examined")),
        orphans_deleted(r.GetCounter("tessera_blob_orphans_deleted_total",
                                     "Unreferenced blob copies the sweeper deleted")),
        repaired(r.GetCounter("tessera_blob_repaired_total",
                              "Missing or damaged blob copies restored on another replica")),
        repair_errors(r.GetCounter("tessera_blob_repair_errors_total",
                                   "Blob copies the repairer could not check or restore")),
        handed_off(r.GetCounter("tessera_blob_handed_off_total",
                                "Blob copies deleted here once the slot's new replicas held them")),
        legacy(r.GetCounter("tessera_blob_legacy_owner_total",
                            "Blob copies without an owner (format 1): never swept")),
        errors(r.GetCounter("tessera_blob_sweep_errors_total",
                            "Sweeper steps that failed (partition map, reference reads, deletes)")) {}
  metrics::Counter& scanned;
  metrics::Counter& orphans_deleted;
  metrics::Counter& repaired;
  metrics::Counter& repair_errors;
  metrics::Counter& handed_off;
  metrics::Counter& legacy;
  metrics::Counter& errors;
};

// One round's clock (the partition map and the failed replicas live in
// owner_refs_, refreshed each round).
struct BlobMaintenance::Round {
  int64_t now_ms = 0;
};

BlobMaintenance::BlobMaintenance(uint32_t self_id, ReplicationHost& replication,
                                 blob::BlobStore& store, blob::BlobClient& blobs,
                                 rpc::ChannelPool& pool, std::vector<uint32_t> meta_ids,
                                 metrics::Registry& metrics, BlobSweepOptions options)
    : self_id_(self_id),
      replication_(replication),
      store_(store),
      blobs_(blobs),
      owner_refs_(self_id, replication, pool, std::move(meta_ids)),
      options_(options),
      metrics_(std::make_unique<Metrics>(metrics)) {}

BlobMaintenance::~BlobMaintenance() { Stop(); }

void BlobMaintenance::Start() {
  worker_.Start("blob-maint", options_.interval_ms, [this] { RunRound(); });
}

void BlobMaintenance::Stop() { worker_.Stop(); }

bool BlobMaintenance::RunRound() {
  auto page = store_.List(cursor_slot_, cursor_after_, limits::kBlobSweepBlobsPerRoundMax);
  if (!page.ok()) {
    metrics_->errors.Increment();
    return false;
  }
  const bool wrapped = !page->more;
  if (wrapped) {
    cursor_slot_ = 0;
    cursor_after_.reset();
  } else {
    cursor_after_ = page->entries.back().id;
  }
  metrics_->scanned.Increment(page->entries.size());
  Round round;
  round.now_ms = NowMs();
  Examine(round, page->entries);
  return wrapped;
}

// Groups the old enough blobs by owner and handles each owner's at once.
void BlobMaintenance::Examine(Round& round, const std::vector<blob::BlobListEntry>& entries) {
  std::map<std::string, std::vector<const blob::BlobListEntry*>> by_owner;
  for (const blob::BlobListEntry& e : entries) {
    if (e.corrupt || round.now_ms - e.mtime_ms < int64_t{options_.min_age_s} * 1000) continue;
    if (e.owner.empty()) {
      metrics_->legacy.Increment();
      continue;
    }
    by_owner[e.owner].push_back(&e);
  }
  if (by_owner.empty()) return;
  if (!owner_refs_.Refresh().ok()) {
    metrics_->errors.Increment();
    return;
  }
  for (const auto& [owner, blobs] : by_owner) {
    std::vector<std::string> ids;
    for (const blob::BlobListEntry* e : blobs) ids.push_back(e->id.ToString());
    auto refs = owner_refs_.Referenced(owner, ids);
    if (!refs.ok()) {
      metrics_->errors.Increment();
      continue;
    }
    for (const blob::BlobListEntry* e : blobs) {
      if (refs->count(e->id.ToString())) {
        Repair(*e);
      } else if (round.now_ms - e->mtime_ms >= int64_t{options_.orphan_grace_s} * 1000) {
        const Status deleted = store_.Delete(e->id);
        if (deleted.ok()) {
          metrics_->orphans_deleted.Increment();
          spdlog::info("blob.orphan_deleted id={}", e->id.ToString());
        } else if (deleted.code() != StatusCode::kNotFound) {
          metrics_->errors.Increment();
        }
      }
    }
  }
}

// The slot's replicas (the map in force) must hold the blob; copies it to
// those that lack it or hold a damaged copy. A copy on a node that is no
// longer one of the slot's replicas (the autoadmin moved the slot) is
// handed off: deleted once every replica holds the blob.
void BlobMaintenance::Repair(const blob::BlobListEntry& entry) {
  const std::shared_ptr<const blob::BlobSlotMap> map = blobs_.slot_map();
  const std::vector<uint32_t>& replicas = map->ReplicasOf(entry.id.slot);
  const bool mine = std::find(replicas.begin(), replicas.end(), self_id_) != replicas.end();
  bool all_hold = true;
  for (const uint32_t node : replicas) {
    if (node == self_id_) continue;
    if (owner_refs_.failed_nodes().count(node)) {
      all_hold = false;
      continue;
    }
    auto stat = WaitFor<Result<blob::BlobClient::StatInfo>>(kStepWait, [&](auto finish) {
      blobs_.StatNode(node, entry.id, finish);
    });
    if (stat && stat->ok()) continue;
    const StatusCode code = stat ? stat->status().code() : StatusCode::kTimeout;
    if (code != StatusCode::kNotFound && code != StatusCode::kCorruption) {
      owner_refs_.failed_nodes().insert(node);
      metrics_->repair_errors.Increment();
      all_hold = false;
      continue;
    }
    auto local = store_.Read(entry.id, 0, UINT64_MAX);
    if (!local.ok()) {
      metrics_->repair_errors.Increment();
      return;  // our own copy is gone or bad: another holder repairs
    }
    auto put = WaitFor<Status>(kStepWait, [&](auto finish) {
      blobs_.PutNode(node, entry.id, local->owner, std::string(local->data.view()), finish);
    });
    if (put && put->ok()) {
      metrics_->repaired.Increment();
      spdlog::info("blob.repaired id={} to_node={}", entry.id.ToString(), node);
    } else {
      owner_refs_.failed_nodes().insert(node);
      metrics_->repair_errors.Increment();
      all_hold = false;
    }
  }
  if (mine || !all_hold) return;
  const Status deleted = store_.Delete(entry.id);
  if (deleted.ok()) {
    metrics_->handed_off.Increment();
    spdlog::info("blob.handed_off id={} slot_map_version={}", entry.id.ToString(), map->version());
  } else if (deleted.code() != StatusCode::kNotFound) {
    metrics_->errors.Increment();
  }
}

}  // namespace tessera::node
