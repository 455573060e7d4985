// Table capacity in the meta group: validation of a TableCapacity and
// meta.update_table_capacity (docs/admission.md).
//
// The capacity lives in the table's descriptor (the "t/" record,
// docs/formats/meta-keys.md); an update rewrites that record in one
// conditional batch holding it at the version read, so two updates racing
// cannot both win, and no other field of the descriptor changes.
//
// Thread safety: UpdateTableCapacity blocks on the meta group: call it
// from the meta worker thread, never an io thread. The rest is pure.
#pragma once

#include "common/result.h"
#include "common/status.h"
#include "node/group_host.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::meta {

// InvalidArgument naming what is wrong: a provisioned capacity needs rcu
// and wcu in 1..limits::kTableCapacityUnitsMax; unset and on-demand carry
// none; an unknown mode.
Status ValidateTableCapacity(const pb::TableCapacity& capacity);

bool SameCapacity(const pb::TableCapacity& a, const pb::TableCapacity& b);

// "provisioned rcu=R wcu=W", "on-demand" or "unset".
std::string CapacityText(const pb::TableCapacity& capacity);

// Validates, then stores `request.capacity` in the table's descriptor.
// NotFound for an unknown table; Conflict when the descriptor changed
// meanwhile (after a few attempts); the group's errors (NotLeader with hint).
Result<pb::UpdateTableCapacityResponse> UpdateTableCapacity(
    node::GroupHost& group, const pb::UpdateTableCapacityRequest& request);

}  // namespace tessera::meta
