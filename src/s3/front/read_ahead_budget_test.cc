// Goal: the read-ahead budget never holds more than its maximum, refuses
// without taking anything, and gets every released byte back, also under
// concurrent use.
#include "s3/front/read_ahead_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace tessera::s3::front {
namespace {

TEST(ReadAheadBudget, HoldsAtMostItsMaximum) {
  ReadAheadBudget budget(10);
  EXPECT_TRUE(budget.TryAcquire(6));
  EXPECT_FALSE(budget.TryAcquire(5));
  EXPECT_EQ(budget.bytes(), 6u) << "a refusal takes nothing";
  EXPECT_TRUE(budget.TryAcquire(4));
  EXPECT_FALSE(budget.TryAcquire(1));
  budget.Release(6);
  EXPECT_TRUE(budget.TryAcquire(6));
  budget.Release(10);
  EXPECT_EQ(budget.bytes(), 0u);
  ReadAheadBudget none(0);
  EXPECT_FALSE(none.TryAcquire(1));
  EXPECT_TRUE(none.TryAcquire(0));
}

TEST(ReadAheadBudget, ConcurrentUseKeepsTheBound) {
  ReadAheadBudget budget(1000);
  std::atomic<bool> over{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20'000; ++i) {
        if (!budget.TryAcquire(300)) continue;
        if (budget.bytes() > 1000) over = true;
        budget.Release(300);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(over.load());
  EXPECT_EQ(budget.bytes(), 0u);
}

}  // namespace
}  // namespace tessera::s3::front
