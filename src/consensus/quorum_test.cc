// Goal: quorum arithmetic over one or two memberships and single-step change
// validation behave as docs/consensus.md states.
#include "consensus/quorum.h"

#include <gtest/gtest.h>

#include <map>

namespace tessera::consensus {
namespace {

pb::Membership M(std::vector<ReplicaId> voters, std::vector<ReplicaId> learners = {}) {
  pb::Membership m;
  for (auto v : voters) m.add_voters(v);
  for (auto l : learners) m.add_learners(l);
  return m;
}

TEST(Quorum, MajorityOfVotersOnly) {
  auto m = M({1, 2, 3}, {4});
  EXPECT_TRUE(HasQuorum({&m}, [](ReplicaId id) { return id == 1 || id == 2; }));
  EXPECT_FALSE(HasQuorum({&m}, [](ReplicaId id) { return id == 1 || id == 4; }));
}

TEST(Quorum, BothMembershipsDuringChange) {
  auto old_m = M({1, 2, 3});
  auto new_m = M({1, 2, 3, 4});
  // {1,2} is a majority of the old set but not of the new one (needs 3 of 4).
  EXPECT_FALSE(HasQuorum({&old_m, &new_m}, [](ReplicaId id) { return id <= 2; }));
  EXPECT_TRUE(HasQuorum({&old_m, &new_m}, [](ReplicaId id) { return id <= 3; }));
}

TEST(Quorum, QuorumValueIsMinOverMemberships) {
  auto a = M({1, 2, 3});
  auto b = M({1, 2, 3, 4, 5});
  std::map<ReplicaId, uint64_t> match{{1, 10}, {2, 8}, {3, 5}, {4, 1}, {5, 1}};
  auto f = [&](ReplicaId id) -> uint64_t { return match[id]; };
  EXPECT_EQ(QuorumValue({&a}, f), 8u);
  EXPECT_EQ(QuorumValue({&b}, f), 5u);
  EXPECT_EQ(QuorumValue({&a, &b}, f), 5u);
}

TEST(Quorum, SingleStepChanges) {
  auto base = M({1, 2, 3});
  EXPECT_TRUE(IsSingleStepChange(base, M({1, 2, 3}, {4})));   // add learner
  EXPECT_TRUE(IsSingleStepChange(M({1, 2, 3}, {4}), M({1, 2, 3, 4})));  // promote
  EXPECT_TRUE(IsSingleStepChange(base, M({1, 2})));           // remove voter
  EXPECT_FALSE(IsSingleStepChange(base, M({1, 2, 3, 4})));    // voter straight in
  EXPECT_FALSE(IsSingleStepChange(base, M({1})));             // two removed
  EXPECT_FALSE(IsSingleStepChange(base, M({1, 2, 4})));       // swap
  EXPECT_FALSE(IsSingleStepChange(base, M({1, 2, 3}, {3})));  // both roles
  EXPECT_FALSE(IsSingleStepChange(M({1}), M({}, {1})));       // no voter left
}

}  // namespace
}  // namespace tessera::consensus
