// Goal: a ByteBudget never leases more than its max, refuses rather than
// exceeds it (also under concurrent leases), and every lease gives its
// bytes back exactly once: on Release, move-assignment or destruction.
#include "common/byte_budget.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace tessera {
namespace {

TEST(ByteBudgetTest, RefusesBeyondMaxAndGivesBackOnce) {
  auto budget = std::make_shared<ByteBudget>(100);
  ByteLease a = budget->TryLease(60);
  EXPECT_EQ(a.bytes(), 60u);
  EXPECT_EQ(budget->TryLease(41).bytes(), 0u) << "would exceed the max";
  EXPECT_EQ(budget->TryLease(101).bytes(), 0u);
  EXPECT_EQ(budget->TryLease(0).bytes(), 0u);
  {
    ByteLease b = budget->TryLease(40);
    EXPECT_EQ(b.bytes(), 40u);
    EXPECT_EQ(budget->leased(), 100u);
  }
  EXPECT_EQ(budget->leased(), 60u) << "destruction gives back";
  ByteLease moved = std::move(a);
  EXPECT_EQ(a.bytes(), 0u);  // NOLINT(bugprone-use-after-move): the contract under test
  EXPECT_EQ(budget->leased(), 60u) << "a move keeps one owner";
  moved = budget->TryLease(10);  // the old lease is given back first
  EXPECT_EQ(budget->leased(), 10u);
  moved.Release();
  moved.Release();
  EXPECT_EQ(budget->leased(), 0u);
}

TEST(ByteBudgetTest, ConcurrentLeasesNeverExceedTheMax) {
  auto budget = std::make_shared<ByteBudget>(1000);
  std::atomic<size_t> peak{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        ByteLease lease = budget->TryLease(300);
        const size_t now = budget->leased();
        size_t seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(peak.load(), 1000u);
  EXPECT_EQ(budget->leased(), 0u);
}

}  // namespace
}  // namespace tessera
