// Goal: JobThread runs jobs one at a time in acceptance order off the
// caller's thread, refuses beyond its bound and after Stop, and Stop lets
// the running job finish while dropping the waiting ones unrun. Its thread
// carries the name it was given. A stepped one runs them on its owner's
// thread only when asked.
#include "common/job_thread.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>

#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace tessera {
namespace {

TEST(JobThread, RunsJobsInOrderOnItsOwnThread) {
  JobThread jobs("test-jobs", 64);
  std::vector<int> order;  // touched by the job thread only, read after the barrier
  std::thread::id ran_on;
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(jobs.Submit([&order, &ran_on, i] {
                      order.push_back(i);
                      ran_on = std::this_thread::get_id();
                    })
                    .ok());
  }
  std::promise<void> done;
  ASSERT_TRUE(jobs.Submit([&done] { done.set_value(); }).ok());
  done.get_future().wait();
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i);
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(JobThread, ItsThreadCarriesTheGivenName) {
  JobThread jobs("snapshot", 4);
  std::promise<std::string> name;
  ASSERT_TRUE(jobs.Submit([&name] {
                    char buffer[16] = {};
                    ::prctl(PR_GET_NAME, buffer);
                    name.set_value(buffer);
                  })
                  .ok());
  EXPECT_EQ(name.get_future().get(), "snapshot");
}

TEST(JobThread, RefusesBeyondItsBoundAndAfterStop) {
  JobThread jobs("test-jobs", 2);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> started;
  ASSERT_TRUE(jobs.Submit([&started, released] {
                    started.set_value();
                    released.wait();
                  })
                  .ok());
  started.get_future().wait();  // the first job runs: the queue is empty again
  ASSERT_TRUE(jobs.Submit([] {}).ok());
  ASSERT_TRUE(jobs.Submit([] {}).ok());
  EXPECT_EQ(jobs.waiting(), 2u);
  EXPECT_EQ(jobs.Submit([] {}).code(), StatusCode::kThrottled);
  release.set_value();
  jobs.Stop();
  EXPECT_EQ(jobs.Submit([] {}).code(), StatusCode::kAborted);
}

TEST(JobThread, StopFinishesTheRunningJobAndDropsTheWaitingOnes) {
  auto ran = std::make_shared<std::atomic<int>>(0);
  auto dropped_marker = std::make_shared<int>(0);
  std::weak_ptr<int> watch = dropped_marker;
  std::promise<void> started;
  {
    JobThread jobs("test-jobs", 8);
    ASSERT_TRUE(jobs.Submit([ran, &started] {
                      started.set_value();
                      std::this_thread::sleep_for(std::chrono::milliseconds(50));
                      ran->fetch_add(1);
                    })
                    .ok());
    started.get_future().wait();
    ASSERT_TRUE(jobs.Submit([ran, marker = std::move(dropped_marker)] { ran->fetch_add(100); }).ok());
    jobs.Stop();
    EXPECT_EQ(ran->load(), 1);       // the running job finished
    EXPECT_TRUE(watch.expired());    // the waiting one was destroyed unrun
    jobs.Stop();                     // idempotent
  }
  EXPECT_EQ(ran->load(), 1);
}

TEST(JobThread, AJobMaySubmitAnother) {
  JobThread jobs("test-jobs", 4);
  std::promise<int> second;
  ASSERT_TRUE(jobs.Submit([&jobs, &second] {
                    EXPECT_TRUE(jobs.Submit([&second] { second.set_value(2); }).ok());
                  })
                  .ok());
  EXPECT_EQ(second.get_future().get(), 2);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// Stepped: nothing runs until the owner asks; then the waiting jobs and
// those they submit run in order on the owner's thread; Stop drops the rest.
TEST(JobThread, SteppedRunsJobsOnlyWhenTheOwnerAsks) {
  JobThread jobs("stepped", 4, JobThread::Mode::kStepped);
  std::vector<int> order;
  ASSERT_TRUE(jobs.Submit([&] {
                    order.push_back(1);
                    EXPECT_TRUE(jobs.Submit([&] { order.push_back(3); }).ok());
                  })
                  .ok());
  ASSERT_TRUE(jobs.Submit([&] { order.push_back(2); }).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(jobs.waiting(), 2u);
  const std::thread::id owner = std::this_thread::get_id();
  ASSERT_TRUE(jobs.Submit([&] { EXPECT_EQ(std::this_thread::get_id(), owner); }).ok());
  EXPECT_EQ(jobs.RunWaiting(), 4u);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(jobs.RunWaiting(), 0u);
  ASSERT_TRUE(jobs.Submit([&] { order.push_back(4); }).ok());
  jobs.Stop();
  EXPECT_EQ(jobs.RunWaiting(), 0u);
  EXPECT_EQ(order.size(), 3u);
}

}  // namespace
}  // namespace tessera
