// Goal: the MemDS answers lookups by range (boundaries, the unbounded last
// range, unknown tables) and stays equal to the state it is rebuilt from.
#include "meta/memds.h"

#include <gtest/gtest.h>

#include "meta/meta_keys.h"

namespace tessera::meta {
namespace {

pb::PartitionDescriptor Partition(const std::string& table, const std::string& start,
                                  const std::string& end, uint64_t group, uint32_t node = 1) {
  pb::PartitionDescriptor p;
  p.set_table(table);
  p.set_start_key(start);
  p.set_end_key(end);
  p.set_group_id(group);
  p.set_epoch(1);
  pb::ReplicaPlacement* r = p.add_replicas();
  r->set_node_id(node);
  r->set_az("az1");
  return p;
}

// The keys of a table split at `points`, as the meta leader writes them.
std::vector<KeyChange> TableState(const std::string& name, const std::vector<std::string>& points,
                                  uint64_t first_group) {
  std::vector<KeyChange> state;
  pb::TableDescriptor t;
  t.set_name(name);
  t.set_table_id(first_group);
  for (const auto& p : points) t.add_split_points(p);
  state.push_back({TableKey(name), t.SerializeAsString()});
  for (size_t i = 0; i <= points.size(); ++i) {
    const std::string start = i == 0 ? "" : points[i - 1];
    const std::string end = i < points.size() ? points[i] : "";
    state.push_back({PartitionKey(name, start),
                     Partition(name, start, end, first_group + i).SerializeAsString()});
  }
  return state;
}

uint64_t GroupOf(const MemDs& m, const std::string& table, const std::string& key) {
  auto r = m.Lookup(table, key);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->partition().group_id() : 0;
}

TEST(MemDs, LookupAtRangeBoundaries) {
  MemDs m;
  ASSERT_TRUE(m.Reset(TableState("users", {"g", "p"}, 1000), 7).ok());
  EXPECT_EQ(GroupOf(m, "users", ""), 1000u);
  EXPECT_EQ(GroupOf(m, "users", "a"), 1000u);
  EXPECT_EQ(GroupOf(m, "users", "fzzz"), 1000u);
  EXPECT_EQ(GroupOf(m, "users", "g"), 1001u);  // start key is inclusive
  EXPECT_EQ(GroupOf(m, "users", std::string("g\0", 2)), 1001u);
  EXPECT_EQ(GroupOf(m, "users", "ozz"), 1001u);
  EXPECT_EQ(GroupOf(m, "users", "p"), 1002u);  // end key is exclusive
  EXPECT_EQ(m.Lookup("users", "a")->map_version(), 7u);
}

TEST(MemDs, EmptyEndKeyReachesTheEndOfTheKeySpace) {
  MemDs m;
  ASSERT_TRUE(m.Reset(TableState("t", {"\x80"}, 1000), 1).ok());
  EXPECT_EQ(GroupOf(m, "t", "\x7f\xff\xff"), 1000u);
  EXPECT_EQ(GroupOf(m, "t", "\x80"), 1001u);
  EXPECT_EQ(GroupOf(m, "t", std::string(100, '\xff')), 1001u);  // unsigned byte order
  auto single = MemDs();
  ASSERT_TRUE(single.Reset(TableState("one", {}, 5), 1).ok());
  EXPECT_EQ(GroupOf(single, "one", ""), 5u);
  EXPECT_EQ(GroupOf(single, "one", "\xff\xff"), 5u);
}

TEST(MemDs, UnknownTableIsNotFoundNamingIt) {
  MemDs m;
  ASSERT_TRUE(m.Reset(TableState("t", {}, 1), 1).ok());
  auto r = m.Lookup("nope", "k");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("'nope'"), std::string::npos);
}

TEST(MemDs, KeyInAGapIsNotFound) {  // a checker must be able to fail
  MemDs m;
  std::vector<KeyChange> state = TableState("t", {"m"}, 1);
  state.pop_back();  // drop the partition [m, end)
  state.push_back({PartitionKey("t", "q"), Partition("t", "q", "", 9).SerializeAsString()});
  ASSERT_TRUE(m.Reset(state, 1).ok());
  EXPECT_EQ(m.Lookup("t", "n").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(GroupOf(m, "t", "q"), 9u);
}

TEST(MemDs, UpdateAddsAndRemovesAndRebuildMatches) {
  MemDs incremental;
  ASSERT_TRUE(incremental.Reset({}, 0).ok());
  auto a = TableState("a", {"k"}, 10);
  auto b = TableState("b", {}, 20);
  ASSERT_TRUE(incremental.Update(a, 3).ok());
  ASSERT_TRUE(incremental.Update(b, 5).ok());
  EXPECT_EQ(GroupOf(incremental, "b", "x"), 20u);
  // Dropping table b entirely.
  ASSERT_TRUE(incremental.Update({{TableKey("b"), std::nullopt},
                                  {PartitionKey("b", ""), std::nullopt}},
                                 6)
                  .ok());
  EXPECT_EQ(incremental.Lookup("b", "x").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(incremental.version(), 6u);

  MemDs rebuilt;
  std::vector<KeyChange> state = a;
  state.push_back({std::string(kNextGroupIdKey), EncodeCounter(30)});  // ignored
  ASSERT_TRUE(rebuilt.Reset(state, 6).ok());
  EXPECT_EQ(rebuilt.Tables().SerializeAsString(), incremental.Tables().SerializeAsString());
  EXPECT_EQ(rebuilt.ReplicasByNode(), incremental.ReplicasByNode());
  // Reset replaces everything.
  ASSERT_TRUE(rebuilt.Reset(b, 9).ok());
  EXPECT_EQ(rebuilt.Lookup("a", "x").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(rebuilt.Tables().tables_size(), 1);
}

TEST(MemDs, CorruptDescriptorLeavesTheMapUnchanged) {
  MemDs m;
  ASSERT_TRUE(m.Reset(TableState("t", {}, 1), 1).ok());
  Status s = m.Update({{TableKey("u"), std::string("\xff\xff\xff", 3)}}, 2);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_EQ(m.version(), 1u);
  EXPECT_EQ(m.Tables().tables_size(), 1);
  // A partition whose descriptor disagrees with its key is corrupt too.
  s = m.Update({{PartitionKey("t", "x"), Partition("t", "y", "", 3).SerializeAsString()}}, 2);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
}

TEST(MemDs, TablesListsPartitionsInRangeOrder) {
  MemDs m;
  auto state = TableState("t", {"b", "a\xff", "c"}, 1);  // keys sort unsigned
  ASSERT_TRUE(m.Reset(state, 1).ok());
  pb::TablesResponse all = m.Tables();
  ASSERT_EQ(all.partitions_size(), 4);
  for (int i = 1; i < all.partitions_size(); ++i) {
    EXPECT_LT(all.partitions(i - 1).start_key(), all.partitions(i).start_key());
  }
}


TEST(MemDs, BlobSlotAssignmentsFollowTheirKey) {
  MemDs m;
  ASSERT_TRUE(m.Reset(TableState("users", {"m"}, 1000), 5).ok());
  EXPECT_EQ(m.BlobSlots().version(), 0u);
  pb::BlobSlotAssignments a;
  a.set_version(3);
  pb::BlobSlotReplicas* r = a.add_slots();
  r->set_slot(7);
  r->add_node_ids(1);
  ASSERT_TRUE(m.Update({{std::string(kBlobSlotsKey), a.SerializeAsString()}}, 6).ok());
  EXPECT_EQ(m.BlobSlots().SerializeAsString(), a.SerializeAsString());
  EXPECT_EQ(GroupOf(m, "users", "a"), 1000u);  // the partition map is untouched
  // Rebuilt from the state, the same; a bad value is refused whole.
  std::vector<KeyChange> state = TableState("users", {"m"}, 1000);
  state.push_back({std::string(kBlobSlotsKey), a.SerializeAsString()});
  MemDs rebuilt;
  ASSERT_TRUE(rebuilt.Reset(state, 6).ok());
  EXPECT_EQ(rebuilt.BlobSlots().version(), 3u);
  EXPECT_EQ(m.Update({{std::string(kBlobSlotsKey), std::string("\xff\xff")}}, 7).code(),
            StatusCode::kCorruption);
  EXPECT_EQ(m.BlobSlots().version(), 3u);
  ASSERT_TRUE(m.Update({{std::string(kBlobSlotsKey), std::nullopt}}, 8).ok());
  EXPECT_EQ(m.BlobSlots().version(), 0u);
}

}  // namespace
}  // namespace tessera::meta
