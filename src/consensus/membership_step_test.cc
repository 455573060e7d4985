// Goal: each single-replica step changes exactly one replica, is a no-op when
// already in effect, and refuses steps that do not apply.
#include "consensus/membership_step.h"

#include <gtest/gtest.h>

#include "consensus/quorum.h"

namespace tessera::consensus {
namespace {

pb::Membership Members(std::initializer_list<uint32_t> voters, std::initializer_list<uint32_t> learners,
                       std::initializer_list<uint32_t> log_only = {}) {
  pb::Membership m;
  for (uint32_t v : voters) m.add_voters(v);
  for (uint32_t l : learners) m.add_learners(l);
  for (uint32_t o : log_only) m.add_log_only(o);
  return m;
}

std::string Str(const pb::Membership& m) {
  std::string s = "v";
  for (uint32_t v : m.voters()) s += std::to_string(v);
  s += "l";
  for (uint32_t l : m.learners()) s += std::to_string(l);
  if (m.log_only_size() > 0) s += "o";
  for (uint32_t o : m.log_only()) s += std::to_string(o);
  return s;
}

TEST(MembershipStep, Table) {
  struct Case {
    pb::Membership current;
    MembershipStep step;
    ReplicaId replica;
    const char* want;  // "=" in effect, "!" refused, else the new membership
  };
  const Case cases[] = {
      {Members({1, 2, 3}, {}), MembershipStep::kAddLearner, 4, "v123l4"},
      {Members({1, 2, 3}, {4}), MembershipStep::kAddLearner, 4, "="},
      {Members({1, 2, 3}, {}), MembershipStep::kAddLearner, 3, "!"},
      {Members({1, 2, 3}, {4}), MembershipStep::kPromote, 4, "v1234l"},
      {Members({1, 2, 3, 4}, {}), MembershipStep::kPromote, 4, "="},
      {Members({1, 2, 3}, {}), MembershipStep::kPromote, 4, "!"},
      {Members({1, 2, 3, 4}, {}), MembershipStep::kRemove, 2, "v134l"},
      {Members({1, 2, 3}, {4}), MembershipStep::kRemove, 4, "v123l"},
      {Members({1, 3, 4}, {}), MembershipStep::kRemove, 2, "="},
      {Members({1}, {}), MembershipStep::kRemove, 1, "!"},
      // Log replicas: added as log-only learners, promoted keeping the
      // mark, removed with it; one per group; never the last state holder.
      {Members({1, 2}, {}), MembershipStep::kAddLogLearner, 4, "v12l4o4"},
      {Members({1, 2}, {4}, {4}), MembershipStep::kAddLogLearner, 4, "="},
      {Members({1, 2}, {4}), MembershipStep::kAddLogLearner, 4, "!"},
      {Members({1, 2}, {4}, {4}), MembershipStep::kAddLearner, 4, "!"},
      {Members({1, 2, 4}, {}, {4}), MembershipStep::kAddLogLearner, 5, "!"},
      {Members({1, 2, 4}, {}, {4}), MembershipStep::kAddLogLearner, 4, "!"},
      {Members({1, 2}, {4}, {4}), MembershipStep::kPromote, 4, "v124lo4"},
      {Members({1, 2, 4}, {}, {4}), MembershipStep::kRemove, 4, "v12l"},
      {Members({1, 4}, {}, {4}), MembershipStep::kRemove, 1, "!"},
      {Members({1, 2, 4}, {}, {4}), MembershipStep::kRemove, 2, "v14lo4"},
  };
  for (const Case& c : cases) {
    auto next = NextMembership(c.current, c.step, c.replica);
    const std::string got = !next.ok() ? "!" : !next->has_value() ? "=" : Str(**next);
    EXPECT_EQ(got, c.want) << Str(c.current) << " step " << static_cast<int>(c.step) << " r"
                           << c.replica;
  }
}

TEST(MembershipStep, EveryStepIsASingleStepChange) {
  const pb::Membership memberships[] = {
      Members({1, 2, 3}, {}),         Members({1, 2}, {4}, {4}), Members({1, 2, 4}, {}, {4}),
      Members({1, 2, 4}, {5}, {4}),   Members({1, 2, 3, 4}, {}, {4}),
  };
  for (const pb::Membership& m : memberships) {
    for (MembershipStep step : {MembershipStep::kAddLearner, MembershipStep::kAddLogLearner,
                                MembershipStep::kPromote, MembershipStep::kRemove}) {
      for (ReplicaId id = 1; id <= 6; ++id) {
        auto next = NextMembership(m, step, id);
        if (!next.ok() || !next->has_value()) continue;
        EXPECT_TRUE(IsSingleStepChange(m, **next)) << Str(m) << " -> " << Str(**next);
      }
    }
  }
}

TEST(MembershipStep, LogOnlyMarksNeverChangeInPlace) {
  // Marking or unmarking a member that stays is not a single step.
  EXPECT_FALSE(IsSingleStepChange(Members({1, 2, 3}, {}), Members({1, 2, 3}, {}, {3})));
  EXPECT_FALSE(IsSingleStepChange(Members({1, 2, 4}, {}, {4}), Members({1, 2, 4}, {}, {})));
  EXPECT_FALSE(IsSingleStepChange(Members({1, 2}, {4}, {4}), Members({1, 2, 4}, {}, {})));
  // A mark on a non-member, or nobody left who holds the state.
  EXPECT_FALSE(IsSingleStepChange(Members({1, 2, 3}, {}), Members({1, 2, 3}, {4}, {5})));
  EXPECT_FALSE(IsSingleStepChange(Members({1, 4}, {}, {4}), Members({4}, {}, {4})));
  EXPECT_TRUE(IsSingleStepChange(Members({1, 2, 4}, {}, {4}), Members({1, 2}, {}, {})));
}

}  // namespace
}  // namespace tessera::consensus
