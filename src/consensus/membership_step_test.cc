// Goal: each single-replica step changes exactly one replica, is a no-op when
// already in effect, and refuses steps that do not apply.
#include "consensus/membership_step.h"

#include <gtest/gtest.h>

namespace tessera::consensus {
namespace {

pb::Membership Members(std::initializer_list<uint32_t> voters, std::initializer_list<uint32_t> learners) {
  pb::Membership m;
  for (uint32_t v : voters) m.add_voters(v);
  for (uint32_t l : learners) m.add_learners(l);
  return m;
}

std::string Str(const pb::Membership& m) {
  std::string s = "v";
  for (uint32_t v : m.voters()) s += std::to_string(v);
  s += "l";
  for (uint32_t l : m.learners()) s += std::to_string(l);
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
  };
  for (const Case& c : cases) {
    auto next = NextMembership(c.current, c.step, c.replica);
    const std::string got = !next.ok() ? "!" : !next->has_value() ? "=" : Str(**next);
    EXPECT_EQ(got, c.want) << Str(c.current) << " step " << static_cast<int>(c.step) << " r"
                           << c.replica;
  }
}

}  // namespace
}  // namespace tessera::consensus
