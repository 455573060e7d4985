// Internal to src/s3/model: SetBucketConfig (Put/DeleteBucketCors, PutBucketAcl,
// Put/DeleteBucketPolicy, Put/DeletePublicAccessBlock, and DeleteBucket's
// removal of the record; contract as ApplyS3Op in
// object_ops.h).
//  - The record is BucketConfigKey(bucket_id) (docs/formats/s3-keys.md).
//  - The parts the op names are replaced, the others kept; a record left
//    with every part unset is deleted, as is the whole record with
//    delete_record.
//  - S3_INVALID_REQUEST for bucket id 0 and for a result larger than
//    limits::kS3BucketConfigBytesMax (nothing written). Usage and GC do
//    not change. Sent twice, the second changes nothing.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "s3/model/state_access.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::model {

Result<pb::S3OpResult> ApplySetBucketConfig(const pb::SetBucketConfigOp& op, StateAccess& state);

}  // namespace tessera::s3::model
