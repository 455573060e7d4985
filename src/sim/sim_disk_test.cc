// Goal: the simulated disk loses exactly the unsynced writes on a crash
// (keeping a prefix at most) and recovers a consistent durable image.
#include "sim/sim_disk.h"

#include <gtest/gtest.h>

namespace tessera::sim {
namespace {

pb::Membership Voters() {
  pb::Membership membership;
  for (uint32_t id = 1; id <= 3; ++id) membership.add_voters(id);
  return membership;
}

DiskWrite Entries(Slot first, Slot last, uint64_t round) {
  DiskWrite write;
  for (Slot slot = first; slot <= last; ++slot) {
    pb::Entry entry;
    entry.set_slot(slot);
    entry.mutable_ballot()->set_round(round);
    entry.set_type(pb::ENTRY_NOOP);
    write.entries.push_back(entry);
  }
  return write;
}

TEST(SimDiskTest, BootstrapRecoversEmptyGroup) {
  SimDisk disk(Voters());
  Result<consensus::RecoveredState> state = disk.Recover();
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->log_base.log_start(), 1u);
  EXPECT_EQ(state->log_base.base_membership().voters_size(), 3);
  EXPECT_TRUE(state->entries.empty());
  EXPECT_EQ(state->applied_index, 0u);
}

TEST(SimDiskTest, CrashLosesUnsyncedWrites) {
  SimDisk disk(Voters());
  const uint64_t first = disk.Append(Entries(1, 3, 1));
  DiskWrite hard;
  hard.hard_state.emplace();
  hard.hard_state->mutable_promised()->set_round(4);
  disk.Append(std::move(hard));
  disk.SyncUpTo(first);
  disk.Append(Entries(4, 5, 1));
  EXPECT_EQ(disk.pending_count(), 2u);
  disk.Crash(0);
  Result<consensus::RecoveredState> state = disk.Recover();
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->entries.size(), 3u);
  EXPECT_EQ(state->hard_state.promised().round(), 0u);
}

TEST(SimDiskTest, CrashMayKeepAPrefix) {
  SimDisk disk(Voters());
  disk.Append(Entries(1, 2, 1));
  disk.Append(Entries(3, 4, 1));
  disk.Append(Entries(5, 6, 1));
  disk.Crash(2);
  ASSERT_TRUE(disk.Recover().ok());
  EXPECT_EQ(disk.Recover()->entries.size(), 4u);
  EXPECT_FALSE(disk.has_pending());
}

TEST(SimDiskTest, TruncateOverwriteAndLogBase) {
  SimDisk disk(Voters());
  disk.Append(Entries(1, 6, 1));
  DiskWrite overwrite = Entries(4, 4, 2);
  overwrite.truncate_from = 4;
  disk.Append(std::move(overwrite));
  DiskWrite compact;
  compact.log_base.emplace();
  compact.log_base->set_log_start(3);
  KvState kv;
  for (Slot slot = 1; slot <= 2; ++slot) {
    pb::Entry noop;
    noop.set_slot(slot);
    noop.set_type(pb::ENTRY_NOOP);
    ASSERT_TRUE(kv.Apply(noop).ok());
  }
  compact.kv_replace = kv;
  disk.SyncUpTo(disk.Append(std::move(compact)));
  Result<consensus::RecoveredState> state = disk.Recover();
  ASSERT_TRUE(state.ok());
  ASSERT_EQ(state->entries.size(), 2u);
  EXPECT_EQ(state->entries[0].slot(), 3u);
  EXPECT_EQ(state->entries[1].ballot().round(), 2u);
  EXPECT_EQ(state->applied_index, 2u);
}

TEST(SimDiskTest, RecoverReportsAppliedBelowLogStart) {
  SimDisk disk(Voters());
  DiskWrite compact;
  compact.log_base.emplace();
  compact.log_base->set_log_start(10);
  disk.SyncUpTo(disk.Append(std::move(compact)));
  EXPECT_FALSE(disk.Recover().ok());
}

}  // namespace
}  // namespace tessera::sim
