#include "consensus/membership_step.h"

#include <algorithm>
#include <string>

#include "consensus/quorum.h"

namespace tessera::consensus {
namespace {

void Erase(google::protobuf::RepeatedField<uint32_t>* ids, ReplicaId id) {
  ids->erase(std::remove(ids->begin(), ids->end(), id), ids->end());
}

}  // namespace

Result<std::optional<pb::Membership>> NextMembership(const pb::Membership& current,
                                                     MembershipStep step, ReplicaId replica) {
  const bool voter = IsVoter(current, replica);
  const bool learner = IsMember(current, replica) && !voter;
  const std::string name = "replica " + std::to_string(replica);
  pb::Membership next = current;
  switch (step) {
    case MembershipStep::kAddLearner:
    case MembershipStep::kAddLogLearner: {
      const bool log_only = step == MembershipStep::kAddLogLearner;
      if (voter) return Status::InvalidArgument(name + " is a voter");
      if (learner && IsLogOnly(current, replica) != log_only) {
        return Status::InvalidArgument(name + " is already a learner" +
                                       (log_only ? " that holds the state" : " that keeps only the log"));
      }
      if (learner) return std::optional<pb::Membership>();
      if (log_only && current.log_only_size() > 0) {
        return Status::InvalidArgument("the group already has a log replica (" +
                                       std::to_string(current.log_only(0)) + ")");
      }
      next.add_learners(replica);
      if (log_only) next.add_log_only(replica);
      break;
    }
    case MembershipStep::kPromote:
      if (voter) return std::optional<pb::Membership>();
      if (!learner) return Status::InvalidArgument(name + " is not a learner");
      Erase(next.mutable_learners(), replica);
      next.add_voters(replica);
      break;
    case MembershipStep::kRemove:
      if (!voter && !learner) return std::optional<pb::Membership>();
      if (voter && !IsLogOnly(current, replica) && FullVoterCount(current) == 1) {
        return Status::InvalidArgument("cannot remove the last voter that holds the state");
      }
      Erase(next.mutable_voters(), replica);
      Erase(next.mutable_learners(), replica);
      Erase(next.mutable_log_only(), replica);
      break;
  }
  return std::optional<pb::Membership>(std::move(next));
}

}  // namespace tessera::consensus
