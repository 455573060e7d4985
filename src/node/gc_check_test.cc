// Goal: the blob GC's owner rule (gc_check.h). After a split of an `_s3`
// partition, a GC record the parent kept whose owner moved to the child is
// never read as unreferenced locally: it is checked at the owner's group
// (referenced there: kept; unreferenced there: deleted; no answer: the
// record is kept whole), while records of owners still in range are
// checked locally as before; and the parent answers s3.blob_refs for a
// moved owner with WrongPartition, never "unreferenced".
#include "node/gc_check.h"

#include <gtest/gtest.h>

#include <map>

#include "node/s3_blob_refs.h"
#include "node/state_machine_test_util.h"
#include "s3/model/s3_keys.h"

namespace tessera::node {
namespace {

namespace s3m = tessera::s3::model;

constexpr GroupId kParent = 3;
constexpr GroupId kChild = 8;
constexpr uint64_t kBucket = 5;

using testing::CommandEntry;
using testing::TempStore;

pb::Entry Write(Slot slot, const std::string& key, const std::string& value) {
  return testing::PutEntry(slot, key, value);
}

// A GC record of object `key` naming `ids`, written at `gc_slot`.
pb::Entry GcRecordOf(Slot slot, uint64_t gc_slot, const std::string& key,
                     const std::vector<std::string>& ids) {
  pb::GcRecord record;
  record.set_bucket_id(kBucket);
  record.set_key(key);
  for (const std::string& id : ids) record.add_blob_ids(id);
  return Write(slot, s3m::GcKey(gc_slot), record.SerializeAsString());
}

// The head of object `key` whose latest version is in blob `id`.
pb::Entry HeadOf(Slot slot, const std::string& key, const std::string& id) {
  pb::ObjectHead head;
  head.mutable_latest()->set_version_id("null");
  head.mutable_latest()->set_size(1);
  head.mutable_latest()->add_blobs()->set_blob_id(id);
  return Write(slot, s3m::HeadKey(kBucket, key), head.SerializeAsString());
}

pb::Entry Split(Slot slot, const std::string& key) {
  pb::KvCommand command;
  command.mutable_split()->set_split_key(key);
  command.mutable_split()->set_child_group_id(kChild);
  return CommandEntry(slot, command);
}

// Answers from a table: owner -> referenced ids; an owner not in it fails.
class FakeOwnerRefs : public OwnerRefs {
 public:
  std::map<std::string, std::set<std::string>> answers;
  std::vector<std::string> asked;
  Result<std::set<std::string>> Referenced(const std::string& owner,
                                           const std::vector<std::string>& blob_ids) override {
    asked.push_back(owner);
    const auto it = answers.find(owner);
    if (it == answers.end()) return Status::Unavailable("owner group unreachable");
    std::set<std::string> out;
    for (const std::string& id : blob_ids) {
      if (it->second.count(id)) out.insert(id);
    }
    return out;
  }
};

class GcCheckTest : public ::testing::Test {
 protected:
  // "a" (in blob a1, GC record of a0 and a1) stays in the parent; "m" and
  // "z" (GC records of m0/m1 and z0) move to the child at the split.
  void SetUp() override {
    std::vector<pb::Entry> entries = {
        HeadOf(1, "a", "a1"),
        GcRecordOf(2, 2, "a", {"a0", "a1"}),
        HeadOf(3, "m", "m1"),
        GcRecordOf(4, 4, "m", {"m0", "m1"}),
        GcRecordOf(5, 5, "z", {"z0"}),
        Split(6, s3m::ObjectPrefix(kBucket, "m")),
    };
    auto applied = parent_.Apply(entries);
    ASSERT_TRUE(applied.ok()) << applied.status().ToString();
    ASSERT_FALSE(applied->back().result.wrong_partition());
  }

  CheckedGcRecord& At(std::vector<CheckedGcRecord>& records, uint64_t gc_slot) {
    for (CheckedGcRecord& r : records) {
      if (r.gc_slot == gc_slot) return r;
    }
    ADD_FAILURE() << "no record at slot " << gc_slot;
    static CheckedGcRecord none;
    return none;
  }

  TempStore store_;
  PartitionStateMachine parent_{store_.get(), kParent};
};

TEST_F(GcCheckTest, OwnersInRangeAreCheckedLocallyMovedOnesAtTheirGroup) {
  auto checked = CheckGcRecords(parent_);
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  ASSERT_EQ(checked->size(), 3u);  // the GC records stay with the parent
  CheckedGcRecord& a = At(*checked, 2);
  EXPECT_FALSE(a.at_owner);
  EXPECT_EQ(a.referenced, std::vector<std::string>{"a1"});
  EXPECT_EQ(a.unreferenced, std::vector<std::string>{"a0"});
  for (uint64_t slot : {4, 5}) {
    CheckedGcRecord& moved = At(*checked, slot);
    EXPECT_TRUE(moved.at_owner) << slot;
    // Never read as unreferenced locally (the head of "m" left with it).
    EXPECT_TRUE(moved.unreferenced.empty()) << slot;
    EXPECT_TRUE(moved.referenced.empty()) << slot;
  }
}

TEST_F(GcCheckTest, MovedOwnerReferencedThereIsKeptUnreferencedIsDeleted) {
  auto checked = CheckGcRecords(parent_);
  ASSERT_TRUE(checked.ok());
  FakeOwnerRefs refs;
  // The child holds "m" with m1 (and a retried put named m0 again there).
  refs.answers[s3m::ObjectPrefix(kBucket, "m")] = {"m0", "m1"};
  refs.answers[s3m::ObjectPrefix(kBucket, "z")] = {};
  CheckedGcRecord& m = At(*checked, 4);
  ASSERT_TRUE(CheckAtOwner(refs, m));
  EXPECT_FALSE(m.at_owner);
  EXPECT_EQ(m.referenced, (std::vector<std::string>{"m0", "m1"}));
  EXPECT_TRUE(m.unreferenced.empty());
  CheckedGcRecord& z = At(*checked, 5);
  ASSERT_TRUE(CheckAtOwner(refs, z));
  EXPECT_TRUE(z.referenced.empty());
  EXPECT_EQ(z.unreferenced, std::vector<std::string>{"z0"});
  EXPECT_EQ(refs.asked.size(), 2u);
}

TEST_F(GcCheckTest, UnreachableOwnerGroupKeepsTheRecord) {
  auto checked = CheckGcRecords(parent_);
  ASSERT_TRUE(checked.ok());
  FakeOwnerRefs refs;  // no answers: the owner's group is unreachable
  CheckedGcRecord& m = At(*checked, 4);
  EXPECT_FALSE(CheckAtOwner(refs, m));
  EXPECT_TRUE(m.at_owner);
  EXPECT_TRUE(m.unreferenced.empty());
  EXPECT_EQ(m.blob_ids, (std::vector<std::string>{"m0", "m1"}));
}

TEST_F(GcCheckTest, ParentAnswersWrongPartitionForAMovedOwner) {
  pb::S3BlobRefsRequest moved;
  moved.set_group_id(kParent);
  moved.set_owner(s3m::ObjectPrefix(kBucket, "m"));
  moved.add_blob_ids("m1");
  EXPECT_EQ(AnswerBlobRefs(parent_, moved).status().code(), StatusCode::kWrongPartition);
  pb::S3BlobRefsRequest here = moved;
  here.set_owner(s3m::ObjectPrefix(kBucket, "a"));
  here.set_blob_ids(0, "a1");
  auto answer = AnswerBlobRefs(parent_, here);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  ASSERT_EQ(answer->referenced_size(), 1);
  EXPECT_EQ(answer->referenced(0), "a1");
}

TEST(PartitionOfOwner, PicksThePartitionHoldingTheOwnersRecords) {
  std::vector<pb::PartitionDescriptor> map(2);
  map[0].set_group_id(1);
  map[0].set_end_key(s3m::ObjectPrefix(kBucket, "m"));
  map[1].set_group_id(2);
  map[1].set_start_key(s3m::ObjectPrefix(kBucket, "m"));
  EXPECT_EQ(PartitionOfOwner(map, s3m::ObjectPrefix(kBucket, "a"))->group_id(), 1u);
  EXPECT_EQ(PartitionOfOwner(map, s3m::ObjectPrefix(kBucket, "m"))->group_id(), 2u);
  EXPECT_EQ(PartitionOfOwner(map, s3m::ObjectPrefix(kBucket, "z"))->group_id(), 2u);
  map.pop_back();
  EXPECT_EQ(PartitionOfOwner(map, s3m::ObjectPrefix(kBucket, "z")), nullptr);
}

}  // namespace
}  // namespace tessera::node
