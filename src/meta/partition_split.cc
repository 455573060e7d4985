// PartitionAdmin::SplitPartition: meta's two steps of a partition split
// (cluster_rpc.proto, SplitPartitionRequest; docs/partition-splits.md).
#include <spdlog/spdlog.h>

#include "meta/meta_group_calls.h"
#include "meta/meta_keys.h"
#include "meta/partition_admin.h"
#include "meta/registry_keys.h"
#include "node/split_key.h"

namespace tessera::meta {
namespace {

using Record = std::optional<pb::KvRecord>;

void AddCondition(pb::KvBatch& batch, std::string_view key, const Record& record) {
  pb::KvCondition* c = batch.add_conditions();
  c->set_key(std::string(key));
  if (record) c->set_version(record->version());
  else c->set_absent(true);
}

void AddPut(pb::KvBatch& batch, std::string key, std::string value) {
  pb::KvWrite* w = batch.add_writes();
  w->set_key(std::move(key));
  w->set_value(std::move(value));
}

template <typename Proto>
Result<Proto> Parse(const pb::KvRecord& record, const char* what) {
  Proto out;
  if (!out.ParseFromString(record.value())) return Status::Corruption(std::string("meta: ") + what + " does not parse");
  return out;
}

// The conditional batch, applied or Conflict naming the failed condition.
Status Apply(node::GroupHost& group, pb::KvBatch batch, const char* what) {
  auto written = WriteSync(group, std::move(batch));
  if (!written.ok()) return written.status();
  if (!written->applied()) {
    return Status::Conflict(std::string(what) + ": a record changed meanwhile (condition " +
                            std::to_string(written->failed_condition()) + "); read and retry");
  }
  return Status::Ok();
}

Status CheckSplitKey(const pb::PartitionDescriptor& parent, const std::string& split_key) {
  const node::SplitKeyRules rules{parent.start_key(), parent.end_key(),
                                  parent.table() == kS3TableName};
  if (node::SplitKeyAllowed(split_key, rules)) return Status::Ok();
  return Status::InvalidArgument("split key is not strictly inside group " +
                                 std::to_string(parent.group_id()) +
                                 "'s range, or (table _s3) falls inside one object's records");
}

}  // namespace

void PartitionAdmin::DropRequest(pb::KvBatch& batch, const SplitRecords& records) {
  if (!records.request_record) return;
  AddCondition(batch, records.request_key, records.request_record);
  pb::KvWrite* drop = batch.add_writes();
  drop->set_key(records.request_key);
  drop->set_delete_(true);
}

Result<PartitionAdmin::SplitRecords> PartitionAdmin::ReadSplitRecords(
    const pb::SplitPartitionRequest& request) {
  if (request.table().empty() || request.parent_group_id() == 0) {
    return Status::InvalidArgument("a split names its table and parent group");
  }
  SplitRecords out;
  out.parent_key = PartitionKey(request.table(), request.parent_start_key());
  out.intent_key = SplitIntentKey(request.parent_group_id());
  auto parent = ReadStrongSync(group_, out.parent_key);
  if (!parent.ok()) return parent.status();
  auto intent = ReadStrongSync(group_, out.intent_key);
  if (!intent.ok()) return intent.status();
  out.request_key = SplitRequestKey(request.parent_group_id());
  auto requested = ReadStrongSync(group_, out.request_key);
  if (!requested.ok()) return requested.status();
  out.parent_record = std::move(parent).value();
  out.intent_record = std::move(intent).value();
  out.request_record = std::move(requested).value();
  if (out.parent_record) {
    auto stored = Parse<pb::PartitionDescriptor>(*out.parent_record, "stored descriptor");
    if (!stored.ok()) return stored.status();
    out.parent = std::move(stored).value();
  }
  if (out.intent_record) {
    auto stored = Parse<pb::SplitPartitionResponse>(*out.intent_record, "split intent");
    if (!stored.ok()) return stored.status();
    out.intent = std::move(stored).value();
  }
  if (!out.parent_record || out.parent.group_id() != request.parent_group_id()) {
    return Status::NotFound("group " + std::to_string(request.parent_group_id()) +
                            " does not start at that key of table '" + request.table() + "'");
  }
  return out;
}

Result<pb::SplitPartitionResponse> PartitionAdmin::SplitPartition(
    const pb::SplitPartitionRequest& request) {
  auto records = ReadSplitRecords(request);
  if (!records.ok()) return records.status();
  if (request.abandon()) return AbandonSplit(request, *records);
  if (request.child_group_id() == 0) return ReserveSplit(request, *records);
  return CommitSplit(request, *records);
}

Result<pb::SplitPartitionResponse> PartitionAdmin::ReserveSplit(const pb::SplitPartitionRequest& request,
                                                                const SplitRecords& records) {
  if (records.intent_record) {
    if (records.intent.child().start_key() == request.split_key()) return records.intent;
    return Status::Conflict("another split of group " + std::to_string(request.parent_group_id()) +
                            " is in progress");
  }
  const pb::PartitionDescriptor& parent = records.parent;
  if (parent.epoch() != request.parent_epoch()) {
    return Status::Conflict("group " + std::to_string(parent.group_id()) + " is at epoch " +
                            std::to_string(parent.epoch()) + ", not " +
                            std::to_string(request.parent_epoch()));
  }
  TESSERA_RETURN_IF_ERROR(CheckSplitKey(parent, request.split_key()));
  auto lease_version = CheckEpoch(request.autoadmin_epoch(), "split of group=" + std::to_string(parent.group_id()));
  if (!lease_version.ok()) return lease_version.status();
  auto counter = ReadStrongSync(group_, std::string(kNextGroupIdKey));
  if (!counter.ok()) return counter.status();
  uint64_t child_id = kFirstPartitionGroupId;
  if (*counter) {
    auto decoded = DecodeCounter((*counter)->value());
    if (!decoded.ok()) return decoded.status();
    child_id = *decoded;
  }
  pb::SplitPartitionResponse intent;
  *intent.mutable_parent() = parent;
  pb::PartitionDescriptor* child = intent.mutable_child();
  *child = parent;
  child->set_start_key(request.split_key());
  child->set_group_id(child_id);
  child->set_epoch(parent.epoch() + 1);
  child->set_leader_hint(0);
  pb::KvBatch batch;
  AddCondition(batch, records.parent_key, records.parent_record);
  AddCondition(batch, records.intent_key, records.intent_record);
  AddCondition(batch, kNextGroupIdKey, *counter);
  pb::KvCondition* lease = batch.add_conditions();
  lease->set_key(std::string(kAutoadminLeaseKey));
  lease->set_version(*lease_version);
  AddPut(batch, records.intent_key, intent.SerializeAsString());
  AddPut(batch, std::string(kNextGroupIdKey), EncodeCounter(child_id + 1));
  DropRequest(batch, records);
  TESSERA_RETURN_IF_ERROR(Apply(group_, std::move(batch), "split reserve"));
  spdlog::info("meta.split_reserved table={} parent={} child={} epoch={} autoadmin_epoch={}",
               parent.table(), parent.group_id(), child_id, parent.epoch(), request.autoadmin_epoch());
  return intent;
}

Result<pb::SplitPartitionResponse> PartitionAdmin::CommitSplit(const pb::SplitPartitionRequest& request,
                                                               const SplitRecords& records) {
  const std::string child_key = PartitionKey(request.table(), request.split_key());
  auto child_record = ReadStrongSync(group_, child_key);
  if (!child_record.ok()) return child_record.status();
  if (!records.intent_record) {
    // Done before (a retried commit), or never reserved.
    if (*child_record) {
      auto child = Parse<pb::PartitionDescriptor>(**child_record, "stored descriptor");
      if (!child.ok()) return child.status();
      if (child->group_id() == request.child_group_id() && records.parent.end_key() == request.split_key()) {
        pb::SplitPartitionResponse done;
        *done.mutable_parent() = records.parent;
        *done.mutable_child() = std::move(child).value();
        return done;
      }
    }
    return Status::NotFound("no split of group " + std::to_string(request.parent_group_id()) +
                            " into group " + std::to_string(request.child_group_id()) + " is reserved");
  }
  const pb::SplitPartitionResponse& intent = records.intent;
  if (intent.child().group_id() != request.child_group_id() ||
      intent.child().start_key() != request.split_key()) {
    return Status::Conflict("the reserved split of group " + std::to_string(request.parent_group_id()) +
                            " is another one");
  }
  if (records.parent.epoch() != intent.parent().epoch()) {
    return Status::Conflict("group " + std::to_string(request.parent_group_id()) +
                            " changed since its split was reserved");
  }
  auto lease_version = CheckEpoch(request.autoadmin_epoch(), "split of group=" + std::to_string(request.parent_group_id()));
  if (!lease_version.ok()) return lease_version.status();
  pb::SplitPartitionResponse done;
  pb::PartitionDescriptor* parent = done.mutable_parent();
  *parent = records.parent;
  parent->set_end_key(request.split_key());
  parent->set_epoch(records.parent.epoch() + 1);
  pb::PartitionDescriptor* child = done.mutable_child();
  *child = intent.child();
  *child->mutable_replicas() = records.parent.replicas();  // the set the split entry was ordered on
  pb::KvBatch batch;
  AddCondition(batch, records.parent_key, records.parent_record);
  AddCondition(batch, records.intent_key, records.intent_record);
  AddCondition(batch, child_key, *child_record);
  pb::KvCondition* lease = batch.add_conditions();
  lease->set_key(std::string(kAutoadminLeaseKey));
  lease->set_version(*lease_version);
  AddPut(batch, records.parent_key, parent->SerializeAsString());
  AddPut(batch, child_key, child->SerializeAsString());
  pb::KvWrite* drop = batch.add_writes();
  drop->set_key(records.intent_key);
  drop->set_delete_(true);
  TESSERA_RETURN_IF_ERROR(Apply(group_, std::move(batch), "split commit"));
  spdlog::info("meta.split_committed table={} parent={} child={} epoch={} autoadmin_epoch={}",
               parent->table(), parent->group_id(), child->group_id(), parent->epoch(),
               request.autoadmin_epoch());
  return done;
}

Result<pb::SplitPartitionResponse> PartitionAdmin::AbandonSplit(const pb::SplitPartitionRequest& request,
                                                                const SplitRecords& records) {
  pb::SplitPartitionResponse out;
  *out.mutable_parent() = records.parent;
  if (!records.intent_record && !records.request_record) return out;
  auto lease_version = CheckEpoch(request.autoadmin_epoch(), "split of group=" + std::to_string(request.parent_group_id()));
  if (!lease_version.ok()) return lease_version.status();
  pb::KvBatch batch;
  AddCondition(batch, records.intent_key, records.intent_record);
  pb::KvCondition* lease = batch.add_conditions();
  lease->set_key(std::string(kAutoadminLeaseKey));
  lease->set_version(*lease_version);
  if (records.intent_record) {
    pb::KvWrite* drop = batch.add_writes();
    drop->set_key(records.intent_key);
    drop->set_delete_(true);
  }
  DropRequest(batch, records);
  TESSERA_RETURN_IF_ERROR(Apply(group_, std::move(batch), "split abandon"));
  spdlog::info("meta.split_abandoned parent={} child={} autoadmin_epoch={}", request.parent_group_id(),
               records.intent.child().group_id(), request.autoadmin_epoch());
  return out;
}

}  // namespace tessera::meta
