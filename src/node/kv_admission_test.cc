// Goal: a node's KvAdmission gives each partition it hosts its table's
// capacity divided among the table's partitions (from one meta.tables
// answer), charges nothing for tables without capacity or partitions it
// does not host, forgets partitions no longer listed, and counts admitted
// and throttled requests per table and partition.
#include "node/kv_admission.h"

#include <gtest/gtest.h>

#include "common/metrics_test_util.h"

namespace tessera::node {
namespace {

using admission::CapacityKind;
using metrics::testing::SeriesValue;

constexpr uint32_t kSelf = 1;

void AddPartition(pb::TablesResponse& t, const std::string& table, uint64_t group, uint32_t node) {
  pb::PartitionDescriptor* p = t.add_partitions();
  p->set_table(table);
  p->set_group_id(group);
  p->add_replicas()->set_node_id(node);
}

pb::TablesResponse Tables() {
  pb::TablesResponse t;
  pb::TableDescriptor* orders = t.add_tables();
  orders->set_name("orders");
  orders->mutable_capacity()->set_mode(pb::TableCapacity::CAPACITY_PROVISIONED);
  orders->mutable_capacity()->set_rcu(40);
  orders->mutable_capacity()->set_wcu(20);
  t.add_tables()->set_name("kv");  // unset
  AddPartition(t, "orders", 10, kSelf);
  AddPartition(t, "orders", 11, 2);  // another node's: still counts in the share
  AddPartition(t, "kv", 20, kSelf);
  return t;
}

int AdmitAll(KvAdmission& a, uint64_t group, CapacityKind kind, int tries) {
  int admitted = 0;
  for (int i = 0; i < tries; ++i) admitted += a.Admit(group, kind, 1).admitted;
  return admitted;
}

TEST(KvAdmission, SharesTheTableCapacityAmongItsPartitions) {
  metrics::Registry registry;
  KvAdmission a(kSelf, admission::NodeAdmissionOptions{}, registry);
  a.ApplyTables(Tables());
  EXPECT_EQ(AdmitAll(a, 10, CapacityKind::kWrite, 50), 10);  // 20 WCU / 2 partitions
  EXPECT_EQ(AdmitAll(a, 10, CapacityKind::kRead, 50), 20);
  EXPECT_EQ(AdmitAll(a, 20, CapacityKind::kWrite, 50), 50);  // unset: not charged
  EXPECT_EQ(AdmitAll(a, 11, CapacityKind::kWrite, 50), 50);  // not hosted here
  const std::string labels = "kind=\"write\",partition=\"10\",table=\"orders\"";
  EXPECT_EQ(SeriesValue(registry, "tessera_admission_admitted_total{" + labels + "}"), 10u);
  EXPECT_EQ(SeriesValue(registry, "tessera_admission_throttled_total{" + labels + "}"), 40u);
}

TEST(KvAdmission, ForgetsPartitionsNoLongerListedAndFollowsUpdates) {
  metrics::Registry registry;
  KvAdmission a(kSelf, admission::NodeAdmissionOptions{}, registry);
  a.ApplyTables(Tables());
  pb::TablesResponse on_demand = Tables();
  on_demand.mutable_tables(0)->mutable_capacity()->Clear();
  on_demand.mutable_tables(0)->mutable_capacity()->set_mode(pb::TableCapacity::CAPACITY_ON_DEMAND);
  a.ApplyTables(on_demand);
  EXPECT_EQ(AdmitAll(a, 10, CapacityKind::kWrite, 50), 50);  // the node's bucket only
  a.ApplyTables(pb::TablesResponse());
  EXPECT_FALSE(a.Admit(10, CapacityKind::kWrite, 1).charged);
}

}  // namespace
}  // namespace tessera::node
