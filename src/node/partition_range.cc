#include "node/partition_range.h"

#include <algorithm>

#include "s3/model/s3_keys.h"

namespace tessera::node {
namespace {

// The record an S3 op is about: its object's prefix `B K`, or the bucket's
// configuration record; nullopt for ops on neither (GcDoneOp edits the
// partition's internal records).
template <typename Op>
std::string PrefixOf(const Op& op) {
  return s3::model::ObjectPrefix(op.bucket_id(), op.key());
}

// The object prefix of an op on an object; nullopt for every other op.
std::optional<std::string> ObjectOpPrefix(const pb::S3Op& op) {
  switch (op.op_case()) {
    case pb::S3Op::kPutObject: return PrefixOf(op.put_object());
    case pb::S3Op::kDeleteObject: return PrefixOf(op.delete_object());
    case pb::S3Op::kCreateUpload: return PrefixOf(op.create_upload());
    case pb::S3Op::kUploadPart: return PrefixOf(op.upload_part());
    case pb::S3Op::kCompleteUpload: return PrefixOf(op.complete_upload());
    case pb::S3Op::kAbortUpload: return PrefixOf(op.abort_upload());
    case pb::S3Op::kSetTags: return PrefixOf(op.set_tags());
    case pb::S3Op::kSetObjectAcl: return PrefixOf(op.set_object_acl());
    case pb::S3Op::kSetBucketConfig:
    case pb::S3Op::kGcDone:
    case pb::S3Op::OP_NOT_SET: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> ObjectPrefixOf(const pb::S3Op& op) {
  if (op.has_set_bucket_config()) return s3::model::BucketConfigKey(op.set_bucket_config().bucket_id());
  return ObjectOpPrefix(op);
}

bool S3OpInRange(const pb::PartitionDescriptor& partition, const pb::S3Op& op) {
  const std::optional<std::string> prefix = ObjectPrefixOf(op);
  return !prefix || KeyInRange(partition, *prefix);
}

bool BatchInRange(const pb::PartitionDescriptor& partition, const pb::KvBatch& batch) {
  for (const pb::KvCondition& c : batch.conditions()) {
    if (!KeyInRange(partition, c.key())) return false;
  }
  for (const pb::KvWrite& w : batch.writes()) {
    if (!KeyInRange(partition, w.key())) return false;
  }
  return true;
}

// An exclusive end bound (empty: to the end of the key space) that does
// not reach past the range.
bool EndInRange(const pb::PartitionDescriptor& partition, const std::string& end_key) {
  if (partition.end_key().empty()) return true;
  return !end_key.empty() && end_key <= partition.end_key();
}

}  // namespace

bool KeyInRange(const pb::PartitionDescriptor& partition, std::string_view key) {
  if (key < partition.start_key()) return false;
  return partition.end_key().empty() || key < partition.end_key();
}

bool ScanInRange(const pb::PartitionDescriptor& partition, const pb::KvScanRequest& scan) {
  return KeyInRange(partition, scan.start_key()) && EndInRange(partition, scan.end_key());
}

bool CommandInRange(const pb::PartitionDescriptor& partition, const pb::KvCommand& command) {
  return command.has_s3() ? S3OpInRange(partition, command.s3())
                          : BatchInRange(partition, command.batch());
}

bool WriteInRange(const pb::PartitionDescriptor& partition, const pb::KvWriteRequest& write) {
  return write.has_s3() ? S3OpInRange(partition, write.s3()) : BatchInRange(partition, write.batch());
}

bool S3GetInRange(const pb::PartitionDescriptor& partition, const pb::S3GetRequest& get) {
  return KeyInRange(partition, s3::model::ObjectPrefix(get.bucket_id(), get.key()));
}

bool S3ListInRange(const pb::PartitionDescriptor& partition, const pb::S3ListRequest& list) {
  return EndInRange(partition, list.end_key());
}

std::optional<std::string> S3LoadKey(const pb::S3Op& op) { return ObjectOpPrefix(op); }

std::string S3LoadKey(const pb::S3GetRequest& get) {
  return s3::model::ObjectPrefix(get.bucket_id(), get.key());
}

std::string S3LoadKey(const pb::S3ListRequest& list) {
  std::string_view from = std::max<std::string_view>(list.prefix(), list.start_after());
  from = from.substr(0, from.find('\0'));
  return s3::model::ObjectPrefix(list.bucket_id(), from);
}

}  // namespace tessera::node
