// Goal: the simulator's key-value state machine applies put/cas correctly,
// encodes deterministically, and persists in increments that add up.
#include "sim/kv_state.h"

#include <gtest/gtest.h>

namespace tessera::sim {
namespace {

pb::Entry Command(Slot slot, uint64_t request_id, const std::string& key, const std::string& value,
                  bool cas = false, std::optional<std::string> expected = std::nullopt) {
  pb::Entry entry;
  entry.set_slot(slot);
  entry.set_type(pb::ENTRY_COMMAND);
  entry.set_request_id(request_id);
  entry.set_command(EncodeKvCommand(1, key, value, cas, expected));
  return entry;
}

pb::Entry Noop(Slot slot) {
  pb::Entry entry;
  entry.set_slot(slot);
  entry.set_type(pb::ENTRY_NOOP);
  return entry;
}

TEST(KvStateTest, PutAndCompareAndSet) {
  KvState state;
  ASSERT_TRUE(state.Apply(Command(1, 11, "a", "x")).ok());
  ASSERT_TRUE(state.Apply(Noop(2)).ok());
  ASSERT_TRUE(state.Apply(Command(3, 13, "a", "y", true, std::string("x"))).ok());
  ASSERT_TRUE(state.Apply(Command(4, 14, "a", "z", true, std::string("x"))).ok());
  ASSERT_TRUE(state.Apply(Command(5, 15, "b", "w", true, std::nullopt)).ok());
  ASSERT_TRUE(state.Apply(Command(6, 16, "b", "v", true, std::nullopt)).ok());
  EXPECT_EQ(state.Get("a"), "y");
  EXPECT_EQ(state.Get("b"), "w");
  EXPECT_EQ(state.Get("c"), std::nullopt);
  EXPECT_EQ(state.applied_index(), 6u);
  EXPECT_TRUE(state.ResultAt(3)->cas_succeeded);
  EXPECT_FALSE(state.ResultAt(4)->cas_succeeded);
  EXPECT_TRUE(state.ResultAt(5)->cas_succeeded);
  EXPECT_FALSE(state.ResultAt(6)->cas_succeeded);
  EXPECT_EQ(state.ResultAt(2), nullptr);
  EXPECT_EQ(state.ResultAt(1)->request_id, 11u);
}

TEST(KvStateTest, RejectsOutOfOrderSlotsAndGarbage) {
  KvState state;
  EXPECT_FALSE(state.Apply(Command(2, 1, "a", "x")).ok());
  pb::Entry bad = Noop(1);
  bad.set_type(pb::ENTRY_COMMAND);
  bad.set_command("\xff\xff\xff");
  EXPECT_FALSE(state.Apply(bad).ok());
}

TEST(KvStateTest, SnapshotRoundTripIsByteStable) {
  KvState state;
  for (Slot slot = 1; slot <= 20; ++slot) {
    ASSERT_TRUE(state.Apply(Command(slot, 100 + slot, "k" + std::to_string(slot % 3),
                                    "v" + std::to_string(slot))).ok());
  }
  const std::string bytes = state.Serialize();
  Result<KvState> parsed = KvState::Parse(bytes);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->Serialize(), bytes);
  EXPECT_EQ(parsed->DataHash(), state.DataHash());
  EXPECT_EQ(parsed->results(), state.results());
  EXPECT_FALSE(KvState::Parse("\x08").ok());
}

TEST(KvStateTest, DeltasAddUpToTheState) {
  KvState state;
  KvState image;
  for (Slot slot = 1; slot <= 30; ++slot) {
    ASSERT_TRUE(state.Apply(Command(slot, slot, "k" + std::to_string(slot % 4),
                                    "v" + std::to_string(slot))).ok());
    if (slot % 7 == 0) {
      const KvState::Delta delta = state.TakeDelta();
      EXPECT_LE(delta.data.size(), 4u);
      EXPECT_EQ(delta.results.size(), 7u);
      image.MergeDelta(delta);
    }
  }
  image.MergeDelta(state.TakeDelta());
  EXPECT_EQ(image.Serialize(), state.Serialize());
  EXPECT_TRUE(state.TakeDelta().data.empty());
}

TEST(KvStateTest, DeltasContinueFromAParsedSnapshot) {
  KvState state;
  for (Slot slot = 1; slot <= 5; ++slot) {
    ASSERT_TRUE(state.Apply(Command(slot, slot, "a", "v" + std::to_string(slot))).ok());
  }
  Result<KvState> parsed = KvState::Parse(state.Serialize());
  ASSERT_TRUE(parsed.ok());
  KvState image = *parsed;
  ASSERT_TRUE(parsed->Apply(Command(6, 6, "b", "w")).ok());
  const KvState::Delta delta = parsed->TakeDelta();
  EXPECT_EQ(delta.data.size(), 1u);
  ASSERT_EQ(delta.results.size(), 1u);
  image.MergeDelta(delta);
  EXPECT_EQ(image.Serialize(), parsed->Serialize());
}

TEST(KvStateTest, FingerprintIgnoresBallotAndSlot) {
  pb::Entry a = Command(5, 9, "k", "v");
  pb::Entry b = a;
  b.set_slot(6);
  b.mutable_ballot()->set_round(7);
  EXPECT_EQ(EntryFingerprint(a), EntryFingerprint(b));
  b.set_request_id(10);
  EXPECT_NE(EntryFingerprint(a), EntryFingerprint(b));
  EXPECT_NE(EntryFingerprint(Noop(5)), EntryFingerprint(a));
}

}  // namespace
}  // namespace tessera::sim
