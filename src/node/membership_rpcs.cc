#include "node/membership_rpcs.h"

#include <spdlog/spdlog.h>

#include "node/rpc_handler_util.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::node {
namespace {

Result<MembershipStep> StepOf(pb::MembershipChangeKind kind) {
  switch (kind) {
    case pb::MEMBERSHIP_ADD_LEARNER: return MembershipStep::kAddLearner;
    case pb::MEMBERSHIP_ADD_LOG_LEARNER: return MembershipStep::kAddLogLearner;
    case pb::MEMBERSHIP_PROMOTE: return MembershipStep::kPromote;
    case pb::MEMBERSHIP_REMOVE: return MembershipStep::kRemove;
    default: break;
  }
  return Status::InvalidArgument("unknown membership change kind " + std::to_string(kind));
}

// Runs `job` on the admin thread; a full queue answers Throttled.
void SubmitOrFail(JobThread& jobs, const rpc::Responder& responder, std::function<void()> job) {
  const Status submitted = jobs.Submit(std::move(job));
  if (!submitted.ok()) responder.Fail(submitted);
}

}  // namespace

void ServeChangeMembership(ReplicationHost& replication, JobThread& admin_jobs,
                           const pb::Envelope& request, rpc::Responder responder) {
  pb::ChangeMembershipRequest change;
  if (!ParsePayload(request, responder, &change)) return;
  auto step = StepOf(change.kind());
  if (!step.ok()) return responder.Fail(step.status());
  if (change.replica_id() == 0) return responder.Fail(Status::InvalidArgument("replica_id is 0"));
  std::shared_ptr<GroupHost> host = FindGroupOrFail(replication, change.group_id(), responder);
  if (!host) return;
  SubmitOrFail(admin_jobs, responder, [&replication, host, change, step = *step, responder] {
    const Status admitted = replication.AdmitAutoadminEpoch(change.autoadmin_epoch());
    if (!admitted.ok()) return responder.Fail(admitted);
    host->ChangeMembership(
        step, change.replica_id(),
        [change, responder](Result<GroupHost::MembershipResult> result) {
          if (!result.ok()) return responder.Fail(result.status());
          spdlog::info("node.membership_changed group={} kind={} replica={} changed={} epoch={}",
                       change.group_id(), pb::MembershipChangeKind_Name(change.kind()),
                       change.replica_id(), result->changed, change.autoadmin_epoch());
          pb::ChangeMembershipResponse response;
          *response.mutable_voters() = result->membership.voters();
          *response.mutable_learners() = result->membership.learners();
          response.set_changed(result->changed);
          responder.Reply(response.SerializeAsString());
        });
  });
}

void ServeDropGroup(ReplicationHost& replication, JobThread& admin_jobs,
                    const pb::Envelope& request, rpc::Responder responder) {
  pb::DropGroupRequest drop;
  if (!ParsePayload(request, responder, &drop)) return;
  SubmitOrFail(admin_jobs, responder, [&replication, drop, responder] {
    const Status admitted = replication.AdmitAutoadminEpoch(drop.autoadmin_epoch());
    if (!admitted.ok()) return responder.Fail(admitted);
    auto dropped = replication.DropGroup(drop.group_id());
    if (!dropped.ok()) return responder.Fail(dropped.status());
    pb::DropGroupResponse response;
    response.set_dropped(*dropped);
    responder.Reply(response.SerializeAsString());
  });
}

void ServeTransferLeadership(ReplicationHost& replication, JobThread& admin_jobs,
                             const pb::Envelope& request, rpc::Responder responder) {
  pb::TransferLeadershipRequest transfer;
  if (!ParsePayload(request, responder, &transfer)) return;
  if (transfer.to_replica() == 0) return responder.Fail(Status::InvalidArgument("to_replica is 0"));
  std::shared_ptr<GroupHost> host = FindGroupOrFail(replication, transfer.group_id(), responder);
  if (!host) return;
  SubmitOrFail(admin_jobs, responder, [&replication, host, transfer, responder] {
    const Status admitted = replication.AdmitAutoadminEpoch(transfer.autoadmin_epoch());
    if (!admitted.ok()) return responder.Fail(admitted);
    host->TransferLeadership(transfer.to_replica(), [transfer, responder](Result<bool> started) {
      if (!started.ok()) return responder.Fail(started.status());
      spdlog::info("node.leadership_transfer group={} to={} already_leader={} epoch={}",
                   transfer.group_id(), transfer.to_replica(), !*started,
                   transfer.autoadmin_epoch());
      pb::TransferLeadershipResponse response;
      response.set_already_leader(!*started);
      responder.Reply(response.SerializeAsString());
    });
  });
}

}  // namespace tessera::node
