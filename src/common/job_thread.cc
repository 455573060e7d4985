#include "common/job_thread.h"

#include <utility>

#include "common/check.h"
#include "common/thread_name.h"

namespace tessera {

JobThread::JobThread(std::string thread_name, size_t queue_max, Mode mode)
    : queue_max_(queue_max),
      thread_(mode == Mode::kThread ? StartNamedThread(std::move(thread_name), [this] { Loop(); })
                                    : std::thread()) {
  TESSERA_CHECK(queue_max > 0);
}

JobThread::~JobThread() { Stop(); }

Status JobThread::Submit(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Status::Aborted("job thread stopped");
    if (queue_.size() >= queue_max_) return Status::Throttled("job queue full");
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
  return Status::Ok();
}

void JobThread::Stop() {
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    dropped.swap(queue_);
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
  // `dropped` is destroyed here, outside the lock: a job's captures may
  // release objects whose destructors submit again (refused: stopping).
}

size_t JobThread::RunWaiting() {
  TESSERA_CHECK(!thread_.joinable() && "RunWaiting on a job thread with a thread");
  size_t ran = 0;
  while (std::function<void()> job = TakeWaiting()) {
    job();
    ++ran;
  }
  return ran;
}

std::function<void()> JobThread::TakeWaiting() {
  std::lock_guard lock(mu_);
  if (stopping_ || queue_.empty()) return nullptr;
  std::function<void()> job = std::move(queue_.front());
  queue_.pop_front();
  return job;
}

size_t JobThread::waiting() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void JobThread::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    std::function<void()> job = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    job();
    job = nullptr;  // captures released before the next wait, outside the lock
    lock.lock();
  }
}

}  // namespace tessera
