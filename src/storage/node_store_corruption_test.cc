// Goal: every damaged or inconsistent record (flipped byte, truncation, slot
// mismatch, hole, state behind the log base, foreign format) is reported as
// Corruption naming the group and slot or key, and never returned as data.
#include <gtest/gtest.h>

#include <string>

#include "storage/key_codec.h"
#include "storage/node_store.h"
#include "storage/record_codec.h"
#include "storage/storage_test_util.h"
#include "tessera/storage.pb.h"

namespace tessera::storage {
namespace {

using testing::LogWriteFor;
using testing::MakeEntries;
using testing::MakeHardState;
using testing::OpenStore;
using testing::RawDb;
using testing::TempDir;

constexpr GroupId kGroup = 7;

// A store with entries 1..5, a hard state, a log base and applied state for
// kGroup, closed again so that tests can damage it through RawDb.
class CorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenStore(dir_.path());
    ASSERT_TRUE(
        store
            ->WriteLog(
                LogWriteFor(kGroup).HardState(MakeHardState(2, 1, 3)).Entries(MakeEntries(1, 5, 2)))
            .ok());
    ASSERT_TRUE(store->Apply(kGroup, 3, {Mutation::Put("key", "value")}).ok());
    ASSERT_TRUE(store->WriteLog(LogWriteFor(kGroup + 1).Entries(MakeEntries(1, 2, 1))).ok());
  }

  // Rewrites the stored value at `key` of `cf` (0 log, 1 state) with `edit`.
  template <typename Edit>
  void Damage(int cf, const std::string& key, Edit edit) {
    RawDb raw(dir_.path());
    rocksdb::ColumnFamilyHandle* handle = cf == 0 ? raw.log() : raw.state();
    std::string value = raw.Get(handle, key);
    edit(value);
    raw.Put(handle, key, value);
  }

  // Reopens the store and expects RecoverGroup(kGroup) to fail with
  // Corruption whose message contains every string of `needles`.
  void ExpectRecoveryCorruption(std::initializer_list<std::string> needles) {
    auto store = OpenStore(dir_.path());
    ASSERT_NE(store, nullptr);
    Result<consensus::RecoveredState> state = store->RecoverGroup(kGroup);
    ASSERT_FALSE(state.ok());
    EXPECT_EQ(state.status().code(), StatusCode::kCorruption) << state.status().ToString();
    for (const std::string& needle : needles) {
      EXPECT_NE(state.status().message().find(needle), std::string::npos)
          << "missing '" << needle << "' in " << state.status().ToString();
    }
    // Other groups are unaffected.
    EXPECT_TRUE(store->RecoverGroup(kGroup + 1).ok());
  }

  TempDir dir_;
};

// Goal: A flipped payload byte in a log entry is Corruption naming group and slot.
TEST_F(CorruptionTest, FlippedPayloadByteInLogEntry) {
  Damage(0, LogEntryKey(kGroup, 3), [](std::string& v) { v[v.size() - 2] ^= 0x10; });
  ExpectRecoveryCorruption({"group=7", "slot=3", "checksum mismatch"});
}

// Goal: Flipped format, length or CRC header bytes are Corruption naming group and slot.
TEST_F(CorruptionTest, FlippedHeaderBytesInLogEntry) {
  for (size_t offset : {size_t{0}, size_t{1}, size_t{6}}) {
    Damage(0, LogEntryKey(kGroup, 2), [&](std::string& v) { v[offset] ^= 0x01; });
    ExpectRecoveryCorruption({"group=7", "slot=2"});
    Damage(0, LogEntryKey(kGroup, 2), [&](std::string& v) { v[offset] ^= 0x01; });  // undo
  }
}

// Goal: A truncated log entry, short or below the header, is Corruption naming group and slot.
TEST_F(CorruptionTest, TruncatedLogEntry) {
  Damage(0, LogEntryKey(kGroup, 5), [](std::string& v) { v.resize(v.size() - 3); });
  ExpectRecoveryCorruption({"group=7", "slot=5", "length mismatch"});
  Damage(0, LogEntryKey(kGroup, 5), [](std::string& v) { v.resize(4); });
  ExpectRecoveryCorruption({"group=7", "slot=5", "truncated record"});
}

// Goal: A valid record under the wrong slot key is Corruption, not a silently wrong entry.
TEST_F(CorruptionTest, EntryStoredUnderAnotherSlot) {
  {
    RawDb raw(dir_.path());
    raw.Put(raw.log(), LogEntryKey(kGroup, 4), raw.Get(raw.log(), LogEntryKey(kGroup, 2)));
  }
  ExpectRecoveryCorruption({"group=7", "slot=4", "record holds slot=2"});
}

// Goal: A missing slot in the middle of the log is Corruption naming expected and found slots.
TEST_F(CorruptionTest, HoleInLog) {
  {
    RawDb raw(dir_.path());
    raw.Delete(raw.log(), LogEntryKey(kGroup, 3));
  }
  ExpectRecoveryCorruption({"hole in log", "group=7", "expected slot=3", "found slot=4"});
}

// Goal: A log whose first slot is above log_start is a hole too.
TEST_F(CorruptionTest, LogNotStartingAtLogStartIsAHole) {
  {
    RawDb raw(dir_.path());
    raw.Delete(raw.log(), LogEntryKey(kGroup, 1));
  }
  ExpectRecoveryCorruption({"hole in log", "expected slot=1", "found slot=2"});
}

// Goal: Damaged hard state and log base records are Corruption naming the group.
TEST_F(CorruptionTest, DamagedHardStateAndLogBase) {
  Damage(0, HardStateKey(kGroup), [](std::string& v) { v.back() ^= 0x01; });
  ExpectRecoveryCorruption({"hard state group=7"});
  Damage(0, HardStateKey(kGroup), [](std::string& v) { v.back() ^= 0x01; });
  {
    RawDb raw(dir_.path());
    pb::LogBase base;
    base.set_log_start(1);
    std::string record = EncodeProtoRecord(base);
    record[1] ^= 0x01;  // length field
    raw.Put(raw.log(), LogBaseKey(kGroup), record);
  }
  ExpectRecoveryCorruption({"log base group=7"});
}

// Goal: Applied state that does not reach log_start - 1 is Corruption (compaction outran apply).
TEST_F(CorruptionTest, AppliedStateBehindLogBase) {
  {
    RawDb raw(dir_.path());
    pb::LogBase base;
    base.set_log_start(5);  // slots 1..4 gone, but applied_index is 3
    raw.Put(raw.log(), LogBaseKey(kGroup), EncodeProtoRecord(base));
    for (Slot s = 1; s <= 4; ++s) raw.Delete(raw.log(), LogEntryKey(kGroup, s));
  }
  ExpectRecoveryCorruption({"group=7", "applied_index=3", "log_start=5"});
}

// Goal: An entry left below log_start is Corruption.
TEST_F(CorruptionTest, EntryBelowLogStart) {
  {
    RawDb raw(dir_.path());
    pb::LogBase base;
    base.set_log_start(3);
    raw.Put(raw.log(), LogBaseKey(kGroup), EncodeProtoRecord(base));
  }
  ExpectRecoveryCorruption({"group=7", "slot=1", "below log_start=3"});
}

// Goal: A damaged applied index fails recovery, reads, Apply and CompactLog alike.
TEST_F(CorruptionTest, DamagedAppliedIndex) {
  Damage(1, AppliedKey(kGroup), [](std::string& v) { v.back() ^= 0x04; });
  ExpectRecoveryCorruption({"applied index group=7"});
  auto store = OpenStore(dir_.path());
  EXPECT_EQ(store->AppliedIndex(kGroup).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(store->Apply(kGroup, 4, {}).code(), StatusCode::kCorruption);
  EXPECT_EQ(store->CompactLog(kGroup, 1, {}).code(), StatusCode::kCorruption);
}

// Goal: A damaged user value is Corruption from Get, Scan and snapshot reads.
TEST_F(CorruptionTest, DamagedUserValueFailsEveryRead) {
  Damage(1, UserKey(kGroup, "key"), [](std::string& v) { v.back() ^= 0x20; });
  auto store = OpenStore(dir_.path());
  Result<std::string> got = store->Get(kGroup, "key");
  EXPECT_EQ(got.status().code(), StatusCode::kCorruption);
  EXPECT_NE(got.status().message().find("group=7 key=0x6b6579"), std::string::npos)
      << got.status().ToString();
  EXPECT_EQ(store->Scan(kGroup, "", "", 10).status().code(), StatusCode::kCorruption);
  auto snapshot = store->OpenSnapshot(kGroup);
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ((*snapshot)->Next().status().code(), StatusCode::kCorruption);
}

// Goal: A store of another format version does not open.
TEST_F(CorruptionTest, ForeignFormatVersionIsRefused) {
  {
    RawDb raw(dir_.path());
    pb::StoreFormat format;
    format.set_format_version(kStorageFormatVersion + 1);
    raw.Put(raw.meta(), "format_version", EncodeProtoRecord(format));
  }
  NodeStoreOptions options;
  options.path = dir_.path();
  Result<std::unique_ptr<NodeStore>> store = NodeStore::Open(options);
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument) << store.status().ToString();
}

}  // namespace
}  // namespace tessera::storage
