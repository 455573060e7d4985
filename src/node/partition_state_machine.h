// PartitionStateMachine: the deterministic key-value state machine of one
// partition's replication group. Every replica applies the same committed
// entries in slot order and reaches the same state: a KvCommand's conditions
// are checked against the state as of the previous slot, and if all hold its
// writes take effect with the entry's slot as the version of every written
// key. A command that does not parse is applied as a no-op that reports
// "not applied" — the same on every replica.
//
// Splits (docs/partition-splits.md): a KvSplit command is applied by
// NodeStore::ApplySplit (synced, blocking) after the commands before it;
// from then on a command with a key at or above the group's range end
// (NodeStore::RangeEnd) is applied as not applied with wrong_partition set,
// on every replica alike.
//
// Thread safety: none; owned by the group's executor. Reads (Get, Scan) may
// run on any thread concurrently with Apply (NodeStore reads are safe), and
// see the state as of some applied index.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "storage/node_store.h"
#include "tessera/consensus.pb.h"
#include "tessera/kv.pb.h"

namespace tessera::node {

using storage::GroupId;
using consensus::Slot;

// What a split's apply needs from the host (split_apply.h builds it): the
// parent's membership, the child's log base membership, and the writes of
// the descriptors in group 0 that go into the split's first batch.
struct SplitPlan {
  pb::Membership membership;
  std::vector<storage::GroupMutation> descriptor_writes;
};
// Called on the group's executor for each split entry before it applies;
// an error stops the apply (as a storage error).
using SplitPrepareFn = std::function<Result<SplitPlan>(const pb::KvSplit& split, Slot slot)>;
// Called after a split entry applied (the child's state is durable).
using SplitAppliedFn = std::function<void(const pb::KvSplit& split, Slot slot)>;

struct SlotResult {
  Slot slot = 0;
  uint64_t request_id = 0;
  consensus::ReplicaId proposer = 0;  // with request_id, whose proposal this was
  pb::KvApplyResult result;
};

class PartitionStateMachine {
 public:
  PartitionStateMachine(storage::NodeStore* store, GroupId group) : store_(store), group_(group) {}

  // Applies `entries` (committed, contiguous, in slot order, all above the
  // stored applied index) in one NodeStore::Apply, which also advances the
  // applied index to the last slot. Returns the result of every command
  // entry. A storage error leaves the state as it was (all or nothing),
  // except that a split entry first stores the commands before it, and a
  // split that failed after its marker is finished by NodeStore::Open.
  Result<std::vector<SlotResult>> Apply(const std::vector<pb::Entry>& entries);
  // A log replica's apply: the state stays empty and only the applied
  // index advances to `last` (above the stored one), so the log below it
  // may be compacted like any replica's.
  Status SkipTo(Slot last);

  // The record of `key`, or nullopt when absent. Corruption when the stored
  // record does not parse.
  Result<std::optional<pb::KvRecord>> Get(const std::string& key) const;

  // Keys in [start_key, end_key) (empty end: to the end), at most `limit`.
  // resume_key is set when the limit cut the scan short. Items whose key
  // `wants_value` refuses carry the key only (empty value, version 0): a
  // listing skips records it does not read without paying for them.
  Result<pb::KvScanResponse> Scan(const std::string& start_key, const std::string& end_key,
                                  uint32_t limit,
                                  const storage::ValueFilter& wants_value = {}) const;
  // A stored record read in place; its view lives only during the visit.
  struct RecordView {
    std::string_view value;
    uint64_t version = 0;
  };
  // One row of VisitRows: the key and its record, null for a row
  // `wants_value` refused. Returns false to end the visit after this row.
  using RowVisitor = std::function<bool(std::string_view key, const RecordView* record)>;
  // Visits the rows Scan would return, without a resume key and without
  // copying them: at most `limit` (1..kScanItemsMax) rows in key order,
  // until `visit` returns false.
  // Corruption when a stored record does not parse.
  Status VisitRows(std::string_view start_key, std::string_view end_key, size_t limit,
                   const storage::ValueFilter& wants_value, const RowVisitor& visit) const;

  GroupId group() const { return group_; }
  // For reads, checked in the state they read (a split entry may apply
  // while a STRONG read waits for its lease or index, after the node
  // checked the request against the group's descriptor): WrongPartition
  // when `key` is at or past the range end a split stored, or when an
  // exclusive `end_key` (empty: none) reaches past it. On the group's
  // executor only (ReadState's callbacks): they use the cached range end.
  Status CheckKeyInRange(std::string_view key) const;
  Status CheckEndInRange(std::string_view end_key) const;
  // Forgets the cached range end: the host calls it after a snapshot
  // replaced the state (the installed range end may differ).
  void ForgetRangeEnd() { range_end_.reset(); }
  // The host's split hooks; without them a split applies with an empty
  // child membership and no descriptor writes (tests).
  void set_split_hooks(SplitPrepareFn prepare, SplitAppliedFn applied) {
    split_prepare_ = std::move(prepare);
    split_applied_ = std::move(applied);
  }

 private:
  // The group's range end (cached after the first read; a split updates it).
  Result<std::optional<std::string>> RangeEnd() const;
  // Applies one split entry; its result (not applied when the split is
  // invalid for this group's state, the same on every replica).
  Result<pb::KvApplyResult> ApplySplit(const pb::KvSplit& split, Slot slot);

  storage::NodeStore* store_;
  GroupId group_;
  mutable std::optional<std::optional<std::string>> range_end_;  // RangeEnd's cache
  SplitPrepareFn split_prepare_;
  SplitAppliedFn split_applied_;
};

// Encodes a KvBatch as the command of a log entry.
std::string EncodeCommand(const pb::KvBatch& batch);

}  // namespace tessera::node
