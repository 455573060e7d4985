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
  pb::Membership next = current;
  switch (step) {
    case MembershipStep::kAddLearner:
      if (learner) return std::optional<pb::Membership>();
      if (voter) return Status::InvalidArgument("replica " + std::to_string(replica) + " is a voter");
      next.add_learners(replica);
      break;
    case MembershipStep::kPromote:
      if (voter) return std::optional<pb::Membership>();
      if (!learner) {
        return Status::InvalidArgument("replica " + std::to_string(replica) + " is not a learner");
      }
      Erase(next.mutable_learners(), replica);
      next.add_voters(replica);
      break;
    case MembershipStep::kRemove:
      if (!voter && !learner) return std::optional<pb::Membership>();
      if (voter && current.voters_size() == 1) {
        return Status::InvalidArgument("cannot remove the last voter");
      }
      Erase(next.mutable_voters(), replica);
      Erase(next.mutable_learners(), replica);
      break;
  }
  return std::optional<pb::Membership>(std::move(next));
}

}  // namespace tessera::consensus
