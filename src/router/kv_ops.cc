#include "router/kv_ops.h"

#include "common/check.h"
#include "common/limits.h"
#include "common/result.h"

namespace tessera::router {
namespace {

bool InRange(const std::string& key, const pb::PartitionDescriptor& p) {
  return key >= p.start_key() && (p.end_key().empty() || key < p.end_key());
}

Status CheckKey(const std::string& key) {
  if (key.size() > limits::kRouterKeyBytesMax) {
    return Status::InvalidArgument("key of " + std::to_string(key.size()) + " bytes exceeds " +
                                   std::to_string(limits::kRouterKeyBytesMax));
  }
  return Status::Ok();
}

}  // namespace

pb::KvBatch SingleKeyBatch(const std::string& key, std::optional<std::string> value,
                           const std::optional<pb::KvCondition>& condition) {
  pb::KvBatch batch;
  if (condition) *batch.add_conditions() = *condition;
  pb::KvWrite* write = batch.add_writes();
  write->set_key(key);
  if (value) {
    write->set_value(std::move(*value));
  } else {
    write->set_delete_(true);
  }
  return batch;
}

Status CheckBatch(const pb::KvBatch& batch) {
  if (batch.writes().empty()) return Status::InvalidArgument("a batch needs at least one write");
  if (static_cast<size_t>(batch.writes_size() + batch.conditions_size()) > limits::kNativeBatchRecordsMax) {
    return Status::InvalidArgument("a batch holds at most " + std::to_string(limits::kNativeBatchRecordsMax) +
                                   " conditions and writes");
  }
  for (const pb::KvCondition& c : batch.conditions()) {
    TESSERA_RETURN_IF_ERROR(CheckKey(c.key()));
    if (c.expect_case() == pb::KvCondition::EXPECT_NOT_SET) {
      return Status::InvalidArgument("a condition needs absent, present or version");
    }
  }
  for (const pb::KvWrite& w : batch.writes()) {
    TESSERA_RETURN_IF_ERROR(CheckKey(w.key()));
    if (w.value().size() > limits::kStateValueBytesMax) return Status::InvalidArgument("value too large");
  }
  return Status::Ok();
}

const std::string& RoutingKey(const pb::KvBatch& batch) {
  TESSERA_CHECK(!batch.writes().empty());
  return batch.writes(0).key();
}

bool BatchInPartition(const pb::KvBatch& batch, const pb::PartitionDescriptor& partition) {
  for (const pb::KvCondition& c : batch.conditions()) {
    if (!InRange(c.key(), partition)) return false;
  }
  for (const pb::KvWrite& w : batch.writes()) {
    if (!InRange(w.key(), partition)) return false;
  }
  return true;
}

}  // namespace tessera::router
