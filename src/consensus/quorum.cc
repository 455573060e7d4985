#include "consensus/quorum.h"

#include <algorithm>
#include <set>

namespace tessera::consensus {
namespace {

bool Contains(const google::protobuf::RepeatedField<uint32_t>& ids, ReplicaId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

std::set<ReplicaId> ToSet(const google::protobuf::RepeatedField<uint32_t>& ids) {
  return std::set<ReplicaId>(ids.begin(), ids.end());
}

}  // namespace

bool IsVoter(const pb::Membership& membership, ReplicaId id) {
  return Contains(membership.voters(), id);
}

bool IsMember(const pb::Membership& membership, ReplicaId id) {
  return IsVoter(membership, id) || Contains(membership.learners(), id);
}

bool IsLogOnly(const pb::Membership& membership, ReplicaId id) {
  return Contains(membership.log_only(), id);
}

int FullVoterCount(const pb::Membership& membership) {
  int full = 0;
  for (ReplicaId id : membership.voters()) full += IsLogOnly(membership, id) ? 0 : 1;
  return full;
}

bool HasQuorum(const std::vector<const pb::Membership*>& memberships,
               const std::function<bool(ReplicaId)>& yes) {
  for (const pb::Membership* m : memberships) {
    if (m->voters_size() == 0) return false;
    int votes = 0;
    for (ReplicaId id : m->voters()) votes += yes(id) ? 1 : 0;
    if (votes * 2 <= m->voters_size()) return false;
  }
  return !memberships.empty();
}

uint64_t QuorumValue(const std::vector<const pb::Membership*>& memberships,
                     const std::function<uint64_t(ReplicaId)>& value_of) {
  uint64_t result = UINT64_MAX;
  for (const pb::Membership* m : memberships) {
    if (m->voters_size() == 0) return 0;
    std::vector<uint64_t> values;
    values.reserve(m->voters_size());
    for (ReplicaId id : m->voters()) values.push_back(value_of(id));
    std::sort(values.begin(), values.end(), std::greater<>());
    // values[k] is reached by k + 1 voters; a majority is size / 2 + 1.
    result = std::min(result, values[values.size() / 2]);
  }
  return memberships.empty() ? 0 : result;
}

std::vector<ReplicaId> AllMembers(const std::vector<const pb::Membership*>& memberships) {
  std::set<ReplicaId> all;
  for (const pb::Membership* m : memberships) {
    all.insert(m->voters().begin(), m->voters().end());
    all.insert(m->learners().begin(), m->learners().end());
  }
  return std::vector<ReplicaId>(all.begin(), all.end());
}

bool IsSingleStepChange(const pb::Membership& current, const pb::Membership& next) {
  const auto cur_v = ToSet(current.voters()), cur_l = ToSet(current.learners());
  const auto nxt_v = ToSet(next.voters()), nxt_l = ToSet(next.learners());
  if (nxt_v.size() != static_cast<size_t>(next.voters_size()) ||
      nxt_l.size() != static_cast<size_t>(next.learners_size()) || nxt_v.empty()) {
    return false;  // duplicates, or no voter left
  }
  for (ReplicaId id : nxt_v) {
    if (nxt_l.count(id)) return false;  // both voter and learner
  }
  if (FullVoterCount(next) == 0) return false;  // nobody left who holds the state
  std::set<ReplicaId> cur_all = cur_v, nxt_all = nxt_v;
  cur_all.insert(cur_l.begin(), cur_l.end());
  nxt_all.insert(nxt_l.begin(), nxt_l.end());
  const auto cur_lo = ToSet(current.log_only()), nxt_lo = ToSet(next.log_only());
  if (nxt_lo.size() != static_cast<size_t>(next.log_only_size()) ||
      !std::includes(nxt_all.begin(), nxt_all.end(), nxt_lo.begin(), nxt_lo.end())) {
    return false;  // duplicates, or a log-only mark on a non-member
  }
  // The log-only marks of the members both name, unchanged.
  std::set<ReplicaId> kept_lo;
  for (ReplicaId id : cur_lo) {
    if (nxt_all.count(id)) kept_lo.insert(id);
  }
  // Add a learner: voters unchanged, exactly one new learner (marked
  // log-only or not).
  if (nxt_v == cur_v && nxt_all.size() == cur_all.size() + 1 &&
      std::includes(nxt_l.begin(), nxt_l.end(), cur_l.begin(), cur_l.end())) {
    std::set<ReplicaId> added_lo;
    for (ReplicaId id : nxt_lo) {
      if (!cur_all.count(id)) added_lo.insert(id);
    }
    std::set<ReplicaId> old_lo(nxt_lo);
    for (ReplicaId id : added_lo) old_lo.erase(id);
    return old_lo == cur_lo && added_lo.size() <= 1;
  }
  // Promote: one learner becomes a voter, membership set unchanged.
  if (nxt_all == cur_all && nxt_v.size() == cur_v.size() + 1 &&
      std::includes(nxt_v.begin(), nxt_v.end(), cur_v.begin(), cur_v.end())) {
    return nxt_lo == cur_lo;
  }
  // Remove: exactly one replica gone, nobody's role changed.
  if (nxt_all.size() + 1 == cur_all.size() &&
      std::includes(cur_v.begin(), cur_v.end(), nxt_v.begin(), nxt_v.end()) &&
      std::includes(cur_l.begin(), cur_l.end(), nxt_l.begin(), nxt_l.end())) {
    return nxt_lo == kept_lo;
  }
  return false;
}

}  // namespace tessera::consensus
