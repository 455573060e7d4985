// The S3 operations applied by a partition's state machine: one S3Op per
// log entry, applied atomically and deterministically on every replica
// (docs/formats/s3-keys.md, "Operations").
//
// Contract of ApplyS3Op:
//  1. Deterministic: the result and the writes depend only on the op, the
//     slot and the state read through `state` (no clocks, no randomness:
//     times and ids come in the op or from the slot).
//  2. All or nothing: on any outcome the op's writes are complete and
//     consistent (head, version records, usage, GC); a storage error is
//     returned as a Status and the caller discards the whole batch.
//  3. Nothing leaks: every blob an op stops referencing — including the new
//     blobs of a put that fails its precondition — is listed in a GcRecord
//     written at GcKey(slot) by the same op.
//  4. Usage: the bucket's BucketUsage record of this partition changes by
//     exactly what the op changed (objects whose latest version is not a
//     delete marker; bytes of every stored version).
#pragma once

#include <cstdint>

#include "common/result.h"
#include "s3/model/state_access.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::model {

Result<pb::S3OpResult> ApplyS3Op(const pb::S3Op& op, uint64_t slot, StateAccess& state);

}  // namespace tessera::s3::model
