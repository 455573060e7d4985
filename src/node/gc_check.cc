#include "node/gc_check.h"

#include <spdlog/spdlog.h>

#include <set>

#include "common/limits.h"
#include "node/s3_blob_refs.h"
#include "s3/model/blob_refs.h"
#include "s3/model/gc_ops.h"
#include "s3/model/s3_keys.h"

namespace tessera::node {
namespace {

void Partition(CheckedGcRecord& record, const std::set<std::string>& referenced) {
  record.referenced.clear();
  record.unreferenced.clear();
  for (const std::string& id : record.blob_ids) {
    (referenced.count(id) ? record.referenced : record.unreferenced).push_back(id);
  }
}

}  // namespace

Result<std::vector<CheckedGcRecord>> CheckGcRecords(const PartitionStateMachine& state) {
  const PartitionRecords records(state);
  auto pending = s3::model::ReadGcRecords(records, limits::kGcRecordsPerRoundMax);
  if (!pending.ok()) return pending.status();
  std::vector<CheckedGcRecord> out;
  for (const s3::model::PendingGc& gc : *pending) {
    const std::set<std::string> ids(gc.record.blob_ids().begin(), gc.record.blob_ids().end());
    CheckedGcRecord checked;
    checked.gc_slot = gc.gc_slot;
    checked.blob_ids.assign(ids.begin(), ids.end());
    std::set<std::string> referenced;
    // Bucket 0 never holds objects (a refused op's blobs): nothing to check.
    if (gc.record.bucket_id() != s3::model::kInternalBucketId) {
      checked.owner = s3::model::ObjectPrefix(gc.record.bucket_id(), gc.record.key());
      const Status here = OwnerInRange(state, checked.owner);
      if (here.code() == StatusCode::kWrongPartition) {
        checked.at_owner = true;  // rule 2
        out.push_back(std::move(checked));
        continue;
      }
      auto refs = here.ok() ? s3::model::ReferencedAmong(records, checked.owner, ids,
                                                         limits::kBlobRefsScanRowsMax)
                            : Result<std::set<std::string>>(here);
      if (!refs.ok()) {
        spdlog::warn("s3.gc_check_failed slot={} status=\"{}\"", gc.gc_slot, refs.status().ToString());
        continue;  // kept for a later round
      }
      referenced = std::move(refs).value();
    }
    Partition(checked, referenced);
    out.push_back(std::move(checked));
  }
  return out;
}

bool CheckAtOwner(OwnerRefs& refs, CheckedGcRecord& record) {
  auto referenced = refs.Referenced(record.owner, record.blob_ids);
  if (!referenced.ok()) {
    spdlog::info("s3.gc_owner_unanswered slot={} status=\"{}\"", record.gc_slot,
                 referenced.status().ToString());
    return false;  // rule 3
  }
  Partition(record, *referenced);
  record.at_owner = false;
  return true;
}

}  // namespace tessera::node
