// The node's membership RPCs, asked for by the autoadmin (docs/autoadmin.md):
//   admin.change_membership  ChangeMembershipRequest -> ChangeMembershipResponse
//                            one single-replica step on a group this node
//                            leads (GroupHost::ChangeMembership), answered
//                            once the entry is chosen and applied here
//   admin.drop_group         DropGroupRequest -> DropGroupResponse
//                            stop a group and delete its data
//                            (ReplicationHost::DropGroup)
//   admin.transfer_leadership TransferLeadershipRequest ->
//                            TransferLeadershipResponse: the leader hands
//                            over to a caught-up voter
//                            (GroupHost::TransferLeadership), answered once
//                            started
// Each first admits the request's autoadmin epoch (the fencing token,
// ReplicationHost::AdmitAutoadminEpoch): a stale epoch is refused with
// StaleEpoch and nothing changes. Admitting the epoch and dropping a group
// write the store, so they run as jobs of `admin_jobs` (Throttled when its
// queue is full), never on the io threads.
#pragma once

#include "common/job_thread.h"
#include "node/replication_host.h"
#include "rpc/server.h"
#include "tessera/rpc.pb.h"

namespace tessera::node {

void ServeChangeMembership(ReplicationHost& replication, JobThread& admin_jobs,
                           const pb::Envelope& request, rpc::Responder responder);
void ServeDropGroup(ReplicationHost& replication, JobThread& admin_jobs,
                    const pb::Envelope& request, rpc::Responder responder);
void ServeTransferLeadership(ReplicationHost& replication, JobThread& admin_jobs,
                             const pb::Envelope& request, rpc::Responder responder);

}  // namespace tessera::node
