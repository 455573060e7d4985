// Goal: the memtable insert hints cover exactly the keys every write
// touches (entries, hard state, log base, applied index), and never a key a
// range deletion starts at (the RocksDB 7.8 defect in memtable_insert_hints.h).
#include "storage/memtable_insert_hints.h"

#include <gtest/gtest.h>

#include "storage/key_codec.h"
#include "storage/snapshot_staging.h"

namespace tessera::storage {
namespace {

// Goal: the keys written on every replicated write get a hint; user keys do not.
TEST(MemtableInsertHints, CoverTheKeysEveryWriteTouches) {
  for (GroupId group : {GroupId{0}, GroupId{1}, GroupId{0x0102030405060708}}) {
    EXPECT_TRUE(HintedInLogFamily(LogEntryKey(group, 1)));
    EXPECT_TRUE(HintedInLogFamily(LogEntryKey(group, UINT64_MAX)));
    EXPECT_TRUE(HintedInLogFamily(HardStateKey(group)));
    EXPECT_TRUE(HintedInLogFamily(LogBaseKey(group)));
    EXPECT_TRUE(HintedInStateFamily(AppliedKey(group)));
    EXPECT_FALSE(HintedInStateFamily(UserKey(group, "k")));
    EXPECT_FALSE(HintedInStateFamily(UserKey(group, "")));
    EXPECT_FALSE(HintedInStateFamily(StagedKey(group, "k")));
  }
}

// Goal: every key a range deletion of the storage code starts at is outside
// both domains.
TEST(MemtableInsertHints, RangeDeletionStartsNeverGetAHint) {
  for (GroupId group : {GroupId{0}, GroupId{1}, GroupId{0x0102030405060708}}) {
    EXPECT_FALSE(HintedInLogFamily(LogEntriesBegin(group)));
    EXPECT_FALSE(HintedInLogFamily(GroupBegin(group)));
    for (Slot slot : {Slot{0}, Slot{1}, Slot{2}, Slot{1000}, Slot{UINT64_MAX}}) {
      EXPECT_FALSE(HintedInLogFamily(LogEntriesFrom(group, slot))) << slot;
    }
    EXPECT_FALSE(HintedInStateFamily(UserKeysBegin(group)));
    EXPECT_FALSE(HintedInStateFamily(StagedKeysBegin(group)));
    EXPECT_FALSE(HintedInStateFamily(GroupBegin(group)));
  }
}

// Goal: the transforms RocksDB calls agree with the predicates, and entries
// of one group share one prefix.
TEST(MemtableInsertHints, TransformsAgreeWithThePredicates) {
  const auto log = LogFamilyInsertHintPrefix();
  const auto state = StateFamilyInsertHintPrefix();
  const std::string entry_a = LogEntryKey(3, 10);
  const std::string entry_b = LogEntryKey(3, 11);
  const std::string other_group = LogEntryKey(4, 10);
  EXPECT_TRUE(log->InDomain(entry_a));
  EXPECT_FALSE(log->InDomain(LogEntriesFrom(3, 10)));
  EXPECT_EQ(log->Transform(entry_a), log->Transform(entry_b));
  EXPECT_NE(log->Transform(entry_a), log->Transform(other_group));
  EXPECT_NE(log->Transform(entry_a), log->Transform(HardStateKey(3)));
  EXPECT_EQ(log->Transform(HardStateKey(3)).ToString(), HardStateKey(3));
  EXPECT_TRUE(state->InDomain(AppliedKey(3)));
  EXPECT_FALSE(state->InDomain(UserKey(3, "k")));
  EXPECT_EQ(state->Transform(AppliedKey(3)).ToString(), AppliedKey(3));
}

}  // namespace
}  // namespace tessera::storage
