// Internal to src/s3/model: the multipart upload ops (contract as
// ApplyS3Op in object_ops.h; records in docs/formats/s3-keys.md).
//  - CreateUpload writes the upload record.
//  - UploadPart needs the upload; a part number sent again replaces the
//    earlier part (its blobs go to GC). Refused parts' blobs go to GC too.
//  - Uploads created with a checksum algorithm: every part must carry that
//    checksum (else INVALID_REQUEST, blobs to GC); CompleteUpload must name
//    the same algorithm, each listed part's checksum must equal the stored
//    one (else INVALID_PART), and the object's only checksum is the op's
//    composite checksum (computed by the router from the listed values).
//  - CompleteUpload checks the listed parts in one pass, in order (ascending
//    numbers, each present with the listed etag, all but the last at least
//    min_part_bytes), concatenates their blobs with an offset index into
//    one object version (WriteNewObject), and drops the upload and every
//    part record (unlisted parts' blobs go to GC). Cost: linear in the
//    number of parts. Sent again once the upload is gone, it answers OK
//    with the object it made (and writes nothing) while that object is
//    still the key's latest version with the same etag, as S3 does for a
//    retried request; NO_SUCH_UPLOAD otherwise.
//  - AbortUpload drops the upload and its parts (blobs to GC).
#pragma once

#include <cstdint>

#include "common/result.h"
#include "s3/model/state_access.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::model {

Result<pb::S3OpResult> ApplyCreateUpload(const pb::CreateUploadOp& op, uint64_t slot,
                                         StateAccess& state);
Result<pb::S3OpResult> ApplyUploadPart(const pb::UploadPartOp& op, uint64_t slot,
                                       StateAccess& state);
Result<pb::S3OpResult> ApplyCompleteUpload(const pb::CompleteUploadOp& op, uint64_t slot,
                                           StateAccess& state);
Result<pb::S3OpResult> ApplyAbortUpload(const pb::AbortUploadOp& op, uint64_t slot,
                                        StateAccess& state);

}  // namespace tessera::s3::model
