#include "node/blob_gc.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/wait_for.h"
#include "node/gc_check.h"

namespace tessera::node {
namespace {

constexpr const char* kS3Table = "_s3";
// Longest wait for one step (a read, a chunk of deletes, a GcDone write);
// every callback comes by its own timeout well before.
constexpr std::chrono::milliseconds kStepWait{30'000};

struct Deleted {
  std::set<std::string> ids;   // deleted or absent on every replica
  uint64_t copies_removed = 0;  // files actually removed, over all ids
};

// Deletes `ids` on every replica, at most kGcDeletesInflightMax at a time;
// answers those every replica confirmed and the copies removed.
Deleted DeleteEverywhere(blob::BlobClient& blobs, const std::vector<std::string>& ids,
                         metrics::Counter& errors) {
  Deleted done;
  for (size_t begin = 0; begin < ids.size(); begin += limits::kGcDeletesInflightMax) {
    const size_t end = std::min(ids.size(), begin + limits::kGcDeletesInflightMax);
    struct Tally {
      std::mutex mu;  // guards deleted and left
      Deleted deleted;
      size_t left = 0;
    };
    auto tally = std::make_shared<Tally>();
    auto result = WaitFor<Deleted>(kStepWait, [&](auto finish) {
      tally->left = end - begin;
      for (size_t i = begin; i < end; ++i) {
        auto id = blob::BlobId::Parse(ids[i]);
        auto answer = [tally, finish, text = ids[i]](const Result<blob::BlobClient::DeleteOutcome>& r) {
          std::unique_lock lock(tally->mu);
          if (r.ok()) {
            tally->deleted.ids.insert(text);
            tally->deleted.copies_removed += r->copies_removed;
          }
          if (--tally->left > 0) return;
          Deleted deleted = tally->deleted;
          lock.unlock();
          finish(std::move(deleted));
        };
        // A malformed id names no file anywhere: retiring it is safe.
        if (!id.ok()) {
          answer(blob::BlobClient::DeleteOutcome{});
          continue;
        }
        blobs.Delete(*id, answer);
      }
    });
    if (!result) {
      errors.Increment();
      continue;
    }
    errors.Increment(end - begin - result->ids.size());
    done.ids.insert(result->ids.begin(), result->ids.end());
    done.copies_removed += result->copies_removed;
  }
  return done;
}

}  // namespace

struct BlobGc::Metrics {
  explicit Metrics(metrics::Registry& r)
      : records(r.GetCounter("tessera_s3_gc_records_total", "GC records fully retired")),
        copies_deleted(r.GetCounter("tessera_s3_gc_blob_copies_deleted_total",
                                    "Blob files the GC removed (one per replica that held a copy)")),
        blobs_retired(r.GetCounter("tessera_s3_gc_blobs_retired_total",
                                   "Blobs the GC confirmed absent on every replica and retired")),
        referenced(r.GetCounter("tessera_s3_gc_referenced_skipped_total",
                                "Blobs in GC records still referenced (kept; a bug elsewhere)")),
        errors(r.GetCounter("tessera_s3_gc_errors_total",
                            "GC steps that failed (retried in a later round)")),
        checked_at_owner(r.GetCounter("tessera_s3_gc_checked_at_owner_total",
                                      "GC records checked at their owner's group (moved by a split)")) {}
  metrics::Counter& records;
  metrics::Counter& copies_deleted;
  metrics::Counter& blobs_retired;
  metrics::Counter& referenced;
  metrics::Counter& errors;
  metrics::Counter& checked_at_owner;
};

BlobGc::BlobGc(ReplicationHost& replication, blob::BlobClient& blobs, RoutedOwnerRefs* owner_refs,
               metrics::Registry& metrics, BlobGcOptions options)
    : replication_(replication),
      blobs_(blobs),
      owner_refs_(owner_refs),
      options_(options),
      metrics_(std::make_unique<Metrics>(metrics)) {}

BlobGc::~BlobGc() { Stop(); }

void BlobGc::Start() {
  worker_.Start("blob-gc", options_.interval_ms, [this] { RunRound(); });
}

void BlobGc::Stop() { worker_.Stop(); }

size_t BlobGc::RunRound() {
  map_refreshed_ = false;
  size_t retired = 0;
  for (const HostedGroup& group : replication_.Groups()) {
    if (group.descriptor.table() != kS3Table) continue;
    if (worker_.stopping()) break;
    retired += CollectGroup(group.descriptor.group_id());
  }
  return retired;
}

size_t BlobGc::CollectGroup(uint64_t group_id) {
  std::shared_ptr<GroupHost> host = replication_.Find(group_id);
  if (!host) return 0;
  using Checked = Result<std::vector<CheckedGcRecord>>;
  auto checked = WaitFor<Checked>(kStepWait, [&](auto finish) {
    host->ReadState(pb::CONSISTENCY_STRONG, [finish](Result<const PartitionStateMachine*> state) {
      if (!state.ok()) return finish(Checked(state.status()));
      finish(CheckGcRecords(**state));
    });
  });
  if (!checked || !checked->ok()) {
    // Followers answer NotLeader: not this node's partition to collect.
    if (checked && checked->status().code() != StatusCode::kNotLeader) metrics_->errors.Increment();
    return 0;
  }
  size_t retired = 0;
  for (CheckedGcRecord& record : **checked) {
    if (record.at_owner && !CheckOwnerElsewhere(record)) continue;  // kept for a later round
    const Deleted deleted = DeleteEverywhere(blobs_, record.unreferenced, metrics_->errors);
    metrics_->copies_deleted.Increment(deleted.copies_removed);
    for (const std::string& id : record.referenced) {
      spdlog::warn("s3.gc_blob_still_referenced group={} slot={} blob={}", group_id, record.gc_slot, id);
    }
    pb::KvCommand command;
    pb::GcDoneOp* done = command.mutable_s3()->mutable_gc_done();
    done->set_gc_slot(record.gc_slot);
    for (const std::string& id : record.referenced) done->add_blob_ids(id);
    for (const std::string& id : deleted.ids) done->add_blob_ids(id);
    if (done->blob_ids_size() == 0) continue;
    auto written = WaitFor<Result<pb::KvApplyResult>>(kStepWait, [&](auto finish) {
      host->Write(std::move(command), finish);
    });
    if (!written || !written->ok()) {
      metrics_->errors.Increment();
      continue;  // the deletes are done; a later round finds the blobs absent
    }
    metrics_->blobs_retired.Increment(deleted.ids.size());
    metrics_->referenced.Increment(record.referenced.size());
    if (deleted.ids.size() == record.unreferenced.size()) {
      metrics_->records.Increment();
      ++retired;
    }
  }
  return retired;
}

// The owner rule (gc_check.h rule 2): the partition map is read once per
// round, when the first moved owner shows up.
bool BlobGc::CheckOwnerElsewhere(CheckedGcRecord& record) {
  if (!owner_refs_) return false;
  if (!map_refreshed_) {
    map_refreshed_ = true;
    const Status refreshed = owner_refs_->Refresh();
    if (!refreshed.ok()) {
      metrics_->errors.Increment();
      spdlog::warn("s3.gc_map_unavailable status=\"{}\"", refreshed.ToString());
    }
  }
  if (!owner_refs_->has_map()) return false;
  if (CheckAtOwner(*owner_refs_, record)) {
    metrics_->checked_at_owner.Increment();
    return true;
  }
  metrics_->errors.Increment();
  return false;
}

}  // namespace tessera::node
