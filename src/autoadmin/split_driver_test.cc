// Goal: the split driver carries a split on from whatever it finds (an
// intent, a request, a partition above split_bytes; `_s3` alike), keeps
// within max_concurrent, calls the steps in order, and abandons only a
// split the parent refused (never one that may have been ordered).
#include "autoadmin/split_driver.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace tessera::autoadmin {
namespace {

ClusterView ThreeNodes() {
  ClusterView v;
  for (uint32_t id = 1; id <= 3; ++id) v.nodes[id].id = id;
  return v;
}

GroupView& AddGroup(ClusterView& v, uint64_t id, uint64_t bytes, const std::string& table = "kv") {
  GroupView& g = v.groups[id];
  g.descriptor.set_table(table);
  g.descriptor.set_group_id(id);
  g.descriptor.set_epoch(3);
  for (uint32_t n = 1; n <= 3; ++n) {
    pb::ReplicaPlacement* r = g.descriptor.add_replicas();
    r->set_node_id(n);
    v.nodes[n].groups[id].role = n == 1 ? "leader" : "follower";
  }
  g.leader = 1;
  g.state_bytes = bytes;
  return g;
}

pb::SplitPartitionResponse Intent(const GroupView& parent, uint64_t child, const std::string& key) {
  pb::SplitPartitionResponse i;
  *i.mutable_parent() = parent.descriptor;
  *i.mutable_child() = parent.descriptor;
  i.mutable_child()->set_group_id(child);
  i.mutable_child()->set_start_key(key);
  return i;
}

PlannerOptions Options(uint64_t split_bytes, size_t max_concurrent) {
  PlannerOptions o;
  o.split_bytes = split_bytes;
  o.max_concurrent = max_concurrent;
  return o;
}

TEST(PlanSplits, IntentsFirstThenRequestsThenSizeWithinTheBudget) {
  ClusterView v = ThreeNodes();
  AddGroup(v, 1000, 10);
  AddGroup(v, 1001, 10);
  AddGroup(v, 1002, 1'000'000);
  AddGroup(v, 1003, 2'000'000);
  pb::SplitsResponse splits;
  *splits.add_intents() = Intent(v.groups[1000], 2000, "m");
  pb::SplitRequestRecord* r = splits.add_requests();
  r->set_table("kv");
  r->set_group_id(1001);
  const SplitPlan plan = PlanSplits(v, splits, Options(4096, 3));
  ASSERT_EQ(plan.work.size(), 3u);
  ASSERT_TRUE(plan.work[0].intent.has_value());
  EXPECT_EQ(plan.work[0].parent.group_id(), 1000u);
  EXPECT_TRUE(plan.work[1].requested);
  EXPECT_EQ(plan.work[1].parent.group_id(), 1001u);
  EXPECT_EQ(plan.work[2].parent.group_id(), 1003u);  // the largest; 1002 waits for room
  EXPECT_TRUE(v.groups[1000].splitting);             // the replacement planner leaves it alone
  EXPECT_TRUE(plan.refusals.empty());
}

// `_s3` splits by size and by request like any table (the key is chosen
// between objects at the leader, node/split_key.h).
TEST(PlanSplits, S3SplitsLikeAnyTable) {
  ClusterView v = ThreeNodes();
  AddGroup(v, 1000, 9'000'000, "_s3");
  AddGroup(v, 1001, 1'000'000);
  AddGroup(v, 1002, 10, "_s3");
  pb::SplitsResponse splits;
  pb::SplitRequestRecord* r = splits.add_requests();
  r->set_table("_s3");
  r->set_group_id(1002);
  const SplitPlan plan = PlanSplits(v, splits, Options(4096, 2));
  ASSERT_EQ(plan.work.size(), 2u);
  EXPECT_TRUE(plan.work[0].requested);
  EXPECT_EQ(plan.work[0].parent.group_id(), 1002u);
  EXPECT_EQ(plan.work[1].parent.group_id(), 1000u);  // the largest
  EXPECT_TRUE(plan.refusals.empty());
}

// Records the calls; answers from a table keyed by method (node calls by
// "node N method").
struct FakeCalls {
  std::vector<std::string> log;
  std::map<std::string, Result<std::string>> answers;
  SplitCalls Make() {
    SplitCalls c;
    c.meta = [this](const std::string& method, const std::string& payload, std::chrono::milliseconds) {
      pb::SplitPartitionRequest r;
      std::string name = method;
      if (method == "meta.split_partition" && r.ParseFromString(payload)) {
        name += r.abandon() ? " abandon" : r.child_group_id() == 0 ? " reserve" : " commit";
      }
      return Answer(name);
    };
    c.node = [this](uint32_t node, const std::string& method, const std::string&, std::chrono::milliseconds) {
      return Answer("node " + std::to_string(node) + " " + method);
    };
    return c;
  }
  void Set(const std::string& name, Result<std::string> answer) {
    answers.insert_or_assign(name, std::move(answer));
  }
  Result<std::string> Answer(const std::string& name) {
    log.push_back(name);
    const auto it = answers.find(name);
    return it == answers.end() ? Result<std::string>(std::string()) : it->second;
  }
};

TEST(SplitDriver, StartsAtTheLeaderAndCommitsOnceEveryReplicaHostsTheChild) {
  ClusterView v = ThreeNodes();
  AddGroup(v, 1000, 1'000'000);
  FakeCalls fake;
  pb::SplitKeyResponse key;
  key.set_split_key("m");
  key.set_state_bytes(900'000);  // exact: above split_bytes
  fake.Set("node 1 admin.split_key", key.SerializeAsString());
  fake.Set("meta.split_partition reserve", Intent(v.groups[1000], 2000, "m").SerializeAsString());
  SplitDriver driver(fake.Make(), SplitTimeouts{});
  const SplitPlan plan = PlanSplits(v, pb::SplitsResponse(), Options(4096, 2));
  ASSERT_EQ(plan.work.size(), 1u);
  const SplitOutcome out = driver.Carry(plan.work[0], 7);
  EXPECT_TRUE(out.committed) << out.status.ToString();
  EXPECT_EQ(fake.log, (std::vector<std::string>{
                          "node 1 admin.split_key", "meta.split_partition reserve",
                          "node 1 admin.split_group", "node 1 admin.create_group",
                          "node 2 admin.create_group", "node 3 admin.create_group",
                          "meta.split_partition commit"}));
}

TEST(SplitDriver, AReplicaNotYetAtTheSplitHoldsTheCommitBack) {
  ClusterView v = ThreeNodes();
  AddGroup(v, 1000, 10);
  pb::SplitsResponse splits;
  *splits.add_intents() = Intent(v.groups[1000], 2000, "m");
  FakeCalls fake;
  fake.Set("node 2 admin.create_group", Status::Unavailable("not at the split yet"));
  SplitDriver driver(fake.Make(), SplitTimeouts{});
  const SplitOutcome out = driver.Carry(PlanSplits(v, splits, Options(4096, 2)).work.at(0), 7);
  EXPECT_FALSE(out.committed);
  EXPECT_FALSE(out.abandoned);
  EXPECT_EQ(out.step, "create_group");
  EXPECT_EQ(fake.log.back(), "node 2 admin.create_group");
}

TEST(SplitDriver, AbandonsOnlyWhatTheParentRefused) {
  ClusterView v = ThreeNodes();
  AddGroup(v, 1000, 10);
  pb::SplitsResponse splits;
  *splits.add_intents() = Intent(v.groups[1000], 2000, "m");
  const SplitWork work = PlanSplits(v, splits, Options(4096, 2)).work.at(0);
  {
    FakeCalls fake;  // the outcome is unknown: never abandoned
    fake.Set("node 1 admin.split_group", Status::Timeout("no answer"));
    SplitDriver driver(fake.Make(), SplitTimeouts{});
    const SplitOutcome out = driver.Carry(work, 7);
    EXPECT_FALSE(out.abandoned);
    EXPECT_EQ(fake.log.back(), "node 1 admin.split_group");
  }
  {
    FakeCalls fake;
    fake.Set("node 1 admin.split_group", Status::Conflict("refused the split"));
    SplitDriver driver(fake.Make(), SplitTimeouts{});
    const SplitOutcome out = driver.Carry(work, 7);
    EXPECT_TRUE(out.abandoned);
    EXPECT_EQ(fake.log.back(), "meta.split_partition abandon");
  }
}

// The estimate still counts a parent's moved keys until compaction: the
// exact count decides, and the group is not scanned again until its
// estimate grows.
TEST(SplitDriver, AStaleEstimateSplitsNothingAndIsNotScannedAgain) {
  ClusterView v = ThreeNodes();
  AddGroup(v, 1000, 100'000);
  FakeCalls fake;
  pb::SplitKeyResponse key;
  key.set_split_key("m");
  key.set_state_bytes(50'000);
  fake.Set("node 1 admin.split_key", key.SerializeAsString());
  SplitDriver driver(fake.Make(), SplitTimeouts{});
  const SplitOutcome first = driver.Carry(PlanSplits(v, pb::SplitsResponse(), Options(65'536, 2)).work.at(0), 7);
  EXPECT_FALSE(first.committed);
  EXPECT_EQ(first.step, "exact_size");
  EXPECT_EQ(fake.log, std::vector<std::string>{"node 1 admin.split_key"});
  (void)driver.Carry(PlanSplits(v, pb::SplitsResponse(), Options(65'536, 2)).work.at(0), 7);
  EXPECT_EQ(fake.log.size(), 1u);  // not scanned again
  v.groups[1000].state_bytes = 200'000;  // grew: counted again, and now it splits
  key.set_state_bytes(120'000);
  fake.Set("node 1 admin.split_key", key.SerializeAsString());
  const SplitOutcome grown = driver.Carry(PlanSplits(v, pb::SplitsResponse(), Options(65'536, 2)).work.at(0), 7);
  EXPECT_TRUE(grown.committed) << grown.status.ToString();
}

TEST(SplitDriver, ARequestWhoseKeyCannotBeChosenIsDropped) {
  ClusterView v = ThreeNodes();
  AddGroup(v, 1000, 10);
  pb::SplitsResponse splits;
  pb::SplitRequestRecord* r = splits.add_requests();
  r->set_table("kv");
  r->set_group_id(1000);
  FakeCalls fake;
  fake.Set("node 1 admin.split_key", Status::InvalidArgument("group 1000 cannot be halved (1 rows)"));
  SplitDriver driver(fake.Make(), SplitTimeouts{});
  const SplitOutcome out = driver.Carry(PlanSplits(v, splits, Options(4096, 2)).work.at(0), 7);
  EXPECT_TRUE(out.abandoned);
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fake.log.back(), "meta.split_partition abandon");
}

}  // namespace
}  // namespace tessera::autoadmin
