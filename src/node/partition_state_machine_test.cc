// Goal: the partition state machine applies conditional, atomic batches
// deterministically (versions are slots, failed conditions change nothing,
// later entries of one apply see earlier ones) and scans resume correctly.
#include "node/partition_state_machine.h"

#include <gtest/gtest.h>

#include "node/state_machine_test_util.h"

namespace tessera::node {
namespace {

using testing::TempStore;

pb::Entry Command(Slot slot, const pb::KvBatch& batch, uint64_t request_id = 0) {
  pb::Entry e;
  e.set_slot(slot);
  e.set_type(pb::ENTRY_COMMAND);
  e.set_command(EncodeCommand(batch));
  e.set_request_id(request_id);
  return e;
}

pb::KvBatch Put(const std::string& key, const std::string& value) {
  pb::KvBatch b;
  auto* w = b.add_writes();
  w->set_key(key);
  w->set_value(value);
  return b;
}

TEST(PartitionStateMachine, PutsGetVersionsOfTheirSlot) {
  TempStore store;
  PartitionStateMachine sm(store.get(), 1);
  auto r = sm.Apply({Command(1, Put("a", "1"), 11), Command(2, Put("b", "2"), 12)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_TRUE((*r)[0].result.applied());
  EXPECT_EQ((*r)[0].request_id, 11u);
  EXPECT_EQ((*r)[1].result.version(), 2u);
  auto a = sm.Get("a");
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->value(), "1");
  EXPECT_EQ((*a)->version(), 1u);
  EXPECT_EQ(*store.get()->AppliedIndex(1), 2u);
}

TEST(PartitionStateMachine, FailedConditionChangesNothing) {
  TempStore store;
  PartitionStateMachine sm(store.get(), 1);
  ASSERT_TRUE(sm.Apply({Command(1, Put("a", "1"))}).ok());
  pb::KvBatch b = Put("a", "2");
  auto* w = b.add_writes();
  w->set_key("c");
  w->set_value("3");
  b.add_conditions()->set_key("a");
  b.mutable_conditions(0)->set_version(99);  // wrong version
  auto r = sm.Apply({Command(2, b)});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE((*r)[0].result.applied());
  EXPECT_EQ((*r)[0].result.failed_condition(), 0u);
  EXPECT_EQ((*sm.Get("a"))->value(), "1");
  EXPECT_FALSE(sm.Get("c")->has_value());
}

TEST(PartitionStateMachine, LaterEntriesSeeEarlierOnesInOneApply) {
  TempStore store;
  PartitionStateMachine sm(store.get(), 1);
  pb::KvBatch create_if_absent = Put("k", "first");
  create_if_absent.add_conditions()->set_key("k");
  create_if_absent.mutable_conditions(0)->set_absent(true);
  pb::KvBatch again = create_if_absent;
  again.mutable_writes(0)->set_value("second");
  pb::KvBatch cas = Put("k", "third");
  cas.add_conditions()->set_key("k");
  cas.mutable_conditions(0)->set_version(1);
  pb::KvBatch del;
  del.add_writes()->set_key("k");
  del.mutable_writes(0)->set_delete_(true);
  auto r = sm.Apply({Command(1, create_if_absent), Command(2, again), Command(3, cas),
                     Command(4, del)});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)[0].result.applied());
  EXPECT_FALSE((*r)[1].result.applied());  // k exists by then
  EXPECT_TRUE((*r)[2].result.applied());   // version 1 matched
  EXPECT_TRUE((*r)[3].result.applied());
  EXPECT_FALSE(sm.Get("k")->has_value());
}

TEST(PartitionStateMachine, GarbageCommandIsNotAppliedAnywhere) {
  TempStore store;
  PartitionStateMachine sm(store.get(), 1);
  pb::Entry e;
  e.set_slot(1);
  e.set_type(pb::ENTRY_COMMAND);
  e.set_command("\xff\xff\xff not a protobuf");
  auto r = sm.Apply({e});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE((*r)[0].result.applied());
  EXPECT_EQ(*store.get()->AppliedIndex(1), 1u);
}

TEST(PartitionStateMachine, ScanReturnsOrderedPagesWithResumeKey) {
  TempStore store;
  PartitionStateMachine sm(store.get(), 1);
  pb::KvBatch b;
  for (const char* k : {"d", "a", "c", "b", "e"}) {
    auto* w = b.add_writes();
    w->set_key(k);
    w->set_value(std::string("v") + k);
  }
  ASSERT_TRUE(sm.Apply({Command(1, b)}).ok());
  auto page = sm.Scan("", "", 2);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items_size(), 2);
  EXPECT_EQ(page->items(0).key(), "a");
  EXPECT_EQ(page->items(1).key(), "b");
  EXPECT_EQ(page->resume_key(), "c");
  auto rest = sm.Scan(page->resume_key(), "e", 10);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->items_size(), 2);
  EXPECT_EQ(rest->items(1).key(), "d");
  EXPECT_TRUE(rest->resume_key().empty());
  EXPECT_EQ(sm.Scan("", "", 0).status().code(), StatusCode::kInvalidArgument);
}

// Scans unwrap stored KvRecords by hand: any field order, unknown fields
// skipped, the last of a repeated field kept, a malformed record refused.
TEST(PartitionStateMachine, ScanReadsStoredRecordsAsProtobufWould) {
  TempStore store;
  using namespace std::string_literals;
  ASSERT_TRUE(store.get()
                  ->Apply(1, 1,
                          {storage::Mutation::Put("a", "\x12\x02va\x38\x01\x08\x05"s),
                           storage::Mutation::Put("b", "\x08\x03\x12\x01x\x12\x02yz"s),
                           storage::Mutation::Put("c", "\x08\x04"s),
                           storage::Mutation::Put("d", "\x12\x05" "ab"s)})
                  .ok());
  PartitionStateMachine sm(store.get(), 1);
  auto r = sm.Scan("", "d", 10);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->items_size(), 3);
  EXPECT_EQ(r->items(0).value(), "va");
  EXPECT_EQ(r->items(0).version(), 5u);
  EXPECT_EQ(r->items(1).value(), "yz");
  EXPECT_EQ(r->items(1).version(), 3u);
  EXPECT_EQ(r->items(2).value(), "");
  EXPECT_EQ(r->items(2).version(), 4u);
  for (const pb::KvItem& item : r->items()) {
    auto got = sm.Get(item.key());
    ASSERT_TRUE(got.ok() && got->has_value());
    EXPECT_EQ((*got)->value(), item.value());
    EXPECT_EQ((*got)->version(), item.version());
  }
  EXPECT_EQ(sm.Scan("d", "", 10).status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace tessera::node
