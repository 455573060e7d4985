#include "node/replication_host.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <set>
#include <utility>

#include "common/big_endian.h"
#include "common/limits.h"
#include "common/metrics.h"

namespace tessera::node {
namespace {

constexpr std::string_view kDescriptorPrefix = "group/";
constexpr std::string_view kAutoadminEpochKey = "autoadmin/epoch";

Status ValidateDescriptor(const pb::PartitionDescriptor& d, consensus::ReplicaId self) {
  if (d.group_id() == kDescriptorGroupId) {
    return Status::InvalidArgument("group id 0 is reserved");
  }
  if (d.replicas_size() == 0 || static_cast<size_t>(d.replicas_size()) > limits::kGroupReplicasMax) {
    return Status::InvalidArgument("a group needs 1.." + std::to_string(limits::kGroupReplicasMax) +
                                   " replicas");
  }
  std::set<uint32_t> ids;
  int full_voters = 0, log_replicas = 0;
  for (const pb::ReplicaPlacement& r : d.replicas()) {
    if (r.node_id() == 0 || !ids.insert(r.node_id()).second) {
      return Status::InvalidArgument("replica node ids must be non-zero and distinct");
    }
    full_voters += r.role() == pb::REPLICA_VOTER && !r.log_only() ? 1 : 0;
    log_replicas += r.log_only() ? 1 : 0;
  }
  if (full_voters == 0 || log_replicas > 1) {
    return Status::InvalidArgument(
        "a group needs a voter that holds the state and has at most one log replica");
  }
  if (!ids.count(self)) {
    return Status::InvalidArgument("group " + std::to_string(d.group_id()) +
                                   " has no replica on process " + std::to_string(self));
  }
  return Status::Ok();
}

}  // namespace

std::string DescriptorKey(uint64_t group_id) {
  std::string key(kDescriptorPrefix);
  AppendBigEndian64(&key, group_id);
  return key;
}

ReplicationHost::ReplicationHost(boost::asio::io_context& io, metrics::Registry& metrics,
                                 ReplicationHostOptions options)
    : io_(io),
      options_(std::move(options)),
      unknown_group_(metrics.GetCounter("tessera_consensus_unknown_group_total",
                                        "Consensus messages for groups not hosted here, dropped")),
      snapshot_counters_(metrics) {}

Result<std::unique_ptr<ReplicationHost>> ReplicationHost::Open(boost::asio::io_context& io,
                                                               metrics::Registry& metrics,
                                                               ReplicationHostOptions options) {
  if (options.self_id == 0) return Status::InvalidArgument("replication host: self_id is 0");
  if (!options.send_batch) return Status::InvalidArgument("replication host: no send_batch");
  std::unique_ptr<ReplicationHost> host(new ReplicationHost(io, metrics, std::move(options)));
  auto store = storage::NodeStore::Open(host->options_.store);
  if (!store.ok()) return store.status();
  host->store_ = std::move(store).value();
  host->snapshot_counters_.installs_resumed.Increment(
      host->store_->snapshot_recovery_stats().installs_resumed);
  host->sender_ = std::make_unique<BatchingMessageSender>(io, host->options_.send_batch, &metrics,
                                                          host->options_.sender);
  TESSERA_RETURN_IF_ERROR(host->RestoreGroups());
  return host;
}

ReplicationHost::~ReplicationHost() {
  Stop();
  // Handlers still queued on the (stopped) io_context may keep GroupHosts
  // alive past the store; nothing runs them any more (contract 6).
  groups_.clear();
  sender_.reset();
  store_.reset();
}

Status ReplicationHost::RestoreGroups() {
  {
    auto epoch = store_->Get(kDescriptorGroupId, kAutoadminEpochKey);
    if (epoch.ok()) {
      if (epoch->size() != 8) return Status::Corruption("stored autoadmin epoch is not 8 bytes");
      autoadmin_epoch_ = ReadBigEndian64(*epoch);
    } else if (epoch.status().code() != StatusCode::kNotFound) {
      return epoch.status();
    }
  }
  const std::string start(kDescriptorPrefix);
  std::string end(kDescriptorPrefix);
  end.back() = static_cast<char>(end.back() + 1);
  std::lock_guard lock(mu_);
  std::string from = start;
  for (;;) {
    auto items = store_->Scan(kDescriptorGroupId, from, end, limits::kScanItemsMax);
    if (!items.ok()) return items.status();
    for (const storage::KeyValue& kv : *items) {
      pb::PartitionDescriptor descriptor;
      if (!descriptor.ParseFromString(kv.value)) {
        return Status::Corruption("stored descriptor does not parse: group 0 key of size " +
                                  std::to_string(kv.key.size()));
      }
      // A range end the store holds (an install or a split that finished
      // before the descriptor write) narrows the descriptor first.
      auto range_end = store_->RangeEnd(descriptor.group_id());
      if (!range_end.ok()) return range_end.status();
      if (*range_end) TESSERA_RETURN_IF_ERROR(StoreNarrowedLocked(&descriptor, **range_end));
      TESSERA_RETURN_IF_ERROR(StartGroupLocked(descriptor));
      spdlog::info("node.group_restored group={} replicas={}", descriptor.group_id(),
                   descriptor.replicas_size());
    }
    if (items->size() < limits::kScanItemsMax) return Status::Ok();
    from = items->back().key + std::string(1, '\0');
  }
}

Status ReplicationHost::CreateGroup(const pb::PartitionDescriptor& descriptor) {
  TESSERA_RETURN_IF_ERROR(ValidateDescriptor(descriptor, options_.self_id));
  std::lock_guard lock(mu_);
  return CreateGroupLocked(descriptor);
}

Result<bool> ReplicationHost::ParentNarrowedLocked(const HostedGroup& parent,
                                                   const std::string& split_key) {
  bool log_only = false;
  for (const pb::ReplicaPlacement& r : parent.descriptor.replicas()) {
    if (r.node_id() == options_.self_id) log_only = r.log_only();
  }
  // A log replica stores no range end; it narrows its descriptor when the
  // split entry commits (GroupHost::NarrowOnLogSplits).
  if (log_only) return parent.descriptor.end_key() == split_key;
  auto end = store_->RangeEnd(parent.descriptor.group_id());
  if (!end.ok()) return end.status();
  return end->has_value() && **end == split_key;
}

Status ReplicationHost::CreateSplitChild(const pb::PartitionDescriptor& child, uint64_t parent) {
  TESSERA_RETURN_IF_ERROR(ValidateDescriptor(child, options_.self_id));
  if (parent == 0 || parent == child.group_id()) {
    return Status::InvalidArgument("a split child names a parent group other than itself");
  }
  std::lock_guard lock(mu_);
  if (stopped_) return Status::Unavailable("replication host stopped");
  if (groups_.count(child.group_id())) return Status::Ok();
  const std::string child_name = "group " + std::to_string(child.group_id());
  auto stored = store_->Get(kDescriptorGroupId, DescriptorKey(child.group_id()));
  if (stored.ok()) {
    // This replica applied the split: the host starts the child once the
    // apply finished (contract 10); start it here if that did not happen.
    auto pending = store_->SplitPending(parent);
    if (!pending.ok()) return pending.status();
    if (*pending) return Status::Unavailable(child_name + ": the split is being applied here");
    pb::PartitionDescriptor descriptor;
    if (!descriptor.ParseFromString(*stored)) {
      return Status::Corruption("stored descriptor of " + child_name + " does not parse");
    }
    return StartGroupLocked(descriptor);
  }
  if (stored.status().code() != StatusCode::kNotFound) return stored.status();
  const auto it = groups_.find(parent);
  if (it != groups_.end()) {
    auto narrowed = ParentNarrowedLocked(it->second, child.start_key());
    if (!narrowed.ok()) return narrowed.status();
    if (!*narrowed) {
      return Status::Unavailable("group " + std::to_string(parent) +
                                 " has not reached its split here yet");
    }
  }
  spdlog::info("node.split_child_created_empty child={} parent={}", child.group_id(), parent);
  return CreateGroupLocked(child);
}

Status ReplicationHost::CreateGroupLocked(const pb::PartitionDescriptor& descriptor) {
  if (stopped_) return Status::Unavailable("replication host stopped");
  if (groups_.count(descriptor.group_id())) return Status::Ok();
  if (groups_.size() >= limits::kHostedGroupsMax) {
    return Status::Throttled("this process hosts the most groups it may");
  }
  auto applied = store_->AppliedIndex(kDescriptorGroupId);
  if (!applied.ok()) return applied.status();
  TESSERA_RETURN_IF_ERROR(store_->Apply(
      kDescriptorGroupId, *applied + 1,
      {storage::Mutation::Put(DescriptorKey(descriptor.group_id()), descriptor.SerializeAsString())}));
  TESSERA_RETURN_IF_ERROR(StartGroupLocked(descriptor));
  spdlog::info("node.group_created group={} table={} replicas={}", descriptor.group_id(),
               descriptor.table(), descriptor.replicas_size());
  return Status::Ok();
}

Status ReplicationHost::StartGroupLocked(const pb::PartitionDescriptor& descriptor) {
  TESSERA_RETURN_IF_ERROR(ValidateDescriptor(descriptor, options_.self_id));
  GroupHostOptions group = options_.group_defaults;
  group.consensus.self = options_.self_id;
  group.consensus.group_id = descriptor.group_id();
  group.consensus.random_seed =
      options_.group_defaults.consensus.random_seed * 1'000'003u + descriptor.group_id() * 7919u +
      options_.self_id;
  group.bootstrap_membership.Clear();
  group.log_only = false;
  for (const pb::ReplicaPlacement& r : descriptor.replicas()) {
    if (r.role() == pb::REPLICA_LEARNER) {
      group.bootstrap_membership.add_learners(r.node_id());
    } else {
      group.bootstrap_membership.add_voters(r.node_id());
    }
    if (r.log_only()) group.bootstrap_membership.add_log_only(r.node_id());
    if (r.log_only() && r.node_id() == options_.self_id) group.log_only = true;
  }
  group.snapshot_counters = &snapshot_counters_;
  const uint64_t group_id = descriptor.group_id();
  group.split_descriptors = [this, group_id](const pb::KvSplit& split) {
    return SplitDescriptors(group_id, split);
  };
  group.on_split_applied = [this](const pb::KvSplit& split) {
    StartSplitChild(split.child_group_id());
  };
  group.on_range_narrowed = [this, group_id](const std::string& end_key) {
    return NarrowDescriptor(group_id, end_key);
  };
  if (options_.customize_group) options_.customize_group(descriptor, group);
  auto host = GroupHost::Start(io_, store_.get(), sender_.get(), std::move(group));
  if (!host.ok()) return host.status();
  groups_[descriptor.group_id()] = HostedGroup{descriptor, std::move(host).value()};
  return Status::Ok();
}

Status ReplicationHost::AdmitAutoadminEpoch(uint64_t epoch) {
  std::lock_guard lock(mu_);
  if (epoch < autoadmin_epoch_) {
    spdlog::warn("node.autoadmin_stale_epoch epoch={} highest={}", epoch, autoadmin_epoch_);
    return Status(StatusCode::kStaleEpoch, "autoadmin epoch " + std::to_string(epoch) +
                                               " is below " + std::to_string(autoadmin_epoch_));
  }
  if (epoch == autoadmin_epoch_) return Status::Ok();
  auto applied = store_->AppliedIndex(kDescriptorGroupId);
  if (!applied.ok()) return applied.status();
  std::string epoch_bytes;
  AppendBigEndian64(&epoch_bytes, epoch);
  TESSERA_RETURN_IF_ERROR(store_->Apply(kDescriptorGroupId, *applied + 1,
                                        {storage::Mutation::Put(std::string(kAutoadminEpochKey),
                                                                std::move(epoch_bytes))}));
  autoadmin_epoch_ = epoch;
  return Status::Ok();
}

Result<bool> ReplicationHost::DropGroup(uint64_t group_id) {
  std::shared_ptr<GroupHost> host;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return Status::Unavailable("replication host stopped");
    const auto it = groups_.find(group_id);
    if (it == groups_.end()) return false;
    host = it->second.host;
  }
  // Not under mu_: the strand may need an io thread that waits for mu_.
  // Nothing of the group may reach the store after RemoveGroup's batch.
  if (!host->StopForRemoval()) {
    return Status::Unavailable("group " + std::to_string(group_id) +
                               " is installing a snapshot; drop it later");
  }
  {
    std::lock_guard lock(mu_);
    const auto it = groups_.find(group_id);
    if (it != groups_.end() && it->second.host == host) groups_.erase(it);
    auto applied = store_->AppliedIndex(kDescriptorGroupId);
    if (!applied.ok()) return applied.status();
    TESSERA_RETURN_IF_ERROR(store_->Apply(kDescriptorGroupId, *applied + 1,
                                          {storage::Mutation::Delete(DescriptorKey(group_id))}));
  }
  // Queued after every log write the stopped group submitted (FIFO writer).
  TESSERA_RETURN_IF_ERROR(store_->RemoveGroup(group_id));
  spdlog::info("node.group_dropped group={}", group_id);
  return true;
}

std::vector<uint64_t> ReplicationHost::RestartFailedGroups() {
  std::vector<std::shared_ptr<GroupHost>> failed;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return {};
    for (const auto& [id, hosted] : groups_) {
      if (hosted.host->StoppedOnDiskError()) failed.push_back(hosted.host);
    }
  }
  if (failed.empty()) return {};
  // Not under mu_: the strand may need an io thread that waits for mu_.
  std::vector<std::shared_ptr<GroupHost>> stopped;
  for (const std::shared_ptr<GroupHost>& host : failed) {
    if (host->StopForRemoval()) stopped.push_back(host);
  }
  if (stopped.empty()) return {};
  const Status probe = store_->ProbeWrites();
  if (!probe.ok()) {
    spdlog::warn("node.group_restart_waits groups={} reason=\"{}\"", stopped.size(),
                 probe.ToString());
    return {};
  }
  std::vector<uint64_t> restarted;
  std::lock_guard lock(mu_);
  if (stopped_) return {};
  for (const std::shared_ptr<GroupHost>& host : stopped) {
    const uint64_t id = host->group_id();
    const auto it = groups_.find(id);
    if (it == groups_.end() || it->second.host != host) continue;  // dropped or replaced meanwhile
    const pb::PartitionDescriptor descriptor = it->second.descriptor;
    groups_.erase(it);
    const Status started = StartGroupLocked(descriptor);
    if (!started.ok()) {
      // The stopped host stays, reported stopped: the next call, or the
      // next process start, tries again.
      spdlog::error("node.group_restart_failed group={} reason=\"{}\"", id, started.ToString());
      groups_[id] = HostedGroup{descriptor, host};
      continue;
    }
    spdlog::warn("node.group_restarted group={} (it had stopped on a disk error)", id);
    restarted.push_back(id);
  }
  return restarted;
}

Result<std::vector<storage::GroupMutation>> ReplicationHost::SplitDescriptors(
    uint64_t parent, const pb::KvSplit& split) {
  std::lock_guard lock(mu_);
  const auto it = groups_.find(parent);
  if (it == groups_.end()) {
    return Status::Unavailable("group " + std::to_string(parent) + " is no longer hosted");
  }
  pb::PartitionDescriptor narrowed = it->second.descriptor;
  if (split.split_key() <= narrowed.start_key() ||
      (!narrowed.end_key().empty() && split.split_key() >= narrowed.end_key())) {
    // The parent's state machine ordered it: applied all the same.
    spdlog::warn("node.split_key_outside_descriptor group={} child={}", parent,
                 split.child_group_id());
  }
  pb::PartitionDescriptor child = narrowed;
  child.set_group_id(split.child_group_id());
  child.set_start_key(split.split_key());
  child.set_epoch(narrowed.epoch() + 1);
  child.set_leader_hint(0);
  narrowed.set_end_key(split.split_key());
  narrowed.set_epoch(narrowed.epoch() + 1);
  it->second.descriptor = narrowed;
  return std::vector<storage::GroupMutation>{
      {kDescriptorGroupId,
       storage::Mutation::Put(DescriptorKey(parent), narrowed.SerializeAsString())},
      {kDescriptorGroupId,
       storage::Mutation::Put(DescriptorKey(child.group_id()), child.SerializeAsString())}};
}

Status ReplicationHost::NarrowDescriptor(uint64_t group, const std::string& end_key) {
  std::lock_guard lock(mu_);
  const auto it = groups_.find(group);
  if (it == groups_.end()) return Status::Ok();  // dropped meanwhile
  return StoreNarrowedLocked(&it->second.descriptor, end_key);
}

Status ReplicationHost::StoreNarrowedLocked(pb::PartitionDescriptor* descriptor,
                                            const std::string& end_key) {
  if (end_key <= descriptor->start_key() ||
      (!descriptor->end_key().empty() && end_key >= descriptor->end_key())) {
    return Status::Ok();  // already as narrow (or the key is not inside: ignored)
  }
  pb::PartitionDescriptor narrowed = *descriptor;
  narrowed.set_end_key(end_key);
  narrowed.set_epoch(narrowed.epoch() + 1);
  auto applied = store_->AppliedIndex(kDescriptorGroupId);
  if (!applied.ok()) return applied.status();
  TESSERA_RETURN_IF_ERROR(store_->Apply(
      kDescriptorGroupId, *applied + 1,
      {storage::Mutation::Put(DescriptorKey(narrowed.group_id()), narrowed.SerializeAsString())}));
  spdlog::info("node.descriptor_narrowed group={} epoch={}", narrowed.group_id(), narrowed.epoch());
  *descriptor = std::move(narrowed);
  return Status::Ok();
}

void ReplicationHost::StartSplitChild(uint64_t child) {
  boost::asio::post(io_, [this, child] {
    std::lock_guard lock(mu_);
    if (stopped_ || groups_.count(child)) return;
    auto stored = store_->Get(kDescriptorGroupId, DescriptorKey(child));
    pb::PartitionDescriptor descriptor;
    if (!stored.ok() || !descriptor.ParseFromString(*stored)) {
      spdlog::error("node.split_child_not_started child={} reason=\"no stored descriptor\"", child);
      return;
    }
    const Status started = StartGroupLocked(descriptor);
    if (!started.ok()) {
      spdlog::error("node.split_child_not_started child={} reason=\"{}\"", child,
                    started.ToString());
      return;
    }
    spdlog::info("node.split_child_started child={} table={}", child, descriptor.table());
  });
}

std::shared_ptr<GroupHost> ReplicationHost::Find(uint64_t group_id) const {
  std::lock_guard lock(mu_);
  const auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : it->second.host;
}

bool ReplicationHost::DescriptorAllows(
    uint64_t group_id, const std::function<bool(const pb::PartitionDescriptor&)>& check) const {
  std::lock_guard lock(mu_);
  const auto it = groups_.find(group_id);
  return it == groups_.end() || check(it->second.descriptor);
}

std::vector<HostedGroup> ReplicationHost::Groups() const {
  std::lock_guard lock(mu_);
  std::vector<HostedGroup> out;
  out.reserve(groups_.size());
  for (const auto& [id, g] : groups_) out.push_back(g);
  return out;
}

void ReplicationHost::DeliverBatch(pb::ConsensusBatch batch) {
  for (pb::Message& message : *batch.mutable_messages()) {
    std::shared_ptr<GroupHost> host =
        message.to() == options_.self_id ? Find(message.group_id()) : nullptr;
    if (!host) {
      unknown_group_.Increment();
      continue;
    }
    host->Deliver(std::move(message));
  }
}

void ReplicationHost::Stop() {
  std::lock_guard lock(mu_);
  if (stopped_) return;
  stopped_ = true;
  if (sender_) sender_->Stop();
  for (auto& [id, g] : groups_) g.host->Stop();
}

}  // namespace tessera::node
