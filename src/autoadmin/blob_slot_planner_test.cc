// Goal: a lost node's blob slots move to healthy nodes of its AZ (else the
// widest spread left), spread evenly, and nothing moves for a node that is
// only unreachable.
#include "autoadmin/blob_slot_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "common/limits.h"

namespace tessera::autoadmin {
namespace {

struct NodeSpec {
  uint32_t id;
  std::string az;
  NodeHealth health = NodeHealth::kHealthy;
  bool draining = false;
};

struct Slots {
  blob::BlobSlotMap map;
  std::map<uint32_t, NodeView> nodes;
};

Slots Make(const std::vector<NodeSpec>& specs) {
  std::vector<blob::NodeRef> refs;
  std::map<uint32_t, NodeView> nodes;
  for (const NodeSpec& s : specs) {
    refs.push_back({s.id, s.az});
    NodeView& v = nodes[s.id];
    v.id = s.id;
    v.az = s.az;
    v.health = s.health;
    v.draining = s.draining;
  }
  return Slots{blob::BlobSlotMap::Build(refs).value(), nodes};
}

bool Holds(const pb::BlobSlotReplicas& r, uint32_t node) {
  return std::find(r.node_ids().begin(), r.node_ids().end(), node) != r.node_ids().end();
}

struct Case {
  const char* name;
  std::vector<NodeSpec> nodes;
  uint32_t lost;                    // 0: nothing is lost
  std::set<uint32_t> targets;       // the nodes the lost node's slots may go to
  bool every_slot_three_azs;        // every changed slot keeps three AZs
};

TEST(BlobSlotPlannerTest, LostNodesSlotsMoveAsTheRulesSay) {
  const NodeHealth kDead = NodeHealth::kDead;
  const std::vector<Case> cases = {
      {"dead node: its AZ's other node takes every slot",
       {{1, "az1"}, {2, "az1", kDead}, {3, "az2"}, {4, "az2"}, {5, "az3"}, {6, "az3"}},
       2, {1}, true},
      {"draining node: the same as dead",
       {{1, "az1"}, {2, "az1", NodeHealth::kHealthy, true}, {3, "az2"}, {4, "az2"}, {5, "az3"}, {6, "az3"}},
       2, {1}, true},
      {"unreachable (not yet dead): nothing moves",
       {{1, "az1"}, {2, "az1", NodeHealth::kUnreachable}, {3, "az2"}, {4, "az2"}, {5, "az3"}, {6, "az3"}},
       0, {}, true},
      {"no healthy node left in the AZ: another AZ's node that lacks the slot",
       {{1, "az1", NodeHealth::kUnreachable}, {2, "az1", kDead}, {3, "az2"}, {4, "az2"}, {5, "az3"}, {6, "az3"}},
       2, {3, 4, 5, 6}, false},
      {"four AZs, one node each: the AZ the slot does not use",
       {{1, "az1", kDead}, {2, "az2"}, {3, "az3"}, {4, "az4"}},
       1, {2, 3, 4}, true},
      {"nothing lost: no change",
       {{1, "az1"}, {2, "az2"}, {3, "az3"}},
       0, {}, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Slots s = Make(c.nodes);
    const std::vector<pb::BlobSlotReplicas> changes = PlanBlobSlots(s.map, s.nodes);
    if (c.lost == 0) {
      EXPECT_TRUE(changes.empty());
      continue;
    }
    EXPECT_EQ(changes.size(), s.map.SlotsOf(c.lost).size());
    uint32_t previous = 0;
    for (const pb::BlobSlotReplicas& r : changes) {
      if (&r != &changes.front()) {
        EXPECT_GT(r.slot(), previous);
      }
      previous = r.slot();
      EXPECT_FALSE(Holds(r, c.lost));
      ASSERT_EQ(static_cast<size_t>(r.node_ids_size()), s.map.replicas_per_slot());
      std::set<uint32_t> distinct(r.node_ids().begin(), r.node_ids().end());
      EXPECT_EQ(distinct.size(), s.map.replicas_per_slot());
      size_t from_targets = 0;
      std::set<std::string> azs;
      for (uint32_t n : r.node_ids()) {
        from_targets += c.targets.count(n);
        azs.insert(*s.map.AzOf(n));
      }
      EXPECT_GE(from_targets, 1u);
      if (c.every_slot_three_azs) {
        EXPECT_EQ(azs.size(), 3u);
      }
      // The replicas the slot kept are still there.
      for (uint32_t kept : s.map.ReplicasOf(r.slot())) {
        if (kept != c.lost) {
          EXPECT_TRUE(Holds(r, kept));
        }
      }
    }
  }
}

TEST(BlobSlotPlannerTest, ALostNodesSlotsSpreadEvenlyOverItsAz) {
  Slots s = Make({{1, "az1", NodeHealth::kDead}, {2, "az1"}, {3, "az1"}, {4, "az2"}, {5, "az3"}});
  const auto changes = PlanBlobSlots(s.map, s.nodes);
  ASSERT_EQ(changes.size(), s.map.SlotsOf(1).size());
  size_t to2 = 0, to3 = 0;
  for (const auto& r : changes) {
    to2 += Holds(r, 2);
    to3 += Holds(r, 3);
  }
  EXPECT_EQ(to2 + to3, changes.size());
  EXPECT_LE(std::max(to2, to3) - std::min(to2, to3), 1u);
}

TEST(BlobSlotPlannerTest, NoCandidateKeepsTheSlot) {
  // Three nodes, each AZ its own: with one dead there is nowhere to go.
  Slots s = Make({{1, "az1", NodeHealth::kDead}, {2, "az2"}, {3, "az3"}});
  EXPECT_TRUE(PlanBlobSlots(s.map, s.nodes).empty());
}

TEST(BlobSlotPlannerTest, PlannedSlotsApplyToTheMap) {
  Slots s = Make({{1, "az1"}, {2, "az1", NodeHealth::kDead}, {3, "az2"}, {4, "az2"}, {5, "az3"}, {6, "az3"}});
  pb::BlobSlotAssignments a;
  a.set_version(1);
  for (const auto& r : PlanBlobSlots(s.map, s.nodes)) *a.add_slots() = r;
  auto moved = s.map.WithAssignments(a);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_TRUE(moved->SlotsOf(2).empty());
  EXPECT_EQ(moved->SlotsOf(1).size(), limits::kBlobSlots);
  EXPECT_EQ(moved->version(), 1u);
}


TEST(BlobSlotPlannerTest, ASlotDoubledInOneAzMovesBackOnceAnotherAzHasANode) {
  // az2 had no healthy node: node 3's slots went to az1 and az3.
  Slots s = Make({{1, "az1"}, {2, "az1"}, {3, "az2", NodeHealth::kDead}, {5, "az3"}, {6, "az3"}});
  pb::BlobSlotAssignments a;
  a.set_version(1);
  for (const auto& r : PlanBlobSlots(s.map, s.nodes)) *a.add_slots() = r;
  ASSERT_GT(a.slots_size(), 0);
  const blob::BlobSlotMap moved = s.map.WithAssignments(a).value();
  // Still no healthy az2 node: nothing more moves.
  EXPECT_TRUE(PlanBlobSlots(moved, s.nodes).empty());
  // Node 3 is back: every slot doubled in one AZ gets a replica on it.
  s.nodes[3].health = NodeHealth::kHealthy;
  const auto back = PlanBlobSlots(moved, s.nodes);
  EXPECT_EQ(back.size(), static_cast<size_t>(a.slots_size()));
  for (const auto& r : back) {
    EXPECT_TRUE(Holds(r, 3)) << r.slot();
    std::set<std::string> azs;
    for (uint32_t n : r.node_ids()) azs.insert(*moved.AzOf(n));
    EXPECT_EQ(azs.size(), 3u) << r.slot();
  }
  // Two AZs only: doubling is the rule, nothing moves.
  Slots two = Make({{1, "az1"}, {2, "az1"}, {3, "az2"}, {4, "az2"}});
  EXPECT_TRUE(PlanBlobSlots(two.map, two.nodes).empty());
}

TEST(BlobSlotPlannerTest, SlotsSpreadOntoANodeThatCameBackEmptyAtAPacedRate) {
  Slots s = Make({{1, "az1"}, {2, "az1", NodeHealth::kDead}, {3, "az2"}, {5, "az3"}});
  uint64_t version = 0;
  auto apply = [&](const blob::BlobSlotMap& map, const std::vector<pb::BlobSlotReplicas>& changes) {
    pb::BlobSlotAssignments a;
    a.set_version(++version);
    for (uint32_t slot = 0; slot < limits::kBlobSlots; ++slot) {
      pb::BlobSlotReplicas& r = *a.add_slots();
      r.set_slot(slot);
      for (uint32_t n : map.ReplicasOf(slot)) r.add_node_ids(n);
    }
    for (const auto& c : changes) *a.mutable_slots(static_cast<int>(c.slot())) = c;
    return s.map.WithAssignments(a).value();
  };
  blob::BlobSlotMap map = apply(s.map, PlanBlobSlots(s.map, s.nodes));
  ASSERT_TRUE(map.SlotsOf(2).empty());
  s.nodes[2].health = NodeHealth::kHealthy;
  // Another node does not answer: nothing spreads yet.
  s.nodes[3].health = NodeHealth::kUnreachable;
  EXPECT_TRUE(PlanBlobSlots(map, s.nodes).empty());
  s.nodes[3].health = NodeHealth::kHealthy;
  size_t rounds = 0;
  for (;;) {
    const auto changes = PlanBlobSlots(map, s.nodes);
    if (changes.empty()) break;
    ASSERT_LE(changes.size(), kSpreadSlotsPerRound);
    for (const auto& c : changes) {
      EXPECT_TRUE(Holds(c, 2)) << c.slot();
      EXPECT_FALSE(Holds(c, 1)) << c.slot();
    }
    map = apply(map, changes);
    ASSERT_LT(++rounds, 100u);
  }
  const size_t on1 = map.SlotsOf(1).size(), on2 = map.SlotsOf(2).size();
  EXPECT_EQ(on1 + on2, limits::kBlobSlots);
  EXPECT_LE(std::max(on1, on2) - std::min(on1, on2), 1u);
  EXPECT_GE(rounds, limits::kBlobSlots / 2 / kSpreadSlotsPerRound);
}

}  // namespace
}  // namespace tessera::autoadmin
