// The blob GC's check of its GC records (docs/formats/blobs.md, "Garbage
// collection and repair"; docs/partition-splits.md, "_s3"): which blobs of
// a record its owner object `B K` still references.
//
// The owner rule: a GC record belongs to the partition that wrote it
// (`0 'g' slot`, s3-keys.md rule 3) and stays there when a split moves its
// owner to another group. Such a record is checked at the owner's current
// group (OwnerRefs, routed by the partition map), never against the local
// state, whose records of the owner the split removed: a retried put
// applied in the child after the split may name the same blob ids again.
//   1. owner inside the group's range: checked in the local state (the
//      same lease read that read the record);
//   2. owner outside it (at or past the range end a split stored): marked
//      `at_owner`, checked by CheckAtOwner after the read;
//   3. no answer from the owner's group (unreachable, no map, a stale map
//      answered WrongPartition, an error): the record is kept whole for a
//      later round; an error never reads as "unreferenced".
//
// Thread safety: CheckGcRecords runs on the group's executor (or wherever
// the state may be read); CheckAtOwner on the GC's worker thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "node/owner_refs.h"
#include "node/partition_state_machine.h"

namespace tessera::node {

// One GC record and what its check decided.
struct CheckedGcRecord {
  uint64_t gc_slot = 0;
  std::string owner;                      // `B K`; empty for bucket 0
  bool at_owner = false;                  // rule 2: not yet checked
  std::vector<std::string> blob_ids;      // every id of the record
  std::vector<std::string> referenced;    // kept (dropped from the record)
  std::vector<std::string> unreferenced;  // may be deleted
};

// The first limits::kGcRecordsPerRoundMax GC records of the partition,
// checked by rules 1 and 2. A record whose local check failed is left out
// (kept for a later round).
Result<std::vector<CheckedGcRecord>> CheckGcRecords(const PartitionStateMachine& state);

// Rule 2 and 3 for a record marked at_owner: fills referenced and
// unreferenced from the owner group's answer and clears at_owner; false
// (record unchanged) when no answer came.
bool CheckAtOwner(OwnerRefs& refs, CheckedGcRecord& record);

}  // namespace tessera::node
