// Quorum arithmetic over one or more memberships. While a membership change
// is uncommitted a decision needs a majority of voters in EVERY membership of
// the set (old and new), which keeps single-replica changes safe even when
// replicas disagree about which one is in force. Learners never count.
//
// Pure functions; thread-safe.
#pragma once

#include <functional>
#include <vector>

#include "consensus/options.h"
#include "tessera/consensus.pb.h"

namespace tessera::consensus {

bool IsVoter(const pb::Membership& membership, ReplicaId id);
bool IsMember(const pb::Membership& membership, ReplicaId id);
// A log replica: a member that keeps only the log (pb::Membership.log_only).
bool IsLogOnly(const pb::Membership& membership, ReplicaId id);
// Voters that hold the state (not log-only): the ones that may lead.
int FullVoterCount(const pb::Membership& membership);

// True when `yes` holds for a majority of voters of every membership.
bool HasQuorum(const std::vector<const pb::Membership*>& memberships,
               const std::function<bool(ReplicaId)>& yes);

// The largest value v such that a majority of voters of every membership
// report a value >= v (e.g. the highest slot a quorum has durably matched).
uint64_t QuorumValue(const std::vector<const pb::Membership*>& memberships,
                     const std::function<uint64_t(ReplicaId)>& value_of);

// Every replica (voter or learner) named by any membership, ascending, once.
std::vector<ReplicaId> AllMembers(const std::vector<const pb::Membership*>& memberships);

// True when `next` differs from `current` by exactly one single-replica
// step: add a learner (log-only or not), promote a learner to voter, or
// remove a replica; a member's log-only mark never changes while it stays,
// and `next` keeps at least one voter that is not log-only.
bool IsSingleStepChange(const pb::Membership& current, const pb::Membership& next);

}  // namespace tessera::consensus
