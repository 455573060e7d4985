// Goal: the digest pool runs every posted task exactly once, off the
// posting thread, on no more threads than asked, and its destructor runs
// what is still queued before it returns.
#include "s3/front/digest_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <set>
#include <thread>

namespace tessera::s3::front {
namespace {

TEST(DigestPool, RunsEveryTaskOnceOffThePostingThread) {
  std::atomic<int> ran{0};
  std::mutex mu;
  std::set<std::thread::id> threads;
  {
    DigestPool pool(2);
    for (int i = 0; i < 200; ++i) {
      pool.Post([&] {
        {
          std::lock_guard lock(mu);
          threads.insert(std::this_thread::get_id());
        }
        ran.fetch_add(1);
      });
    }
  }  // the destructor runs what is queued, then joins
  EXPECT_EQ(ran.load(), 200);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
  EXPECT_LE(threads.size(), 2u);
}

TEST(DigestPool, QueuedTasksFinishBeforeTheDestructorReturns) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> second_ran{false};
  auto pool = std::make_unique<DigestPool>(1);
  pool->Post([released] { released.wait(); });  // holds the only thread
  pool->Post([&] { second_ran = true; });
  std::thread destroyer([&] { pool.reset(); });
  EXPECT_FALSE(second_ran.load());
  release.set_value();
  destroyer.join();
  EXPECT_TRUE(second_ran.load());
}

}  // namespace
}  // namespace tessera::s3::front
