// Goal: the planner replaces dead voters add-before-evict, one step per
// group, and never acts against the safety rules.
#include "autoadmin/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>

namespace tessera::autoadmin {
namespace {

constexpr uint64_t kGroup = 1000;

// Six nodes: 1,2 in az1; 3,4 in az2; 5,6 in az3, all healthy.
ClusterView SixNodes() {
  ClusterView v;
  const char* azs[] = {"az1", "az1", "az2", "az2", "az3", "az3"};
  for (uint32_t id = 1; id <= 6; ++id) {
    v.nodes[id].id = id;
    v.nodes[id].az = azs[id - 1];
  }
  return v;
}

pb::Membership Members(std::initializer_list<uint32_t> voters,
                       std::initializer_list<uint32_t> learners = {}) {
  pb::Membership m;
  for (uint32_t v : voters) m.add_voters(v);
  for (uint32_t l : learners) m.add_learners(l);
  return m;
}

// Adds group kGroup (or `id`): meta's descriptor names `replicas` (learners
// as given), each member node reports it, `leader` leads with `membership`.
void AddGroup(ClusterView& v, uint32_t leader, const pb::Membership& membership,
              std::initializer_list<uint32_t> voters_in_meta,
              std::initializer_list<uint32_t> learners_in_meta = {}, uint64_t id = kGroup,
              uint64_t chosen = 500) {
  GroupView& g = v.groups[id];
  g.descriptor.set_table("kv");
  g.descriptor.set_group_id(id);
  g.descriptor.set_epoch(7);
  auto place = [&](uint32_t n, pb::ReplicaRole role) {
    pb::ReplicaPlacement* r = g.descriptor.add_replicas();
    r->set_node_id(n);
    r->set_az(v.nodes[n].az);
    r->set_role(role);
  };
  for (uint32_t n : voters_in_meta) place(n, pb::REPLICA_VOTER);
  for (uint32_t n : learners_in_meta) place(n, pb::REPLICA_LEARNER);
  auto report = [&](uint32_t n) {
    ReplicaReport& r = v.nodes[n].groups[id];
    r.role = n == leader ? "leader" : "follower";
    r.membership = membership;
    r.chosen = chosen;
    r.applied = chosen;
  };
  for (uint32_t n : membership.voters()) report(n);
  for (uint32_t n : membership.learners()) report(n);
  g.leader = leader;
}

// The tests of full replacements; log replicas have their own below.
PlannerOptions FullOnly() {
  PlannerOptions o;
  o.log_replicas = false;
  return o;
}

void Kill(ClusterView& v, uint32_t node) {
  v.nodes[node].health = NodeHealth::kDead;
  v.nodes[node].unreachable_for_ms = 60'000;
}

struct Expect {
  ActionKind kind;
  uint32_t node;
  uint32_t replica;
};

void ExpectOne(const std::vector<Action>& actions, Expect e, const char* what) {
  ASSERT_EQ(actions.size(), 1u) << what;
  EXPECT_EQ(ActionKindName(actions[0].kind), std::string(ActionKindName(e.kind))) << what;
  EXPECT_EQ(actions[0].node, e.node) << what;
  EXPECT_EQ(actions[0].replica, e.replica) << what;
}

TEST(Planner, HealthyGroupNeedsNothing) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5});
  EXPECT_TRUE(Plan(v, FullOnly()).empty());
}

TEST(Planner, WalksAReplacementStepByStep) {
  // Each case is one round: the view as the previous step left it.
  struct Case {
    const char* name;
    pb::Membership membership;
    std::initializer_list<uint32_t> voters_in_meta;
    std::initializer_list<uint32_t> learners_in_meta;
    bool target_hosts;  // node 4 created the group
    Expect expect;
  };
  const Case cases[] = {
      {"dead voter: add a replica in its AZ to meta", Members({1, 3, 5}), {1, 3, 5}, {}, false,
       {ActionKind::kAddReplica, 0, 4}},
      {"intent recorded: create it on the target", Members({1, 3, 5}), {1, 3, 5}, {4}, false,
       {ActionKind::kCreateReplica, 4, 4}},
      {"created: the leader adds the learner", Members({1, 3, 5}), {1, 3, 5}, {4}, true,
       {ActionKind::kAddLearner, 1, 4}},
      {"caught-up learner: promote", Members({1, 3, 5}, {4}), {1, 3, 5}, {4}, true,
       {ActionKind::kPromote, 1, 4}},
      {"promoted: meta mirrors it", Members({1, 3, 5, 4}), {1, 3, 5}, {4}, true,
       {ActionKind::kSyncDescriptor, 0, 0}},
      {"four voters: the dead one leaves", Members({1, 3, 5, 4}), {1, 3, 5, 4}, {}, true,
       {ActionKind::kRemove, 1, 3}},
      {"removed: meta mirrors it", Members({1, 5, 4}), {1, 3, 5, 4}, {}, true,
       {ActionKind::kSyncDescriptor, 0, 0}},
  };
  for (const Case& c : cases) {
    ClusterView v = SixNodes();
    AddGroup(v, 1, c.membership, c.voters_in_meta, c.learners_in_meta);
    if (c.target_hosts) v.nodes[4].groups[kGroup].applied = 499;
    Kill(v, 3);
    ExpectOne(Plan(v, FullOnly()), c.expect, c.name);
  }
  // Done: nothing more, and the dead node's replica is gone from meta.
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 5, 4}), {1, 5, 4});
  Kill(v, 3);
  EXPECT_TRUE(Plan(v, FullOnly()).empty());
}

TEST(Planner, AVoterRepairedInAnotherAzMovesBackOnceItsAzHasANode) {
  // Voters 1 and 2 share az1 (az2 had no healthy node when the group was
  // repaired); az2's nodes are healthy again.
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 2, 5}), {1, 2, 5});
  auto actions = Plan(v, FullOnly());
  ExpectOne(actions, {ActionKind::kAddReplica, 0, 3}, "a learner in the unused AZ");
  EXPECT_NE(actions[0].reason.find("move voter 2 back"), std::string::npos) << actions[0].reason;

  // While az2 has no healthy node, the group stays as it is.
  ClusterView down = SixNodes();
  AddGroup(down, 1, Members({1, 2, 5}), {1, 2, 5});
  Kill(down, 3);
  down.nodes[4].health = NodeHealth::kUnreachable;
  EXPECT_TRUE(Plan(down, FullOnly()).empty());

  // Promoted: of the four voters, the non-leader of the shared AZ leaves.
  ClusterView promoted = SixNodes();
  AddGroup(promoted, 1, Members({1, 2, 5, 3}), {1, 2, 5, 3});
  ExpectOne(Plan(promoted, FullOnly()), {ActionKind::kRemove, 1, 2}, "the doubled AZ's non-leader leaves");

  // The leader is never the one chosen to move when the other can.
  ClusterView led = SixNodes();
  AddGroup(led, 2, Members({1, 2, 5}), {1, 2, 5});
  actions = Plan(led, FullOnly());
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_NE(actions[0].reason.find("move voter 1 back"), std::string::npos) << actions[0].reason;
}

TEST(Planner, DescriptorsCarryTheNextEpochAndTheLearnerRole) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5});
  Kill(v, 3);
  const auto actions = Plan(v, FullOnly());
  ASSERT_EQ(actions.size(), 1u);
  const pb::PartitionDescriptor& d = actions[0].descriptor;
  EXPECT_EQ(d.epoch(), 8u);
  ASSERT_EQ(d.replicas_size(), 4);
  EXPECT_EQ(d.replicas(3).node_id(), 4u);
  EXPECT_EQ(d.replicas(3).az(), "az2");
  EXPECT_EQ(d.replicas(3).role(), pb::REPLICA_LEARNER);
}

TEST(Planner, LaggingLearnerIsNotPromoted) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}, {4}), {1, 3, 5}, {4});
  Kill(v, 3);
  v.nodes[4].groups[kGroup].applied = 100;  // leader chose 500
  EXPECT_TRUE(Plan(v, FullOnly()).empty());
  v.nodes[4].groups[kGroup].applied = 0;
  EXPECT_TRUE(Plan(v, FullOnly()).empty()) << "an empty learner is never caught up";
}

TEST(Planner, TargetOutsideTheAzWhenItHasNoHealthyNode) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5});
  Kill(v, 3);
  Kill(v, 4);
  // az2 has no healthy node; every other AZ holds a live voter: the least
  // loaded node outside the group (2 and 6 hold nothing: the lower id).
  ExpectOne(Plan(v, FullOnly()), {ActionKind::kAddReplica, 0, 2}, "other AZ");
}

TEST(Planner, TargetIsTheLeastLoadedNodeOfTheAz) {
  ClusterView v = SixNodes();
  v.nodes.erase(4);
  v.nodes[7].id = 7;
  v.nodes[7].az = "az2";
  v.nodes[8].id = 8;
  v.nodes[8].az = "az2";
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5});
  AddGroup(v, 2, Members({2, 7, 6}), {2, 7, 6}, {}, 1001);
  Kill(v, 3);
  ExpectOne(Plan(v, FullOnly()), {ActionKind::kAddReplica, 0, 8}, "8 holds nothing, 7 one replica");
}

TEST(Planner, NoQuorumMeansNoAction) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5});
  Kill(v, 3);
  Kill(v, 5);
  EXPECT_TRUE(Plan(v, FullOnly()).empty());
  v.groups[kGroup].leader = 0;  // and without a leader nothing either
  EXPECT_TRUE(Plan(v, FullOnly()).empty());
}

TEST(Planner, NothingWhileAMembershipChangeIsPending) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}, {4}), {1, 3, 5}, {4});
  Kill(v, 3);
  v.nodes[1].groups[kGroup].membership_pending = true;
  EXPECT_TRUE(Plan(v, FullOnly()).empty());
}

TEST(Planner, UnreachableButNotDeadIsNotReplaced) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5});
  v.nodes[3].health = NodeHealth::kUnreachable;
  EXPECT_TRUE(Plan(v, FullOnly()).empty());
}

TEST(Planner, RemovalKeepsAHealthyMajority) {
  ClusterView v = SixNodes();
  // Four voters, two of them dead: removing one leaves {1,5,x} with only
  // two healthy of three: allowed. With a third voter unreachable, not.
  AddGroup(v, 1, Members({1, 3, 5, 4}), {1, 3, 5, 4});
  Kill(v, 3);
  ExpectOne(Plan(v, FullOnly()), {ActionKind::kRemove, 1, 3}, "one dead of four");
  v.nodes[4].health = NodeHealth::kUnreachable;
  v.nodes[5].health = NodeHealth::kUnreachable;
  EXPECT_TRUE(Plan(v, FullOnly()).empty());
}

TEST(Planner, SurplusHealthyVoterLeavesFromTheDoubledAz) {
  // A replaced node came back before its removal: four healthy voters, two
  // in az2; one of those leaves (not the leader).
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5, 4}), {1, 3, 5, 4});
  const auto actions = Plan(v, FullOnly());
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kRemove);
  EXPECT_TRUE(actions[0].replica == 3 || actions[0].replica == 4) << actions[0].replica;
}

TEST(Planner, StaleReplicaOnAReturnedNodeIsDropped) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 4, 5}), {1, 4, 5});
  v.nodes[3].groups[kGroup].role = "follower";  // came back, still holds it
  ExpectOne(Plan(v, FullOnly()), {ActionKind::kDropStale, 3, 3}, "stale replica");
}

TEST(Planner, NewReplicaIsNeverTakenForStale) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5}, {4});
  Kill(v, 3);
  v.nodes[4].groups[kGroup].role = "follower";  // created, not yet a learner
  ExpectOne(Plan(v, FullOnly()), {ActionKind::kAddLearner, 1, 4}, "pending add");
}

TEST(Planner, TargetLostBeforeJoiningWithdrawsTheIntent) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5}, {4});
  Kill(v, 3);
  Kill(v, 4);
  const auto actions = Plan(v, FullOnly());
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kSyncDescriptor);
  EXPECT_EQ(actions[0].descriptor.replicas_size(), 3);
}

TEST(Planner, DeadLearnerIsRemoved) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}, {4}), {1, 3, 5}, {4});
  Kill(v, 3);
  Kill(v, 4);
  ExpectOne(Plan(v, FullOnly()), {ActionKind::kRemove, 1, 4}, "dead learner");
}

TEST(Planner, AtMostMaxConcurrentReplacementsStart) {
  ClusterView v = SixNodes();
  for (uint64_t g = 0; g < 5; ++g) AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5}, {}, 1000 + g);
  Kill(v, 3);
  PlannerOptions options = FullOnly();
  options.max_concurrent = 2;
  EXPECT_EQ(Plan(v, options).size(), 2u);
  // One group already mid-replacement counts against the bound.
  v.groups[1004].descriptor.mutable_replicas(0)->set_role(pb::REPLICA_LEARNER);
  size_t adds = 0;
  for (const Action& a : Plan(v, options)) adds += a.kind == ActionKind::kAddReplica;
  EXPECT_EQ(adds, 1u);
}

TEST(Planner, ReplicationSpreadsTargetsAcrossTheAz) {
  ClusterView v = SixNodes();
  v.nodes[7].id = 7;
  v.nodes[7].az = "az2";
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5}, {}, 1000);
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5}, {}, 1001);
  Kill(v, 3);
  const auto actions = Plan(v, FullOnly());
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_NE(actions[0].replica, actions[1].replica) << "4 and 7 share the load";
}

TEST(Planner, DrainingNodeIsReplacedThenLeftThenDropped) {
  ClusterView v = SixNodes();
  AddGroup(v, 3, Members({1, 3, 5}), {1, 3, 5});
  v.nodes[3].draining = true;
  ExpectOne(Plan(v, FullOnly()), {ActionKind::kTransferLeader, 3, 1}, "drain: leadership leaves first");
  ClusterView u = SixNodes();
  AddGroup(u, 1, Members({1, 3, 5}), {1, 3, 5});
  u.nodes[3].draining = true;
  ExpectOne(Plan(u, FullOnly()), {ActionKind::kAddReplica, 0, 4}, "drain: add in the same AZ");
  // Promoted: the draining voter leaves.
  ClusterView w = SixNodes();
  AddGroup(w, 1, Members({1, 3, 5, 4}), {1, 3, 5, 4});
  w.nodes[3].draining = true;
  ExpectOne(Plan(w, FullOnly()), {ActionKind::kRemove, 1, 3}, "drain: the draining voter leaves");
  // Gone from the group and meta: its replica is dropped.
  ClusterView x = SixNodes();
  AddGroup(x, 1, Members({1, 5, 4}), {1, 5, 4});
  x.nodes[3].draining = true;
  x.nodes[3].groups[kGroup].role = "follower";
  ExpectOne(Plan(x, FullOnly()), {ActionKind::kDropStale, 3, 3}, "drain: stale replica dropped");
}

TEST(Planner, DrainingNodeIsNeverATarget) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5});
  Kill(v, 3);
  v.nodes[4].draining = true;
  ExpectOne(Plan(v, FullOnly()), {ActionKind::kAddReplica, 0, 2}, "az2 has no eligible node");
  // A target that starts draining before it joins is withdrawn.
  ClusterView w = SixNodes();
  AddGroup(w, 1, Members({1, 3, 5}), {1, 3, 5}, {4});
  Kill(w, 3);
  w.nodes[4].draining = true;
  const auto actions = Plan(w, FullOnly());
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kSyncDescriptor);
  EXPECT_EQ(actions[0].descriptor.replicas_size(), 3);
}

TEST(Planner, GrayLeaderHandsOverBeforeAnythingElse) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5});
  v.nodes[1].health = NodeHealth::kGray;
  v.nodes[1].gray_for_ms = 120'000;  // long enough to be replaced, yet first it hands over
  v.nodes[5].groups[kGroup].applied = 100;  // lags: not a target
  ExpectOne(Plan(v, FullOnly()), {ActionKind::kTransferLeader, 1, 3}, "to the caught-up healthy voter");
  // No caught-up healthy voter: nothing to hand over to, so the replacement
  // goes ahead (the leader leaves last).
  v.nodes[3].groups[kGroup].applied = 100;
  ExpectOne(Plan(v, FullOnly()), {ActionKind::kAddReplica, 0, 2}, "replace the gray voter in its AZ");
}

TEST(Planner, GrayVoterIsReplacedOnlyAfterGrayReplaceAfter) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5});
  PlannerOptions o = FullOnly();
  o.gray_replace_after_ms = 30'000;
  v.nodes[3].health = NodeHealth::kGray;
  v.nodes[3].gray_for_ms = 29'999;
  EXPECT_TRUE(Plan(v, o).empty());
  v.nodes[3].gray_for_ms = 30'000;
  ExpectOne(Plan(v, o), {ActionKind::kAddReplica, 0, 4}, "gray for long: replaced");
  // A gray node is never a target, and its replicas count toward quorums.
  ClusterView w = SixNodes();
  AddGroup(w, 1, Members({1, 3, 5}), {1, 3, 5});
  Kill(w, 3);
  w.nodes[4].health = NodeHealth::kGray;
  ExpectOne(Plan(w, o), {ActionKind::kAddReplica, 0, 2}, "target outside the AZ, not the gray node");
}

// Nodes 1, 3, 5 (one per AZ): nowhere to spread replicas to.
ClusterView ThreeNodes() {
  ClusterView v = SixNodes();
  for (uint32_t id : {2u, 4u, 6u}) v.nodes.erase(id);
  return v;
}

TEST(Planner, LeadersSpreadWithinOnePerNode) {
  ClusterView v = ThreeNodes();
  // Node 1 leads four groups whose voters are {1, 3, 5}: two move, to 3
  // and 5 (fewest leaders first), until 1 leads at most one more than them.
  for (uint64_t g = 1; g <= 4; ++g) AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5}, {}, g);
  const std::vector<Action> actions = Plan(v, FullOnly());
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[0].kind, ActionKind::kTransferLeader);
  EXPECT_EQ(actions[0].replica, 3u);
  EXPECT_EQ(actions[1].replica, 5u);
  // Spread already: nothing.
  ClusterView w = ThreeNodes();
  AddGroup(w, 1, Members({1, 3, 5}), {1, 3, 5}, {}, 1);
  AddGroup(w, 3, Members({1, 3, 5}), {1, 3, 5}, {}, 2);
  AddGroup(w, 1, Members({1, 3, 5}), {1, 3, 5}, {}, 3);  // 2 on node 1, 1 on node 3, 0 on node 5
  ExpectOne(Plan(w, FullOnly()), {ActionKind::kTransferLeader, 1, 5}, "two apart: one moves");
  ClusterView x = ThreeNodes();
  AddGroup(x, 1, Members({1, 3, 5}), {1, 3, 5}, {}, 1);
  AddGroup(x, 3, Members({1, 3, 5}), {1, 3, 5}, {}, 2);
  AddGroup(x, 5, Members({1, 3, 5}), {1, 3, 5}, {}, 3);
  EXPECT_TRUE(Plan(x, FullOnly()).empty());
  PlannerOptions off = FullOnly();
  off.balance_leaders = false;
  EXPECT_TRUE(Plan(v, off).empty());
}

TEST(Planner, NoBalancingInAGroupBeingRepaired) {
  ClusterView v = SixNodes();
  for (uint64_t g = 1; g <= 3; ++g) AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5}, {}, g);
  v.nodes[5].health = NodeHealth::kUnreachable;
  EXPECT_TRUE(Plan(v, FullOnly()).empty());
}

TEST(Planner, SurplusDeadVoterLeavesBeforeAnUnreachableOne) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5, 4}), {1, 3, 5, 4});
  Kill(v, 3);
  v.nodes[4].health = NodeHealth::kUnreachable;  // higher id, same AZ
  // Three of four voters must answer for the removal to be chosen: 1, 5
  // and (unreachable) 4 are not enough.
  EXPECT_TRUE(Plan(v, FullOnly()).empty());
  v.nodes[4].health = NodeHealth::kHealthy;
  v.nodes[6].health = NodeHealth::kUnreachable;
  ExpectOne(Plan(v, FullOnly()), {ActionKind::kRemove, 1, 3}, "the dead voter, not the new one");
}

TEST(Planner, ReplicasSpreadOntoAnEmptyNodeOfTheirAz) {
  ClusterView v = SixNodes();
  // Four groups on {1, 3, 5}, led by 3: nodes 2 and 6 are empty (node 4
  // too, but az2's voter leads everywhere and never moves for spreading).
  for (uint64_t g = 1; g <= 4; ++g) AddGroup(v, 3, Members({1, 3, 5}), {1, 3, 5}, {}, g);
  const std::vector<Action> actions = Plan(v, FullOnly());
  std::vector<std::pair<uint64_t, uint32_t>> adds;
  for (const Action& a : actions) {
    // The other groups balance their leaders meanwhile.
    if (a.kind == ActionKind::kAddReplica) adds.emplace_back(a.group_id, a.replica);
  }
  // One move in flight per node: node 1 gives one to node 2, node 5 one to
  // node 6 (the next rounds give the second ones).
  EXPECT_EQ(adds, (std::vector<std::pair<uint64_t, uint32_t>>{{1, 2}, {2, 6}}));
  // Once promoted, the fuller node's voter leaves (not the new one).
  ClusterView w = SixNodes();
  AddGroup(w, 3, Members({1, 3, 5, 2}), {1, 3, 5, 2}, {}, 1);
  for (uint64_t g = 2; g <= 4; ++g) AddGroup(w, 3, Members({1, 3, 5}), {1, 3, 5}, {}, g);
  const std::vector<Action> next = Plan(w, FullOnly());
  ASSERT_FALSE(next.empty());
  EXPECT_EQ(next[0].kind, ActionKind::kRemove);
  EXPECT_EQ(next[0].replica, 1u);
}

TEST(Planner, NoSpreadingWhileAnythingNeedsRepair) {
  ClusterView v = SixNodes();
  for (uint64_t g = 1; g <= 4; ++g) AddGroup(v, 3, Members({1, 3, 5}), {1, 3, 5}, {}, g);
  v.nodes[5].health = NodeHealth::kUnreachable;  // not dead yet: nothing is replaced
  EXPECT_TRUE(Plan(v, FullOnly()).empty());
  // Spread already (within one): nothing either.
  ClusterView w = SixNodes();
  AddGroup(w, 3, Members({1, 3, 5}), {1, 3, 5}, {}, 1);
  AddGroup(w, 4, Members({2, 4, 6}), {2, 4, 6}, {}, 2);
  AddGroup(w, 5, Members({1, 3, 5}), {1, 3, 5}, {}, 3);
  EXPECT_TRUE(Plan(w, FullOnly()).empty());
}

TEST(Planner, ALaggingVoterIsReplacedInItsAz) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5});
  v.groups[kGroup].lagging_voters.insert(3);
  const std::vector<Action> actions = Plan(v, FullOnly());
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kAddReplica);
  EXPECT_EQ(actions[0].replica, 4u);
  EXPECT_NE(actions[0].reason.find("lagging"), std::string::npos) << actions[0].reason;
  // Promoted: the lagging voter is the one that leaves.
  ClusterView w = SixNodes();
  AddGroup(w, 1, Members({1, 3, 5, 4}), {1, 3, 5, 4});
  w.groups[kGroup].lagging_voters.insert(3);
  ExpectOne(Plan(w, FullOnly()), {ActionKind::kRemove, 1, 3}, "the lagging voter leaves");
}

TEST(Planner, AStoppedReplicaIsReplacedAndNeverLeads) {
  // Node 3's replica stopped for good (its disk failed a log write): it
  // reports itself a stopped follower, and FindLeaders lists it.
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5});
  v.nodes[3].groups[kGroup].stopped = true;
  FindLeaders(v);
  EXPECT_EQ(v.groups[kGroup].leader, 1u);
  EXPECT_EQ(v.groups[kGroup].stopped_voters, (std::set<uint32_t>{3}));
  const std::vector<Action> actions = Plan(v, FullOnly());
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kAddReplica);
  EXPECT_EQ(actions[0].replica, 4u);  // in its AZ
  EXPECT_NE(actions[0].reason.find("stopped"), std::string::npos) << actions[0].reason;
  // A stopped leader reports itself a follower: the group's leader is the
  // one the others elected.
  ClusterView w = SixNodes();
  AddGroup(w, 3, Members({1, 3, 5}), {1, 3, 5});
  w.nodes[1].groups[kGroup].role = "follower";
  w.nodes[1].groups[kGroup].stopped = true;
  FindLeaders(w);
  EXPECT_EQ(w.groups[kGroup].leader, 3u);
  // Leadership leaving a gray node never goes to a stopped replica.
  ClusterView x = SixNodes();
  AddGroup(x, 1, Members({1, 3, 5}), {1, 3, 5});
  x.nodes[1].health = NodeHealth::kGray;
  x.nodes[3].groups[kGroup].stopped = true;
  FindLeaders(x);
  const std::vector<Action> moved = Plan(x, FullOnly());
  ASSERT_FALSE(moved.empty());
  EXPECT_EQ(moved[0].kind, ActionKind::kTransferLeader);
  EXPECT_EQ(moved[0].replica, 5u);
}

// Marks `node` a log replica of kGroup in meta and in every report.
void MarkLogOnly(ClusterView& v, uint32_t node) {
  for (pb::ReplicaPlacement& r : *v.groups[kGroup].descriptor.mutable_replicas()) {
    if (r.node_id() == node) r.set_log_only(true);
  }
  for (auto& [id, n] : v.nodes) {
    auto it = n.groups.find(kGroup);
    if (it == n.groups.end()) continue;
    pb::Membership& m = it->second.membership;
    const bool member = std::count(m.voters().begin(), m.voters().end(), node) +
                            std::count(m.learners().begin(), m.learners().end(), node) > 0;
    if (member) m.add_log_only(node);
  }
}

TEST(Planner, ALostVoterIsFirstStoodInForByALogReplica) {
  // Voter 3 (az2) is dead. Each case is one round, as the previous left it.
  struct Case {
    const char* name;
    pb::Membership membership;
    std::initializer_list<uint32_t> voters_in_meta;
    std::initializer_list<uint32_t> learners_in_meta;
    uint32_t log_replica;  // node marked log-only (0: none)
    uint32_t hosts;        // a node that created the group (0: none)
    Expect expect;
    bool log_only;         // the action is about a log replica
  };
  const Case cases[] = {
      {"log replica outside the lost AZ, on the least loaded node", Members({1, 3, 5}),
       {1, 3, 5}, {}, 0, 0, {ActionKind::kAddReplica, 0, 2}, true},
      {"create it", Members({1, 3, 5}), {1, 3, 5}, {2}, 2, 0,
       {ActionKind::kCreateReplica, 2, 2}, false},
      {"the leader adds it as a log-only learner", Members({1, 3, 5}), {1, 3, 5}, {2}, 2, 2,
       {ActionKind::kAddLearner, 1, 2}, true},
      {"caught up from the log alone: promote", Members({1, 3, 5}, {2}), {1, 3, 5}, {2}, 2, 2,
       {ActionKind::kPromote, 1, 2}, false},
      {"meta mirrors it", Members({1, 3, 5, 2}), {1, 3, 5}, {2}, 2, 2,
       {ActionKind::kSyncDescriptor, 0, 0}, false},
      {"the dead voter leaves before the log replica", Members({1, 3, 5, 2}), {1, 3, 5, 2}, {},
       2, 2, {ActionKind::kRemove, 1, 3}, false},
      {"meta mirrors the removal", Members({1, 5, 2}), {1, 3, 5, 2}, {}, 2, 2,
       {ActionKind::kSyncDescriptor, 0, 0}, false},
      {"tolerant again: a full replica in the AZ nobody else uses", Members({1, 5, 2}),
       {1, 5, 2}, {}, 2, 2, {ActionKind::kAddReplica, 0, 4}, false},
      {"full replica promoted: the log replica leaves", Members({1, 5, 2, 4}), {1, 5, 2, 4}, {},
       2, 4, {ActionKind::kRemove, 1, 2}, false},
  };
  for (const Case& c : cases) {
    ClusterView v = SixNodes();
    AddGroup(v, 1, c.membership, c.voters_in_meta, c.learners_in_meta);
    if (c.log_replica != 0) MarkLogOnly(v, c.log_replica);
    if (c.hosts != 0) v.nodes[c.hosts].groups[kGroup].applied = 499;
    Kill(v, 3);
    const std::vector<Action> actions = Plan(v, {});
    ExpectOne(actions, c.expect, c.name);
    if (actions.size() == 1) {
      EXPECT_EQ(actions[0].log_only, c.log_only) << c.name;
    }
    if (actions.size() == 1 && actions[0].kind == ActionKind::kAddReplica) {
      bool marked = false;
      for (const pb::ReplicaPlacement& r : actions[0].descriptor.replicas()) {
        if (r.node_id() == c.expect.replica) marked = r.log_only();
      }
      EXPECT_EQ(marked, c.log_only) << c.name << ": the descriptor's placement";
    }
  }
}

TEST(Planner, ALogReplicaNeverLeadsAndMirrorsKeepItsMark) {
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 5, 2}), {1, 5, 2});
  MarkLogOnly(v, 2);
  v.nodes[1].health = NodeHealth::kGray;  // the leader must hand over
  const std::vector<Action> actions = Plan(v, {});
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kTransferLeader);
  EXPECT_EQ(actions[0].replica, 5u) << "never to the log replica";

  ClusterView w = SixNodes();
  AddGroup(w, 1, Members({1, 5, 2}), {1, 5, 3});  // meta lags the group
  for (auto& [id, n] : w.nodes) {
    if (n.groups.count(kGroup)) n.groups[kGroup].membership.add_log_only(2);
  }
  const std::vector<Action> sync = Plan(w, {});
  ASSERT_EQ(sync.size(), 1u);
  ASSERT_EQ(sync[0].kind, ActionKind::kSyncDescriptor);
  for (const pb::ReplicaPlacement& r : sync[0].descriptor.replicas()) {
    EXPECT_EQ(r.log_only(), r.node_id() == 2u) << "node " << r.node_id();
  }
}

TEST(Planner, NoLogReplicaForAVoterThatStillAnswers) {
  // Draining: the voter is healthy, tolerance is not lost; a full replica
  // replaces it directly.
  ClusterView v = SixNodes();
  AddGroup(v, 1, Members({1, 3, 5}), {1, 3, 5});
  v.nodes[3].draining = true;
  const std::vector<Action> actions = Plan(v, {});
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kAddReplica);
  EXPECT_EQ(actions[0].replica, 4u);
  EXPECT_FALSE(actions[0].log_only);
}

}  // namespace
}  // namespace tessera::autoadmin
