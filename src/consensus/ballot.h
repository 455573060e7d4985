// Ballot order: (round, replica) lexicographically. (0, 0) is "none".
#pragma once


#include "tessera/consensus.pb.h"

namespace tessera::consensus {

inline bool BallotLess(const pb::Ballot& a, const pb::Ballot& b) {
  return a.round() != b.round() ? a.round() < b.round() : a.replica() < b.replica();
}
inline bool BallotEq(const pb::Ballot& a, const pb::Ballot& b) {
  return a.round() == b.round() && a.replica() == b.replica();
}
inline pb::Ballot MakeBallot(uint64_t round, uint32_t replica) {
  pb::Ballot b;
  b.set_round(round);
  b.set_replica(replica);
  return b;
}

}  // namespace tessera::consensus
