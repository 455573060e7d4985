// ReplicationHost: the group-hosting part of a process that runs replication
// groups (a storage node; a meta replica reuses it for its own group). It
// owns the process's NodeStore, one GroupHost per hosted group, and the
// BatchingMessageSender their outbound consensus messages go through. It
// knows nothing of the RPC methods that reach the groups (NodeServer wires
// those).
//
// Contract:
//  1. Open opens the store and starts every group whose descriptor is
//     stored, so a restarted process hosts the same groups again.
//  2. CreateGroup is idempotent: a group already hosted is left as it is
//     (OK). Otherwise it persists the descriptor, then starts the group with
//     membership = the descriptor's replica node ids as voters (used only
//     when the store holds no state for the group).
//  3. Descriptors live in the NodeStore's applied state of the reserved
//     group id 0 (kDescriptorGroupId), key "group/" + 8-byte big-endian
//     group id, value a serialized pb::PartitionDescriptor, written with
//     NodeStore::Apply (one applied index per change). That write is WAL-
//     unsynced; the group's first synced log write (its first election)
//     makes it durable. Group 0 never runs consensus.
//  4. DeliverBatch hands each message to its group's GroupHost; messages for
//     groups not hosted here are counted (tessera_consensus_unknown_group_total)
//     and dropped.
//  5. Every group reports streamed-snapshot transfers to one process-wide
//     SnapshotCounters (snapshot_transfer.h); installs the store finished at
//     open count as resumed.
//  6. Autoadmin fencing: the highest autoadmin lease epoch any caller
//     presented is kept in group 0 (key "autoadmin/epoch", 8 bytes big-
//     endian) and survives restarts; an action presenting a lower one is
//     refused with StaleEpoch and logged.
//  7. DropGroup stops the group on its strand (GroupHost::StopForRemoval,
//     so no write of the group can follow), deletes its descriptor and then
//     every record of the group (NodeStore::RemoveGroup, durable, behind
//     the group's earlier log writes in the FIFO writer). Unavailable while
//     the group installs a snapshot. It blocks, so it runs off the io
//     threads.
//  8. A descriptor's replicas with role LEARNER start as learners in the
//     bootstrap membership (a replica being added to a live group); the
//     rest are voters.
//  9. Stop (idempotent) stops the sender and every group; groups' pending
//     callbacks fail with Aborted. The destructor must run after the
//     io_context's threads have stopped (handlers may reference the store).
// 10. Splits (docs/partition-splits.md "Apply"): just before a group
//     applies a split entry, its descriptor is narrowed to [start, S) (in
//     memory at once, so reads of the moved keys are refused from then on)
//     and the child's [S, end) is made (same replicas, both at epoch + 1);
//     both are written in the split's synced first batch. Once the split
//     applied, the child is started here (as at a restart: from its stored
//     descriptor and state, at the split slot + 1).
// 11. CreateSplitChild (docs/partition-splits.md step 6) creates the child
//     of a split of `parent` only where that cannot race the split's apply:
//     the child hosted -> OK; its descriptor stored (this replica applied
//     the split) -> started from it once no split marker of the parent is
//     left (Unavailable while one is); the parent hosted here and its
//     range (stored range end; a log replica's descriptor) already ending
//     at the child's start (this replica skipped the entry through a
//     snapshot taken after it) -> created empty, as CreateGroup; the
//     parent hosted here and not yet narrowed -> Unavailable (it has not
//     reached the split slot; ask again); the parent not hosted here ->
//     created empty.
// 12. A group that stopped on a disk error (GroupHost::StoppedOnDiskError:
//     a log write or an apply failed) is started afresh, as at a process
//     start, by RestartFailedGroups once the store writes again: the old
//     host is stopped for good (StopForRemoval: nothing of it reaches the
//     store after), a probe write (NodeStore::ProbeWrites) must succeed
//     (behind every write the old host submitted: FIFO writer), then a new
//     host starts from the stored descriptor and state. A group installing
//     a snapshot is left for a later call. The durable state is what a
//     crash would have left, so the restart is as safe as a restart of the
//     process, and the rest of the node keeps serving meanwhile.
//
// Thread safety: every method may be called from any thread; mu_ guards the
// group map and the descriptor writes.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "common/metrics.h"
#include "common/result.h"
#include "node/batching_sender.h"
#include "node/group_host.h"
#include "storage/node_store.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::node {

inline constexpr storage::GroupId kDescriptorGroupId = 0;

struct ReplicationHostOptions {
  consensus::ReplicaId self_id = 0;  // this process's id in the layout
  storage::NodeStoreOptions store;
  // Timings and compaction knobs of every group; consensus.self and
  // consensus.group_id are set per group, random_seed is mixed with both.
  GroupHostOptions group_defaults;
  // Last say on a group's options (observers, timings); may be empty.
  std::function<void(const pb::PartitionDescriptor&, GroupHostOptions&)> customize_group;
  // Where batches of outbound consensus messages go.
  SendBatchFn send_batch;
  BatchingSenderOptions sender;
};

struct HostedGroup {
  pb::PartitionDescriptor descriptor;
  std::shared_ptr<GroupHost> host;
};

class ReplicationHost {
 public:
  // `io` and `metrics` must outlive the host. Errors: the store's (Open,
  // recovery), Corruption for a stored descriptor that does not parse.
  static Result<std::unique_ptr<ReplicationHost>> Open(boost::asio::io_context& io,
                                                       metrics::Registry& metrics,
                                                       ReplicationHostOptions options);
  ~ReplicationHost();
  ReplicationHost(const ReplicationHost&) = delete;
  ReplicationHost& operator=(const ReplicationHost&) = delete;

  // See contract 2. InvalidArgument for group id 0, no replicas, too many,
  // duplicates, or a replica set without this process; Unavailable after
  // Stop; Throttled beyond limits::kHostedGroupsMax groups.
  Status CreateGroup(const pb::PartitionDescriptor& descriptor);
  // See contract 11; the errors of CreateGroup, and Unavailable while the
  // parent's replica here has not reached (or is applying) the split.
  Status CreateSplitChild(const pb::PartitionDescriptor& child, uint64_t parent);
  // See contract 6. OK when `epoch` >= the highest seen (which becomes
  // `epoch`); StaleEpoch otherwise; the store's errors.
  Status AdmitAutoadminEpoch(uint64_t epoch);
  // See contract 7. true: dropped; false: not hosted here.
  Result<bool> DropGroup(uint64_t group_id);
  // See contract 12. The groups restarted; none when no group stopped on
  // a disk error or the store still fails writes. Blocks: never call it on
  // an io thread.
  std::vector<uint64_t> RestartFailedGroups();
  // The group's host, or null when not hosted.
  std::shared_ptr<GroupHost> Find(uint64_t group_id) const;
  // Whether `check` accepts the group's stored descriptor (its range:
  // partition_range.h); true when the group is not hosted. `check` runs
  // under mu_ and must be quick.
  bool DescriptorAllows(uint64_t group_id,
                        const std::function<bool(const pb::PartitionDescriptor&)>& check) const;
  // Every hosted group, by group id.
  std::vector<HostedGroup> Groups() const;
  // See contract 4.
  void DeliverBatch(pb::ConsensusBatch batch);
  void Stop();

  storage::NodeStore& store() { return *store_; }
  BatchingMessageSender& sender() { return *sender_; }
  consensus::ReplicaId self_id() const { return options_.self_id; }

 private:
  ReplicationHost(boost::asio::io_context& io, metrics::Registry& metrics,
                  ReplicationHostOptions options);
  Status RestoreGroups();
  // Starts a group; mu_ held.
  Status StartGroupLocked(const pb::PartitionDescriptor& descriptor);
  // Contract 2 with mu_ held.
  Status CreateGroupLocked(const pb::PartitionDescriptor& descriptor);
  // Whether the parent's replica here (hosted, not stored with the child)
  // already ends its range at `split_key`; mu_ held.
  Result<bool> ParentNarrowedLocked(const HostedGroup& parent, const std::string& split_key);
  // Contract 10, on the parent's strand: narrows the parent's descriptor
  // in memory and returns the descriptor writes of the split's first batch.
  Result<std::vector<storage::GroupMutation>> SplitDescriptors(uint64_t parent,
                                                               const pb::KvSplit& split);
  // Contract 10: starts the child (its descriptor is stored), off the strand.
  void StartSplitChild(uint64_t child);
  // Narrows the hosted descriptor of `group` to end at `end_key` (stored in
  // group 0, then in memory; epoch + 1) when `end_key` lies inside its
  // range; otherwise nothing. For a replica that learnt of a split without
  // applying it: a snapshot install, a log replica, a restart after either.
  Status NarrowDescriptor(uint64_t group, const std::string& end_key);
  // Writes the narrowed descriptor; mu_ held.
  Status StoreNarrowedLocked(pb::PartitionDescriptor* descriptor, const std::string& end_key);

  boost::asio::io_context& io_;
  const ReplicationHostOptions options_;
  metrics::Counter& unknown_group_;
  SnapshotCounters snapshot_counters_;
  std::unique_ptr<storage::NodeStore> store_;
  std::unique_ptr<BatchingMessageSender> sender_;
  mutable std::mutex mu_;  // guards groups_, stopped_, group 0 writes, autoadmin_epoch_
  std::map<uint64_t, HostedGroup> groups_;
  uint64_t autoadmin_epoch_ = 0;  // contract 6
  bool stopped_ = false;
};

// Key of a group's descriptor in group 0's applied state.
std::string DescriptorKey(uint64_t group_id);

}  // namespace tessera::node
