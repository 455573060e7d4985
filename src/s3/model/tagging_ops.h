// Internal to src/s3/model: SetTags (PutObjectTagging, DeleteObjectTagging)
// and SetObjectAcl (PutObjectAcl), the ops that change one sub-resource of
// one version (contract as ApplyS3Op in object_ops.h).
//  - The version addressed is the latest (empty version_id) or the one
//    named; "null" names the null version. NO_SUCH_KEY when the key has no
//    version at all, NO_SUCH_VERSION when the named one does not exist,
//    DELETE_MARKER when it is a delete marker (S3 answers 405).
//  - The version's tags become op.tags (SetObjectAcl: its ACL op.acl); its head copy (when it is the
//    latest) and its version record (when it has one) change together.
//    Usage and GC do not change. Sent twice, the second changes nothing.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "s3/model/state_access.h"
#include "tessera/s3.pb.h"

namespace tessera::s3::model {

Result<pb::S3OpResult> ApplySetTags(const pb::SetTagsOp& op, uint64_t slot, StateAccess& state);
Result<pb::S3OpResult> ApplySetObjectAcl(const pb::SetObjectAclOp& op, uint64_t slot,
                                         StateAccess& state);

}  // namespace tessera::s3::model
