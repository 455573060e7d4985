// The node's split RPC, asked for by the split's driver (docs/partition-
// splits.md step 4):
//   admin.split_group  SplitGroupRequest -> SplitGroupResponse
//                      proposes the split entry (KvCommand.split) on a
//                      group this node leads (GroupHost::Write), answered
//                      once it applied here (the child is then started on
//                      this node, ReplicationHost contract 10)
//   admin.split_key    SplitKeyRequest -> SplitKeyResponse
//                      (step 2) the key that halves a group this node
//                      leads, from two passes over consistent views of its
//                      state, run as a job of `scanner` (never on a strand)
// admin.split_group first admits the request's autoadmin epoch (the fencing token,
// ReplicationHost::AdmitAutoadminEpoch) on the admin job thread, as the
// membership RPCs do (membership_rpcs.h); a stale epoch changes nothing.
#pragma once

#include "common/job_thread.h"
#include "node/replication_host.h"
#include "rpc/server.h"
#include "tessera/rpc.pb.h"

namespace tessera::node {

void ServeSplitGroup(ReplicationHost& replication, JobThread& admin_jobs,
                     const pb::Envelope& request, rpc::Responder responder);
void ServeSplitKey(ReplicationHost& replication, JobThread& scanner, const pb::Envelope& request,
                   rpc::Responder responder);

}  // namespace tessera::node
