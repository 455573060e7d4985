// MembershipStep: the single-replica membership changes (add a learner,
// add a log-only learner, promote a learner, remove a replica) as a pure
// function of the current
// membership, shared by the node (GroupHost::ChangeMembership) and the
// simulator's autoadmin driver.
//
// Thread safety: pure functions.
#pragma once

#include <optional>

#include "common/result.h"
#include "consensus/options.h"
#include "tessera/consensus.pb.h"

namespace tessera::consensus {

enum class MembershipStep { kAddLearner, kAddLogLearner, kPromote, kRemove };

// The membership after `step` for `replica`; nullopt when the step is
// already in effect (the learner exists, is a voter, is gone), so a
// repeated step changes nothing. InvalidArgument for a step that does not
// apply: add a voter as a learner, add a member again with another log-only
// mark, add a second log-only member (a group has at most one log replica),
// promote a replica that is not a learner, remove the last voter that
// holds the state.
Result<std::optional<pb::Membership>> NextMembership(const pb::Membership& current,
                                                     MembershipStep step, ReplicaId replica);

}  // namespace tessera::consensus
