// Garbage-collection records of an `_s3` partition (`0 'g' slot`,
// docs/formats/s3-keys.md): reading them (the GC worker's bounded page) and
// the op that retires handled blobs (GcDoneOp).
//
// Thread safety: pure functions over the given state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/result.h"
#include "s3/model/listing.h"  // RecordSource
#include "s3/model/state_access.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::model {

// Removes op.blob_ids from the GC record at op.gc_slot, and deletes the
// record once it holds no blob. Idempotent: an absent record or id is OK.
// Corruption for a record that does not parse.
Result<pb::S3OpResult> ApplyGcDone(const pb::GcDoneOp& op, StateAccess& state);

struct PendingGc {
  uint64_t gc_slot = 0;  // the slot in the record's key
  pb::GcRecord record;
};
// The first `limit` GC records of the partition, oldest slot first.
// Corruption for a record or key that does not parse.
Result<std::vector<PendingGc>> ReadGcRecords(const RecordSource& records, size_t limit);

}  // namespace tessera::s3::model
