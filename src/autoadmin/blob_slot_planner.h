// PlanBlobSlots: which blob slots move off the storage nodes that lost them,
// as a pure function of the slot map in use and the nodes' health
// (docs/autoadmin.md, "Blob copies").
//
// Contract: every slot with a replica on a dead or draining node gets that
// replica replaced by a target:
//   1. a healthy, not draining node of the same AZ that does not hold the
//      slot yet, the one holding the fewest slots (counting the moves
//      planned so far, so a dead node's slots spread over its AZ; ties to
//      the lower node id);
//   2. when the AZ has none, such a node of another AZ, preferring the AZs
//      the slot's other replicas do not use (the widest spread left), then
//      the fewest slots;
//   3. no candidate at all: the slot keeps its replicas (its other copies
//      stay; the next round looks again).
//   4. a slot with two replicas in one AZ (placed by rule 2) while a
//      healthy, not draining node of an AZ the slot does not use exists:
//      the doubled replica on the node holding more slots (ties: the higher
//      id) moves there, the fewest slots first. With fewer AZs than
//      replicas this never applies.
//   5. spreading: while no slot has a replica on a lost node or on one that
//      does not answer, a replica on a node holding at least two slots more
//      than a healthy, not draining node of the same AZ that does not hold
//      the slot moves there (a node that came back empty, or was drained
//      and undrained, gets its share back), at most kSpreadSlotsPerRound
//      slots a round so that the copies follow at the repairers' pace.
// A slot whose replicas include several lost nodes has each replaced. The
// answer lists each changed slot once, ascending, with its full new replica
// list in (AZ, node id) order; nodes the view does not know are taken as
// healthy (never moved off).
//
// Thread safety: a pure function.
#pragma once

#include <map>
#include <vector>

#include "autoadmin/cluster_view.h"
#include "blob/blob_slot_map.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::autoadmin {

inline constexpr size_t kSpreadSlotsPerRound = 64;

std::vector<pb::BlobSlotReplicas> PlanBlobSlots(const blob::BlobSlotMap& map,
                                                const std::map<uint32_t, NodeView>& nodes);

}  // namespace tessera::autoadmin
