#include "autoadmin/split_driver.h"

#include <spdlog/spdlog.h>

#include <set>

#include "autoadmin/split_planner.h"

namespace tessera::autoadmin {
namespace {

// The most groups SplitDriver remembers as checked small.
constexpr size_t kSmallGroupsMax = 4096;
// A group checked small is counted again after this many rounds even when
// its estimate did not grow (memtable estimates move in coarse steps).
constexpr uint32_t kRecheckAfterRounds = 10;

std::string GroupName(uint64_t id) { return "group " + std::to_string(id); }

// A requested split may start: a leader reports itself, no membership
// change is pending there and no replica is a learner.
bool ReadyToSplit(const GroupView& group, const ClusterView& view) {
  if (group.leader == 0) return false;
  for (const pb::ReplicaPlacement& r : group.descriptor.replicas()) {
    if (r.role() == pb::REPLICA_LEARNER) return false;
  }
  const auto node = view.nodes.find(group.leader);
  if (node == view.nodes.end()) return false;
  const auto report = node->second.groups.find(group.descriptor.group_id());
  return report != node->second.groups.end() && !report->second.membership_pending;
}

template <typename Proto>
Result<Proto> ParseAnswer(Result<std::string> answer, const char* what) {
  if (!answer.ok()) return answer.status();
  Proto out;
  if (!out.ParseFromString(*answer)) return Status::Corruption(std::string(what) + ": unparseable answer");
  return out;
}

// A refusal that no retry changes: the request or split is dropped.
bool Final(const Status& s) {
  return s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kConflict;
}

}  // namespace

SplitPlan PlanSplits(ClusterView& view, const pb::SplitsResponse& splits,
                     const PlannerOptions& options) {
  SplitPlan plan;
  std::set<uint64_t> reserved;
  for (const pb::SplitPartitionResponse& intent : splits.intents()) {
    const uint64_t id = intent.parent().group_id();
    reserved.insert(id);
    SplitWork w;
    w.parent = intent.parent();
    w.intent = intent;
    const auto it = view.groups.find(id);
    if (it != view.groups.end()) {
      it->second.splitting = true;
      w.parent = it->second.descriptor;
      w.leader = it->second.leader;
    }
    w.reason = "reserved split into " + GroupName(intent.child().group_id());
    plan.work.push_back(std::move(w));
  }
  size_t in_progress = plan.work.size();
  for (const pb::SplitRequestRecord& request : splits.requests()) {
    if (reserved.count(request.group_id())) continue;
    const auto it = view.groups.find(request.group_id());
    if (it == view.groups.end() || it->second.descriptor.table() != request.table() ||
        it->second.descriptor.start_key() != request.parent_start_key()) {
      plan.refusals.push_back({request.group_id(), request.table(),
                               "the requested partition is no longer in the map", true});
      continue;
    }
    it->second.splitting = true;  // counts against max_concurrent while it waits
    if (in_progress >= options.max_concurrent || !ReadyToSplit(it->second, view)) continue;
    ++in_progress;
    SplitWork w;
    w.parent = it->second.descriptor;
    w.leader = it->second.leader;
    w.split_key = request.split_key();
    w.requested = true;
    w.reason = request.split_key().empty() ? "requested (key chosen at the leader)" : "requested at a key";
    plan.work.push_back(std::move(w));
  }
  for (const SplitDecision& d : PlanSizeSplits(view, options)) {
    const GroupView& g = view.groups.at(d.group_id);
    SplitWork w;
    w.parent = g.descriptor;
    w.leader = d.leader;
    w.estimated_bytes = d.state_bytes;
    w.split_bytes = options.split_bytes;
    w.reason = "state about " + std::to_string(d.state_bytes) + " bytes > split_bytes " +
               std::to_string(options.split_bytes);
    plan.work.push_back(std::move(w));
  }
  return plan;
}

Result<pb::SplitKeyResponse> SplitDriver::ChooseKey(const SplitWork& work) {
  if (work.leader == 0) return Status::Unavailable(GroupName(work.parent.group_id()) + " has no known leader");
  pb::SplitKeyRequest request;
  request.set_group_id(work.parent.group_id());
  return ParseAnswer<pb::SplitKeyResponse>(
      calls_.node(work.leader, "admin.split_key", request.SerializeAsString(), timeouts_.scan),
      "admin.split_key");
}

Result<pb::SplitPartitionResponse> SplitDriver::Reserve(const SplitWork& work, const std::string& key,
                                                        uint64_t epoch) {
  pb::SplitPartitionRequest request;
  request.set_autoadmin_epoch(epoch);
  request.set_table(work.parent.table());
  request.set_parent_group_id(work.parent.group_id());
  request.set_parent_epoch(work.parent.epoch());
  request.set_split_key(key);
  request.set_parent_start_key(work.parent.start_key());
  return ParseAnswer<pb::SplitPartitionResponse>(
      calls_.meta("meta.split_partition", request.SerializeAsString(), timeouts_.call),
      "meta.split_partition");
}

Status SplitDriver::Abandon(const pb::PartitionDescriptor& parent, uint64_t epoch) {
  pb::SplitPartitionRequest request;
  request.set_autoadmin_epoch(epoch);
  request.set_table(parent.table());
  request.set_parent_group_id(parent.group_id());
  request.set_parent_start_key(parent.start_key());
  request.set_abandon(true);
  return calls_.meta("meta.split_partition", request.SerializeAsString(), timeouts_.call).status();
}

SplitOutcome SplitDriver::Carry(const SplitWork& work, uint64_t epoch) {
  if (work.intent) return Finish(work, *work.intent, epoch);
  SplitOutcome out;
  const uint64_t group = work.parent.group_id();
  std::string key = work.split_key;
  if (key.empty()) {
    out.step = "choose_key";
    const auto small = small_at_estimate_.find(group);
    if (work.split_bytes > 0 && small != small_at_estimate_.end() &&
        work.estimated_bytes <= small->second.estimate && small->second.skips_left > 0) {
      --small->second.skips_left;
      out.step = "exact_size";  // checked before; the estimate has not grown since
      return out;
    }
    auto chosen = ChooseKey(work);
    if (!chosen.ok()) {
      out.status = chosen.status();
    } else if (work.split_bytes > 0 && chosen->state_bytes() <= work.split_bytes) {
      small_at_estimate_[group] = SmallGroup{work.estimated_bytes, kRecheckAfterRounds};
      while (small_at_estimate_.size() > kSmallGroupsMax) small_at_estimate_.erase(small_at_estimate_.begin());
      out.step = "exact_size";
      return out;
    } else {
      key = chosen->split_key();
    }
  }
  small_at_estimate_.erase(group);
  if (out.status.ok()) {
    out.step = "reserve";
    auto intent = Reserve(work, key, epoch);
    if (intent.ok()) {
      Reached("reserve");
      return Finish(work, *intent, epoch);
    }
    out.status = intent.status();
  }
  // A key that cannot be chosen or reserved refuses an operator's request.
  if (work.requested && out.status.code() == StatusCode::kInvalidArgument) {
    const Status dropped = Abandon(work.parent, epoch);
    out.abandoned = dropped.ok();
  }
  return out;
}

SplitOutcome SplitDriver::Finish(const SplitWork& work, const pb::SplitPartitionResponse& intent,
                                 uint64_t epoch) {
  SplitOutcome out;
  const uint64_t parent = intent.parent().group_id();
  const pb::PartitionDescriptor& reserved_child = intent.child();
  out.step = "split_group";
  if (work.leader == 0) {
    out.status = Status::Unavailable(GroupName(parent) + " has no known leader");
    return out;
  }
  pb::SplitGroupRequest order;
  order.set_group_id(parent);
  order.set_autoadmin_epoch(epoch);
  order.set_split_key(reserved_child.start_key());
  order.set_child_group_id(reserved_child.group_id());
  out.status = calls_.node(work.leader, "admin.split_group", order.SerializeAsString(), timeouts_.order)
                   .status();
  if (Final(out.status)) {
    // The parent refused the entry (or it applied as refused): nowhere
    // applied, so the reservation goes.
    out.step = "abandon";
    const Status dropped = Abandon(intent.parent(), epoch);
    out.abandoned = dropped.ok();
    if (!dropped.ok()) out.status = dropped;
    return out;
  }
  if (!out.status.ok()) return out;
  Reached("order");
  // The child on every replica node meta's commit will name (the parent's
  // replicas now: the planner changes nothing of a splitting group).
  out.step = "create_group";
  pb::CreateGroupRequest create;
  *create.mutable_partition() = reserved_child;
  *create.mutable_partition()->mutable_replicas() = work.parent.replicas();
  create.set_split_parent_group_id(parent);
  for (const pb::ReplicaPlacement& r : work.parent.replicas()) {
    out.status = calls_.node(r.node_id(), "admin.create_group", create.SerializeAsString(), timeouts_.call)
                     .status();
    if (!out.status.ok()) return out;
    Reached("create_one");
  }
  Reached("before_commit");
  out.step = "commit";
  pb::SplitPartitionRequest commit;
  commit.set_autoadmin_epoch(epoch);
  commit.set_table(intent.parent().table());
  commit.set_parent_group_id(parent);
  commit.set_parent_epoch(intent.parent().epoch());
  commit.set_split_key(reserved_child.start_key());
  commit.set_child_group_id(reserved_child.group_id());
  commit.set_parent_start_key(intent.parent().start_key());
  out.status = calls_.meta("meta.split_partition", commit.SerializeAsString(), timeouts_.call).status();
  out.committed = out.status.ok();
  if (out.committed) {
    spdlog::info("autoadmin.split_committed table={} parent={} child={} epoch={}",
                 intent.parent().table(), parent, reserved_child.group_id(), epoch);
  }
  return out;
}

}  // namespace tessera::autoadmin
