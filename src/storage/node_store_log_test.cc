// Goal: the consensus log of many groups survives restart exactly (hard
// state, log base, entries, applied index), log writes follow Ready step 1
// semantics (truncate, overwrite, order), group commit batches concurrent
// groups durably, a full queue pushes back, and compaction respects the
// applied state.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <thread>
#include <vector>

#include "storage/node_store.h"
#include "storage/storage_test_util.h"

namespace tessera::storage {
namespace {

using testing::EntriesEq;
using testing::LogWriteFor;
using testing::MakeEntries;
using testing::MakeEntry;
using testing::MakeHardState;
using testing::MakeMembership;
using testing::OpenStore;
using testing::ProtoEq;
using testing::TempDir;

consensus::RecoveredState Recover(NodeStore& store, GroupId group) {
  Result<consensus::RecoveredState> state = store.RecoverGroup(group);
  EXPECT_TRUE(state.ok()) << state.status().ToString();
  return state.ok() ? std::move(state).value() : consensus::RecoveredState{};
}

void ExpectRecovered(NodeStore& store, GroupId group, const consensus::RecoveredState& want) {
  consensus::RecoveredState got = Recover(store, group);
  EXPECT_TRUE(ProtoEq(got.hard_state, want.hard_state)) << "group " << group;
  EXPECT_TRUE(ProtoEq(got.log_base, want.log_base)) << "group " << group;
  EXPECT_TRUE(EntriesEq(got.entries, want.entries)) << "group " << group;
  EXPECT_EQ(got.applied_index, want.applied_index) << "group " << group;
}

// Goal: Hard state, log base, entries and applied state of groups survive restart exactly.
TEST(NodeStoreLog, RestartRecoversEveryGroupExactly) {
  TempDir dir;
  std::map<GroupId, consensus::RecoveredState> want;
  {
    auto store = OpenStore(dir.path());
    // Group 1: hard state and entries, some applied.
    LogWrite w1 = LogWriteFor(1).HardState(MakeHardState(3, 2, 4)).Entries(MakeEntries(1, 6, 3));
    ASSERT_TRUE(store->WriteLog(w1).ok());
    ASSERT_TRUE(store->Apply(1, 4, {Mutation::Put("a", "1")}).ok());
    want[1].hard_state = *w1.hard_state;
    want[1].log_base.set_log_start(1);
    want[1].entries = w1.entries;
    want[1].applied_index = 4;
    // Group 2: compacted, so it has a log base with membership.
    LogWrite w2 = LogWriteFor(2).HardState(MakeHardState(7, 1, 10)).Entries(MakeEntries(1, 12, 7));
    ASSERT_TRUE(store->WriteLog(w2).ok());
    ASSERT_TRUE(store->Apply(2, 10, {Mutation::Put("b", "2")}).ok());
    ASSERT_TRUE(store->CompactLog(2, 8, MakeMembership({1, 2, 3}, {4})).ok());
    want[2].hard_state = *w2.hard_state;
    want[2].log_base.set_log_start(9);
    *want[2].log_base.mutable_base_membership() = MakeMembership({1, 2, 3}, {4});
    want[2].entries = MakeEntries(9, 12, 7);
    want[2].applied_index = 10;
    // Group 1 << 40: only a hard state (a fresh acceptor that promised).
    LogWrite w3 = LogWriteFor(GroupId{1} << 40).HardState(MakeHardState(1, 3, 0));
    ASSERT_TRUE(store->WriteLog(w3).ok());
    want[w3.group_id].hard_state = *w3.hard_state;
    want[w3.group_id].log_base.set_log_start(1);
  }
  auto store = OpenStore(dir.path());
  Result<std::vector<GroupId>> groups = store->ListGroups();
  ASSERT_TRUE(groups.ok());
  EXPECT_EQ(*groups, (std::vector<GroupId>{1, 2, GroupId{1} << 40}));
  for (const auto& [group, state] : want) ExpectRecovered(*store, group, state);
  Result<std::string> a = store->Get(1, "a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, "1");
}

// Goal: A group without records recovers as a new group's bootstrap state.
TEST(NodeStoreLog, UnknownGroupRecoversAsBootstrap) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  consensus::RecoveredState state = Recover(*store, 42);
  EXPECT_EQ(state.log_base.log_start(), 1u);
  EXPECT_TRUE(state.entries.empty());
  EXPECT_EQ(state.applied_index, 0u);
  EXPECT_EQ(state.hard_state.promised().round(), 0u);
  EXPECT_TRUE(store->ListGroups()->empty());
}

// Goal: truncate_from deletes the tail; an entry overwrites its slot.
TEST(NodeStoreLog, TruncateFromDeletesTailAndEntriesOverwrite) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  ASSERT_TRUE(store->WriteLog(LogWriteFor(5).Entries(MakeEntries(1, 6, 1))).ok());
  // A new leader replaces slots >= 3 with a shorter tail under a higher ballot.
  ASSERT_TRUE(
      store->WriteLog(LogWriteFor(5).TruncateFrom(3).Entries(MakeEntries(3, 4, 2, "new"))).ok());
  std::vector<pb::Entry> want = MakeEntries(1, 2, 1);
  for (const pb::Entry& e : MakeEntries(3, 4, 2, "new")) want.push_back(e);
  EXPECT_TRUE(EntriesEq(Recover(*store, 5).entries, want));

  // Overwrite without truncation: only that slot changes.
  ASSERT_TRUE(store->WriteLog(LogWriteFor(5).Entries({MakeEntry(2, 9, "over")})).ok());
  want[1] = MakeEntry(2, 9, "over");
  EXPECT_TRUE(EntriesEq(Recover(*store, 5).entries, want));

  // Truncation alone, and truncation past the end, are fine.
  ASSERT_TRUE(store->WriteLog(LogWriteFor(5).TruncateFrom(10)).ok());
  ASSERT_TRUE(store->WriteLog(LogWriteFor(5).TruncateFrom(4)).ok());
  want.pop_back();
  EXPECT_TRUE(EntriesEq(Recover(*store, 5).entries, want));
}

// Goal: Appends, truncations and compactions of many groups, interleaved in
// one memtable, keep every log exact. Range deletions start inside the same
// groups whose entries get memtable insert hints; were a range deletion
// given a point key's hint, RocksDB 7.8 would corrupt the memtable
// (memtable_insert_hints.h).
TEST(NodeStoreLog, InterleavedAppendsTruncationsAndCompactionsKeepEveryLogExact) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  const pb::Membership members = MakeMembership({1, 2, 3});
  constexpr GroupId kGroups = 4;
  std::map<GroupId, std::vector<pb::Entry>> want;
  std::map<GroupId, Slot> next_slot;
  for (GroupId g = 1; g <= kGroups; ++g) next_slot[g] = 1;
  for (int round = 1; round <= 60; ++round) {
    for (GroupId g = 1; g <= kGroups; ++g) {
      const Slot first = next_slot[g];
      const std::vector<pb::Entry> appended = MakeEntries(first, first + 4, round);
      ASSERT_TRUE(store->WriteLog(LogWriteFor(g).Entries(appended)).ok());
      want[g].insert(want[g].end(), appended.begin(), appended.end());
      next_slot[g] = first + 5;
      if ((round + g) % 3 == 0) {  // a new leader replaces the last two slots
        const Slot from = next_slot[g] - 2;
        const std::vector<pb::Entry> tail = MakeEntries(from, from, round + 100, "re");
        ASSERT_TRUE(store->WriteLog(LogWriteFor(g).TruncateFrom(from).Entries(tail)).ok());
        want[g].resize(want[g].size() - 2);
        want[g].insert(want[g].end(), tail.begin(), tail.end());
        next_slot[g] = from + 1;
      }
      if (round % 5 == 0) {  // apply everything and compact all but the last three
        const Slot last = want[g].back().slot();
        ASSERT_TRUE(store->Apply(g, last, {Mutation::Put("k", std::to_string(round))}).ok());
        ASSERT_TRUE(store->CompactLog(g, last - 3, members).ok());
        while (want[g].front().slot() <= last - 3) want[g].erase(want[g].begin());
      }
    }
  }
  for (GroupId g = 1; g <= kGroups; ++g) {
    EXPECT_TRUE(EntriesEq(Recover(*store, g).entries, want[g])) << "group " << g;
  }
  store.reset();
  store = OpenStore(dir.path());
  for (GroupId g = 1; g <= kGroups; ++g) {
    EXPECT_TRUE(EntriesEq(Recover(*store, g).entries, want[g])) << "group " << g << " reopened";
  }
}

// Goal: One LogWrite applies its parts in order, to its own group only.
TEST(NodeStoreLog, OneWriteAppliesInOrderAndTouchesOnlyItsGroup) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  ASSERT_TRUE(store->WriteLog(LogWriteFor(1).Entries(MakeEntries(1, 3, 1))).ok());
  ASSERT_TRUE(store->WriteLog(LogWriteFor(2).Entries(MakeEntries(1, 3, 1))).ok());
  // Truncate from 1 then write 1..2 in the same write: the entries survive.
  LogWrite w = LogWriteFor(2)
                   .HardState(MakeHardState(4, 1, 0))
                   .TruncateFrom(1)
                   .Entries(MakeEntries(1, 2, 4));
  ASSERT_TRUE(store->WriteLog(w).ok());
  EXPECT_TRUE(EntriesEq(Recover(*store, 2).entries, MakeEntries(1, 2, 4)));
  EXPECT_TRUE(ProtoEq(Recover(*store, 2).hard_state, *w.hard_state));
  EXPECT_TRUE(EntriesEq(Recover(*store, 1).entries, MakeEntries(1, 3, 1)));
  // A log base in a write deletes the slots below it, after the entries.
  ASSERT_TRUE(store->Apply(1, 5, {}).ok());
  pb::LogBase base;
  base.set_log_start(3);
  ASSERT_TRUE(store->WriteLog(LogWriteFor(1).Entries(MakeEntries(4, 5, 1)).Base(base)).ok());
  consensus::RecoveredState state = Recover(*store, 1);
  EXPECT_EQ(state.log_base.log_start(), 3u);
  EXPECT_TRUE(EntriesEq(state.entries, MakeEntries(3, 5, 1)));
}

// Goal: Slot 0 / log_start 0 writes are InvalidArgument and never call back.
TEST(NodeStoreLog, InvalidWritesAreRejectedUpFront) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  EXPECT_EQ(store->WriteLog(LogWriteFor(1).Entries({MakeEntry(0, 1, "x")})).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store->WriteLog(LogWriteFor(1).TruncateFrom(0)).code(), StatusCode::kInvalidArgument);
  bool fired = false;
  Status s = store->SubmitLogWrite(LogWriteFor(1).Base(pb::LogBase()),
                                   [&](const Status&) { fired = true; });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->group_commit_stats().writes_submitted, 0u);
  store.reset();
  EXPECT_FALSE(fired);
}

// Goal: Concurrent groups' writes call back OK, share syncs, survive reopen.
TEST(NodeStoreLog, GroupCommitFromSeveralThreadsIsBatchedAndDurable) {
  constexpr int kGroups = 4;
  constexpr Slot kSlots = 300;
  TempDir dir;
  {
    auto store = OpenStore(dir.path());
    std::atomic<int> ok{0}, failed{0};
    std::vector<std::thread> threads;
    for (int g = 1; g <= kGroups; ++g) {
      threads.emplace_back([&, g] {
        for (Slot s = 1; s <= kSlots; ++s) {
          LogWrite w =
              LogWriteFor(GroupId(g))
                  .HardState(MakeHardState(1, 1, s - 1))
                  .Entries({MakeEntry(s, 1, "g" + std::to_string(g) + "-" + std::to_string(s))});
          Status submitted = store->SubmitLogWrite(
              std::move(w), [&](const Status& st) { (st.ok() ? ok : failed) += 1; });
          ASSERT_TRUE(submitted.ok()) << submitted.ToString();
        }
      });
    }
    for (auto& t : threads) t.join();
    while (ok.load() + failed.load() < kGroups * int(kSlots)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(failed.load(), 0);
    GroupCommitStats stats = store->group_commit_stats();
    EXPECT_EQ(stats.writes_submitted, uint64_t{kGroups * kSlots});
    EXPECT_LT(stats.batches_synced, stats.writes_submitted);
    EXPECT_GT(stats.bytes_synced, 0u);
    std::printf("group commit: %llu writes in %llu synced batches, %llu bytes\n",
                static_cast<unsigned long long>(stats.writes_submitted),
                static_cast<unsigned long long>(stats.batches_synced),
                static_cast<unsigned long long>(stats.bytes_synced));
  }
  auto store = OpenStore(dir.path());
  for (int g = 1; g <= kGroups; ++g) {
    consensus::RecoveredState state = Recover(*store, GroupId(g));
    EXPECT_TRUE(EntriesEq(state.entries, MakeEntries(1, kSlots, 1, "g" + std::to_string(g))));
    EXPECT_EQ(state.hard_state.chosen_index(), kSlots - 1);  // the last write won
  }
}

// Goal: With queue_max overridden to 2, a third pending log write is Throttled.
TEST(NodeStoreLog, FullQueueReturnsThrottled) {
  TempDir dir;
  GroupCommitOptions options;
  options.queue_max = 2;
  auto store = OpenStore(dir.path(), options);
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  ASSERT_TRUE(store
                  ->SubmitLogWrite(LogWriteFor(1).Entries(MakeEntries(1, 1, 1)),
                                   [&](const Status&) {
                                     entered.set_value();
                                     released.wait();
                                   })
                  .ok());
  entered.get_future().wait();  // the writer thread is parked in the callback
  std::atomic<int> done{0};
  auto count = [&](const Status& s) { done += s.ok(); };
  EXPECT_TRUE(store->SubmitLogWrite(LogWriteFor(1).Entries(MakeEntries(2, 2, 1)), count).ok());
  EXPECT_TRUE(store->SubmitLogWrite(LogWriteFor(2).Entries(MakeEntries(1, 1, 1)), count).ok());
  Status full = store->SubmitLogWrite(LogWriteFor(3).Entries(MakeEntries(1, 1, 1)), count);
  EXPECT_EQ(full.code(), StatusCode::kThrottled) << full.ToString();
  EXPECT_EQ(store->group_commit_stats().writes_throttled, 1u);
  release.set_value();
  store.reset();
  EXPECT_EQ(done.load(), 2);
}

// Goal: CompactLog refuses slots applied state does not cover; persists LogBase.
TEST(NodeStoreLog, CompactionNeverOutrunsAppliedState) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  ASSERT_TRUE(store->WriteLog(LogWriteFor(3).Entries(MakeEntries(1, 10, 1))).ok());
  ASSERT_TRUE(store->Apply(3, 6, {Mutation::Put("k", "v")}).ok());
  const pb::Membership members = MakeMembership({1, 2, 3});

  EXPECT_EQ(store->CompactLog(3, 7, members).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(store->CompactLog(3, 5, members).ok());
  EXPECT_TRUE(store->CompactLog(3, 5, members).ok());  // already there: no-op
  EXPECT_EQ(store->CompactLog(3, 3, members).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(store->CompactLog(3, 6, members).ok());

  store.reset();
  store = OpenStore(dir.path());
  consensus::RecoveredState state = Recover(*store, 3);
  EXPECT_EQ(state.log_base.log_start(), 7u);
  EXPECT_TRUE(ProtoEq(state.log_base.base_membership(), members));
  EXPECT_TRUE(EntriesEq(state.entries, MakeEntries(7, 10, 1)));
  EXPECT_EQ(state.applied_index, 6u);
}

// Goal: A compaction takes effect after the group's earlier queued log writes.
TEST(NodeStoreLog, CompactionIsOrderedAfterQueuedLogWrites) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  ASSERT_TRUE(store->WriteLog(LogWriteFor(1).Entries(MakeEntries(1, 4, 1))).ok());
  ASSERT_TRUE(store->Apply(1, 4, {}).ok());
  std::atomic<int> done{0};
  // Queued: rewrites slots 3..4 and appends 5..8. Were the compaction applied
  // first, slots 3..4 would reappear below log_start.
  ASSERT_TRUE(store
                  ->SubmitLogWrite(LogWriteFor(1).Entries(MakeEntries(3, 8, 1)),
                                   [&](const Status& s) { done += s.ok(); })
                  .ok());
  ASSERT_TRUE(store->CompactLog(1, 4, MakeMembership({1})).ok());
  EXPECT_EQ(done.load(), 1);  // FIFO: the earlier write was durable first
  EXPECT_TRUE(EntriesEq(Recover(*store, 1).entries, MakeEntries(5, 8, 1)));
}

// Goal: SubmitCompactLog queues the compaction without waiting, after the
// group's earlier queued writes, checks it like CompactLog when called, and
// says when there is nothing to do.
TEST(NodeStoreLog, SubmittedCompactionIsCheckedQueuedAndOrdered) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  const pb::Membership members = MakeMembership({1});
  ASSERT_TRUE(store->WriteLog(LogWriteFor(1).Entries(MakeEntries(1, 4, 1))).ok());
  ASSERT_TRUE(store->Apply(1, 4, {}).ok());
  auto ignore = [](const Status&) {};
  EXPECT_EQ(store->SubmitCompactLog(1, 5, members, ignore).status().code(),
            StatusCode::kInvalidArgument);  // beyond the applied index
  std::promise<Status> write_done;
  std::promise<Status> compaction_done;
  ASSERT_TRUE(store
                  ->SubmitLogWrite(LogWriteFor(1).Entries(MakeEntries(3, 8, 1)),
                                   [&](const Status& s) { write_done.set_value(s); })
                  .ok());
  Result<bool> queued = store->SubmitCompactLog(
      1, 4, members, [&](const Status& s) { compaction_done.set_value(s); });
  ASSERT_TRUE(queued.ok()) << queued.status().ToString();
  EXPECT_TRUE(*queued);
  EXPECT_TRUE(compaction_done.get_future().get().ok());
  EXPECT_TRUE(write_done.get_future().get().ok());
  EXPECT_TRUE(EntriesEq(Recover(*store, 1).entries, MakeEntries(5, 8, 1)));
  Result<bool> again = store->SubmitCompactLog(1, 4, members, ignore);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);  // the log already starts at 5
}

// Goal: RemoveGroup deletes one group's log and state and nothing else.
TEST(NodeStoreLog, RemoveGroupDeletesEverythingOfThatGroupOnly) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  for (GroupId g : {1, 2}) {
    ASSERT_TRUE(
        store
            ->WriteLog(
                LogWriteFor(g).HardState(MakeHardState(1, 1, 0)).Entries(MakeEntries(1, 3, 1)))
            .ok());
    ASSERT_TRUE(store->Apply(g, 2, {Mutation::Put("k", "v")}).ok());
  }
  ASSERT_TRUE(store->RemoveGroup(1).ok());
  EXPECT_EQ(*store->ListGroups(), (std::vector<GroupId>{2}));
  EXPECT_TRUE(Recover(*store, 1).entries.empty());
  EXPECT_EQ(store->Get(1, "k").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Recover(*store, 2).entries.size(), 3u);
  EXPECT_EQ(*store->Get(2, "k"), "v");
}

}  // namespace
}  // namespace tessera::storage
