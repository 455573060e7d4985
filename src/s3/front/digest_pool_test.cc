// Goal: the digest pool runs every posted job exactly once (prepare, MD5,
// then), off the posting thread, on no more threads than asked; jobs taken
// together get the MD5 each would get alone; and its destructor runs what
// is still queued before it returns.
#include "s3/front/digest_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "s3/auth/checksum.h"
#include "s3/auth/md5.h"

namespace tessera::s3::front {
namespace {

TEST(DigestPool, RunsEveryJobOnceOffThePostingThreadWithItsOwnMd5) {
  constexpr int kJobs = 200;
  std::vector<auth::Md5> md5s(kJobs);
  std::vector<std::string> inputs(kJobs);
  for (int i = 0; i < kJobs; ++i) inputs[i] = std::string(static_cast<size_t>(i) * 97, static_cast<char>('a' + i % 26));
  std::atomic<int> prepared{0}, finished{0};
  std::mutex mu;
  std::set<std::thread::id> threads;
  std::vector<std::string> digests(kJobs);
  {
    DigestPool pool(2);
    for (int i = 0; i < kJobs; ++i) {
      pool.Post(DigestJob{.prepare =
                              [&, i]() -> std::optional<std::string_view> {
                                {
                                  std::lock_guard lock(mu);
                                  threads.insert(std::this_thread::get_id());
                                }
                                prepared.fetch_add(1);
                                return inputs[i];
                              },
                          .md5 = &md5s[i],
                          .then =
                              [&, i] {
                                digests[i] = md5s[i].Finish();
                                finished.fetch_add(1);
                              }});
    }
  }  // the destructor runs what is queued, then joins
  EXPECT_EQ(prepared.load(), kJobs);
  EXPECT_EQ(finished.load(), kJobs);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
  EXPECT_LE(threads.size(), 2u);
  for (int i = 0; i < kJobs; ++i) {
    EXPECT_EQ(digests[i], auth::ComputeChecksum(auth::ChecksumAlgorithm::kMd5, inputs[i])) << i;
  }
}

TEST(DigestPool, AJobWithNothingToHashStillRunsThen) {
  auth::Md5 md5;
  std::atomic<bool> ran{false};
  {
    DigestPool pool(1);
    pool.Post(DigestJob{.prepare = []() -> std::optional<std::string_view> { return std::nullopt; },
                        .md5 = &md5,
                        .then = [&] { ran = true; }});
  }
  EXPECT_TRUE(ran.load());
  EXPECT_EQ(auth::HexEncode(md5.Finish()), "d41d8cd98f00b204e9800998ecf8427e");
}

TEST(DigestPool, QueuedJobsFinishBeforeTheDestructorReturns) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> second_ran{false};
  auth::Md5 first_md5, second_md5;
  auto pool = std::make_unique<DigestPool>(1);
  pool->Post(DigestJob{.prepare =
                           [released]() -> std::optional<std::string_view> {
                             released.wait();  // holds the only thread
                             return std::nullopt;
                           },
                       .md5 = &first_md5,
                       .then = [] {}});
  // Taken alone or in one batch with the first, the second job's `then`
  // cannot run before the first job's prepare returns.
  pool->Post(DigestJob{.prepare = []() -> std::optional<std::string_view> { return "x"; },
                       .md5 = &second_md5,
                       .then = [&] { second_ran = true; }});
  std::thread destroyer([&] { pool.reset(); });
  EXPECT_FALSE(second_ran.load());
  release.set_value();
  destroyer.join();
  EXPECT_TRUE(second_ran.load());
}

}  // namespace
}  // namespace tessera::s3::front
