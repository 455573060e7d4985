#include "s3/model/bucket_config_ops.h"

#include "common/limits.h"
#include "s3/model/op_context.h"
#include "s3/model/s3_keys.h"

namespace tessera::s3::model {

Result<pb::S3OpResult> ApplySetBucketConfig(const pb::SetBucketConfigOp& op, StateAccess& state) {
  if (op.bucket_id() == kInternalBucketId) {
    return Outcome(pb::S3_INVALID_REQUEST, "bucket id 0 has no configuration");
  }
  const std::string key = BucketConfigKey(op.bucket_id());
  if (op.delete_record()) {
    state.Delete(key);
    return Outcome(pb::S3_OK);
  }
  auto record = ReadRecord<pb::BucketConfig>(state, key, "bucket config");
  if (!record.ok()) return record.status();
  pb::BucketConfig config = record->value_or(pb::BucketConfig());
  if (op.set_cors()) *config.mutable_cors_rules() = op.cors_rules();
  if (op.set_acl()) {
    if (op.has_acl()) {
      *config.mutable_acl() = op.acl();
    } else {
      config.clear_acl();
    }
  }
  if (op.set_ownership_controls()) {
    if (op.has_ownership_controls()) {
      *config.mutable_ownership_controls() = op.ownership_controls();
    } else {
      config.clear_ownership_controls();
    }
  }
  if (op.set_policy()) {
    if (op.has_policy()) {
      config.set_policy(op.policy());
    } else {
      config.clear_policy();
    }
  }
  if (op.set_public_access_block()) {
    if (op.has_public_access_block()) {
      *config.mutable_public_access_block() = op.public_access_block();
    } else {
      config.clear_public_access_block();
    }
  }
  const size_t bytes = config.ByteSizeLong();
  if (bytes == 0) {
    state.Delete(key);
    return Outcome(pb::S3_OK);
  }
  if (bytes > limits::kS3BucketConfigBytesMax) {
    return Outcome(pb::S3_INVALID_REQUEST, "bucket configuration larger than " +
                                               std::to_string(limits::kS3BucketConfigBytesMax) +
                                               " bytes");
  }
  state.Put(key, config.SerializeAsString());
  return Outcome(pb::S3_OK);
}

}  // namespace tessera::s3::model
