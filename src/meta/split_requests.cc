// PartitionAdmin::RequestSplit and Splits: the splits an operator asks for
// (`tessera kv partition split`, meta key "sr/") and the list the
// autoadmin's split driver reads each round (cluster_rpc.proto,
// RequestSplitRequest and SplitsRequest; docs/partition-splits.md).
#include <spdlog/spdlog.h>

#include "common/limits.h"
#include "meta/meta_group_calls.h"
#include "meta/meta_keys.h"
#include "meta/partition_admin.h"
#include "meta/registry_keys.h"
#include "node/split_key.h"

namespace tessera::meta {
namespace {

// The keys with `prefix`: [prefix, prefix with its last byte + 1).
std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  end.back() = static_cast<char>(end.back() + 1);
  return end;
}

Status CheckRequest(const pb::RequestSplitRequest& request, const pb::PartitionDescriptor& holder) {
  if (request.auto_key()) return Status::Ok();
  if (request.key().empty() || request.key().size() > limits::kMetaSplitPointBytesMax) {
    return Status::InvalidArgument("the split key must be 1.." +
                                   std::to_string(limits::kMetaSplitPointBytesMax) + " bytes");
  }
  const bool s3 = request.table() == kS3TableName;
  const node::SplitKeyRules rules{holder.start_key(), holder.end_key(), s3};
  if (!node::SplitKeyAllowed(request.key(), rules)) {
    return Status::InvalidArgument(
        "the split key is the start of partition (group " + std::to_string(holder.group_id()) +
        "), not inside it" + (s3 ? ", or falls inside one object's records (_s3 splits only "
                                   "between objects)" : ""));
  }
  return Status::Ok();
}

}  // namespace

Result<pb::SplitRequestRecord> PartitionAdmin::RequestSplit(const pb::RequestSplitRequest& request,
                                                            const pb::PartitionDescriptor& holder) {
  TESSERA_RETURN_IF_ERROR(CheckRequest(request, holder));
  const std::string group = "group " + std::to_string(holder.group_id());
  const std::string partition_key = PartitionKey(request.table(), holder.start_key());
  auto stored = ReadStrongSync(group_, partition_key);
  if (!stored.ok()) return stored.status();
  pb::PartitionDescriptor parent;
  if (!*stored || !parent.ParseFromString((*stored)->value()) ||
      parent.group_id() != holder.group_id()) {
    return Status::Conflict("the partition map changed meanwhile; retry");
  }
  auto intent = ReadStrongSync(group_, SplitIntentKey(parent.group_id()));
  if (!intent.ok()) return intent.status();
  if (*intent) return Status::Conflict("a split of " + group + " is in progress");
  const std::string request_key = SplitRequestKey(parent.group_id());
  auto existing = ReadStrongSync(group_, request_key);
  if (!existing.ok()) return existing.status();
  pb::SplitRequestRecord record;
  record.set_table(request.table());
  record.set_group_id(parent.group_id());
  record.set_parent_epoch(parent.epoch());
  record.set_parent_start_key(parent.start_key());
  if (!request.auto_key()) record.set_split_key(request.key());
  if (*existing) {
    pb::SplitRequestRecord old;
    if (!old.ParseFromString((*existing)->value())) {
      return Status::Corruption("meta: a requested split record does not parse");
    }
    if (old.split_key() == record.split_key()) return old;
    return Status::Conflict("another split of " + group + " is requested");
  }
  auto pending = ScanStrongSync(group_, std::string(kSplitRequestPrefix),
                                PrefixEnd(kSplitRequestPrefix), limits::kSplitRequestsMax);
  if (!pending.ok()) return pending.status();
  if (static_cast<size_t>(pending->items_size()) >= limits::kSplitRequestsMax) {
    return Status::Throttled(std::to_string(limits::kSplitRequestsMax) +
                             " requested splits are pending; wait for the autoadmin");
  }
  pb::KvBatch batch;
  pb::KvCondition* c = batch.add_conditions();
  c->set_key(partition_key);
  c->set_version((*stored)->version());
  c = batch.add_conditions();
  c->set_key(SplitIntentKey(parent.group_id()));
  c->set_absent(true);
  c = batch.add_conditions();
  c->set_key(request_key);
  c->set_absent(true);
  pb::KvWrite* w = batch.add_writes();
  w->set_key(request_key);
  w->set_value(record.SerializeAsString());
  auto written = WriteSync(group_, std::move(batch));
  if (!written.ok()) return written.status();
  if (!written->applied()) return Status::Conflict("the partition or its splits changed meanwhile; retry");
  spdlog::info("meta.split_requested table={} group={} auto={}", record.table(), record.group_id(),
               record.split_key().empty());
  return record;
}

Result<pb::SplitsResponse> PartitionAdmin::Splits() {
  pb::SplitsResponse out;
  auto intents = ScanStrongSync(group_, std::string(kSplitIntentPrefix),
                                PrefixEnd(kSplitIntentPrefix), limits::kSplitIntentsListedMax);
  if (!intents.ok()) return intents.status();
  for (const pb::KvItem& item : intents->items()) {
    if (!out.add_intents()->ParseFromString(item.value())) {
      return Status::Corruption("meta: a split intent does not parse");
    }
  }
  auto requests = ScanStrongSync(group_, std::string(kSplitRequestPrefix),
                                 PrefixEnd(kSplitRequestPrefix), limits::kSplitRequestsMax);
  if (!requests.ok()) return requests.status();
  for (const pb::KvItem& item : requests->items()) {
    if (!out.add_requests()->ParseFromString(item.value())) {
      return Status::Corruption("meta: a requested split record does not parse");
    }
  }
  return out;
}

}  // namespace tessera::meta
