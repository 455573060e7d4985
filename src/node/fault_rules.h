// Fault injection rules of a process (admin.faults), shared by every role
// that replicates: per-peer drop/delay on outbound traffic (rpc
// FaultInjector), slow or failing synced log writes (StorageFaults), and
// the process's clock offset and skew (common/fault_clock.h).
//
// Thread safety: as FaultInjector and StorageFaults (both thread-safe).
#pragma once

#include <vector>

#include "common/status.h"
#include "rpc/fault_injector.h"
#include "storage/group_commit_writer.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::node {

// Validates `rules`, then applies them: `replace` clears every peer rule
// first; a peer rule with no drop and no delay clears that peer; the disk
// knobs and the process's clock faults (common/fault_clock.h) always take
// the request's values. InvalidArgument changes nothing.
Status ApplyFaultRules(const pb::FaultRules& rules, rpc::FaultInjector& faults,
                       storage::StorageFaults& disk);

// The rules in force for `peers` and the disk.
pb::FaultRules FaultRulesInForce(const std::vector<uint32_t>& peers,
                                 const rpc::FaultInjector& faults,
                                 const storage::StorageFaults& disk);

}  // namespace tessera::node
