#include "node/split_rpc.h"

#include <spdlog/spdlog.h>

#include <functional>
#include <optional>

#include "node/rpc_handler_util.h"
#include "node/split_key.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::node {
namespace {

// The S3 table's name (meta/registry_keys.h, kS3TableName): split only
// between objects (split_key.h, SplitKeyRules::whole_objects).
constexpr std::string_view kS3Table = "_s3";

// InvalidArgument unless the group's descriptor allows splitting at the key.
Status CheckSplitAllowed(const ReplicationHost& replication, const pb::SplitGroupRequest& split) {
  Status verdict = Status::Ok();
  (void)replication.DescriptorAllows(split.group_id(), [&](const pb::PartitionDescriptor& d) {
    if (!SplitKeyAllowed(split.split_key(),
                         SplitKeyRules{d.start_key(), d.end_key(), d.table() == kS3Table})) {
      verdict = Status::InvalidArgument("split key is not strictly inside group " +
                                        std::to_string(split.group_id()) +
                                        "'s range, or (table _s3) falls inside one object's records");
    }
    return true;
  });
  return verdict;
}

// The split already ordered: the group's range ends at the split key.
Result<bool> AlreadySplit(ReplicationHost& replication, const pb::SplitGroupRequest& split) {
  auto end = replication.store().RangeEnd(split.group_id());
  if (!end.ok()) return end.status();
  return end->has_value() && **end == split.split_key();
}

// The group's stored descriptor; NotFound when it is not hosted.
Result<pb::PartitionDescriptor> DescriptorOf(const ReplicationHost& replication, uint64_t group) {
  std::optional<pb::PartitionDescriptor> found;
  (void)replication.DescriptorAllows(group, [&found](const pb::PartitionDescriptor& d) {
    found = d;
    return true;
  });
  if (!found) return Status::NotFound("group " + std::to_string(group) + " not hosted here");
  return *found;
}

// Calls `row(key, bytes)` for each row of a consistent view of the group's
// state until it returns false.
Status VisitState(ReplicationHost& replication, uint64_t group,
                  const std::function<bool(const std::string&, uint64_t)>& row) {
  auto snapshot = replication.store().OpenSnapshot(group);
  if (!snapshot.ok()) return snapshot.status();
  for (;;) {
    auto next = (*snapshot)->Next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) return Status::Ok();
    if (!row((*next)->key, (*next)->key.size() + (*next)->value.size())) return Status::Ok();
  }
}

// Step 2: the total first, then the row before which half of it lies,
// moved to a boundary the table allows.
Result<pb::SplitKeyResponse> ChooseKeyOf(ReplicationHost& replication, uint64_t group) {
  auto descriptor = DescriptorOf(replication, group);
  if (!descriptor.ok()) return descriptor.status();
  pb::SplitKeyResponse out;
  uint64_t total = 0, rows = 0;
  TESSERA_RETURN_IF_ERROR(VisitState(replication, group, [&](const std::string&, uint64_t bytes) {
    total += bytes;
    ++rows;
    return true;
  }));
  HalfBytesCursor cursor(total);
  TESSERA_RETURN_IF_ERROR(VisitState(replication, group, [&](const std::string& key, uint64_t bytes) {
    return !cursor.Feed(key, bytes);
  }));
  out.set_state_bytes(total);
  out.set_rows(rows);
  const std::string name = "group " + std::to_string(group);
  if (!cursor.crossing_key()) {
    return Status::InvalidArgument(name + " cannot be halved (" + std::to_string(rows) + " rows)");
  }
  const SplitKeyRules rules{descriptor->start_key(), descriptor->end_key(),
                            descriptor->table() == kS3Table};
  auto key = ChooseSplitKey(*cursor.crossing_key(), rules);
  if (!key) return Status::InvalidArgument(name + " has no split key its table allows");
  out.set_split_key(std::move(*key));
  return out;
}

}  // namespace

void ServeSplitKey(ReplicationHost& replication, JobThread& scanner, const pb::Envelope& request,
                   rpc::Responder responder) {
  pb::SplitKeyRequest choose;
  if (!ParsePayload(request, responder, &choose)) return;
  std::shared_ptr<GroupHost> host = FindGroupOrFail(replication, choose.group_id(), responder);
  if (!host) return;
  host->GetStatus([&replication, &scanner, choose, responder](GroupStatus s) {
    if (s.stopped || s.role != consensus::Role::kLeader) {
      return responder.Fail(Status::NotLeader(s.stopped ? 0 : s.leader));
    }
    const Status submitted = scanner.Submit([&replication, choose, responder] {
      auto chosen = ChooseKeyOf(replication, choose.group_id());
      if (!chosen.ok()) return responder.Fail(chosen.status());
      spdlog::info("node.split_key_chosen group={} state_bytes={} rows={}", choose.group_id(),
                   chosen->state_bytes(), chosen->rows());
      responder.Reply(chosen->SerializeAsString());
    });
    if (!submitted.ok()) responder.Fail(submitted);
  });
}

void ServeSplitGroup(ReplicationHost& replication, JobThread& admin_jobs,
                     const pb::Envelope& request, rpc::Responder responder) {
  pb::SplitGroupRequest split;
  if (!ParsePayload(request, responder, &split)) return;
  if (split.split_key().empty()) return responder.Fail(Status::InvalidArgument("empty split key"));
  if (split.child_group_id() == 0 || split.child_group_id() == split.group_id()) {
    return responder.Fail(Status::InvalidArgument("the child group id must be new and non-zero"));
  }
  std::shared_ptr<GroupHost> host = FindGroupOrFail(replication, split.group_id(), responder);
  if (!host) return;
  const Status submitted = admin_jobs.Submit([&replication, host, split, responder] {
    const Status admitted = replication.AdmitAutoadminEpoch(split.autoadmin_epoch());
    if (!admitted.ok()) return responder.Fail(admitted);
    auto already = AlreadySplit(replication, split);
    if (!already.ok()) return responder.Fail(already.status());
    if (*already) {
      pb::SplitGroupResponse response;
      response.set_already_split(true);
      return responder.Reply(response.SerializeAsString());
    }
    const Status allowed = CheckSplitAllowed(replication, split);
    if (!allowed.ok()) return responder.Fail(allowed);
    pb::KvCommand command;
    command.mutable_split()->set_split_key(split.split_key());
    command.mutable_split()->set_child_group_id(split.child_group_id());
    host->Write(std::move(command), [split, responder](Result<pb::KvApplyResult> r) {
      if (!r.ok()) return responder.Fail(r.status());
      if (!r->applied()) {
        return responder.Fail(Status::Conflict(
            "group " + std::to_string(split.group_id()) + " refused the split at the key given"));
      }
      spdlog::info("node.split_ordered group={} child={} slot={} epoch={}", split.group_id(),
                   split.child_group_id(), r->version(), split.autoadmin_epoch());
      pb::SplitGroupResponse response;
      response.set_split_slot(r->version());
      responder.Reply(response.SerializeAsString());
    });
  });
  if (!submitted.ok()) responder.Fail(submitted);
}

}  // namespace tessera::node
