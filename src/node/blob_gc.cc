#include "node/blob_gc.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/wait_for.h"
#include "node/s3_blob_refs.h"
#include "s3/model/blob_refs.h"
#include "s3/model/gc_ops.h"
#include "s3/model/s3_keys.h"

namespace tessera::node {
namespace {

constexpr const char* kS3Table = "_s3";
// Longest wait for one step (a read, a chunk of deletes, a GcDone write);
// every callback comes by its own timeout well before.
constexpr std::chrono::milliseconds kStepWait{30'000};

// One GC record, verified on the leader: which of its blobs are still
// referenced (kept) and which may go.
struct CheckedRecord {
  uint64_t gc_slot = 0;
  std::vector<std::string> referenced;
  std::vector<std::string> unreferenced;
};

// On the group's strand: the first GC records and their references.
Result<std::vector<CheckedRecord>> CheckRecords(const PartitionStateMachine& state) {
  const PartitionRecords records(state);
  auto pending = s3::model::ReadGcRecords(records, limits::kGcRecordsPerRoundMax);
  if (!pending.ok()) return pending.status();
  std::vector<CheckedRecord> out;
  for (const s3::model::PendingGc& gc : *pending) {
    const std::set<std::string> ids(gc.record.blob_ids().begin(), gc.record.blob_ids().end());
    std::set<std::string> referenced;
    // Bucket 0 never holds objects (a refused op's blobs): nothing to check.
    if (gc.record.bucket_id() != s3::model::kInternalBucketId) {
      auto refs = s3::model::ReferencedAmong(
          records, s3::model::ObjectPrefix(gc.record.bucket_id(), gc.record.key()), ids,
          limits::kBlobRefsScanRowsMax);
      if (!refs.ok()) {
        spdlog::warn("s3.gc_check_failed slot={} status=\"{}\"", gc.gc_slot, refs.status().ToString());
        continue;  // kept for a later round
      }
      referenced = std::move(refs).value();
    }
    CheckedRecord checked;
    checked.gc_slot = gc.gc_slot;
    for (const std::string& id : ids) {
      (referenced.count(id) ? checked.referenced : checked.unreferenced).push_back(id);
    }
    out.push_back(std::move(checked));
  }
  return out;
}

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
                            "GC steps that failed (retried in a later round)")) {}
  metrics::Counter& records;
  metrics::Counter& copies_deleted;
  metrics::Counter& blobs_retired;
  metrics::Counter& referenced;
  metrics::Counter& errors;
};

BlobGc::BlobGc(ReplicationHost& replication, blob::BlobClient& blobs, metrics::Registry& metrics,
               BlobGcOptions options)
    : replication_(replication),
      blobs_(blobs),
      options_(options),
      metrics_(std::make_unique<Metrics>(metrics)) {}

BlobGc::~BlobGc() { Stop(); }

void BlobGc::Start() {
  worker_.Start("blob-gc", options_.interval_ms, [this] { RunRound(); });
}

void BlobGc::Stop() { worker_.Stop(); }

size_t BlobGc::RunRound() {
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
  using Checked = Result<std::vector<CheckedRecord>>;
  auto checked = WaitFor<Checked>(kStepWait, [&](auto finish) {
    host->ReadState(pb::CONSISTENCY_STRONG, [finish](Result<const PartitionStateMachine*> state) {
      if (!state.ok()) return finish(Checked(state.status()));
      finish(CheckRecords(**state));
    });
  });
  if (!checked || !checked->ok()) {
    // Followers answer NotLeader: not this node's partition to collect.
    if (checked && checked->status().code() != StatusCode::kNotLeader) metrics_->errors.Increment();
    return 0;
  }
  size_t retired = 0;
  for (const CheckedRecord& record : **checked) {
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

}  // namespace tessera::node
