// JobThread: one thread that runs submitted jobs one at a time, in the
// order Submit accepted them. For work that waits (synced writes, fsync)
// and so must not hold an io thread.
//
// Contract:
//  1. Submit accepts a job (OK) or refuses it (Throttled when queue_max
//     jobs are waiting, Aborted once Stop began); a refused job is
//     destroyed unrun.
//  2. Accepted jobs run exactly once each, in acceptance order, unless Stop
//     finds them still waiting: those are destroyed unrun.
//  3. Stop (idempotent; also the destructor) refuses new jobs, lets the job
//     in progress finish, drops the waiting ones and joins the thread.
//  4. The thread carries `thread_name` (common/thread_name.h) before it
//     runs the first job.
//  5. Stepped (Mode::kStepped, the simulator's seam: docs/decisions.md D86):
//     there is no thread; accepted jobs wait until the owner calls
//     RunWaiting, which runs them on the caller's thread, in order.
//
// Thread safety: Submit and waiting() from any thread, also from a job;
// Stop from the owner, never from a job.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"

namespace tessera {

class JobThread {
 public:
  enum class Mode { kThread, kStepped };
  JobThread(std::string thread_name, size_t queue_max, Mode mode = Mode::kThread);
  ~JobThread();
  JobThread(const JobThread&) = delete;
  JobThread& operator=(const JobThread&) = delete;

  Status Submit(std::function<void()> job);
  void Stop();
  // Stepped only (contract 5): runs the waiting jobs, also those they
  // submit, until none waits or Stop began; returns how many ran. Not from
  // a job.
  size_t RunWaiting();
  // Jobs accepted and not started yet.
  size_t waiting() const;

 private:
  void Loop();
  // The next waiting job, or null when none waits or stopping.
  std::function<void()> TakeWaiting();

  const size_t queue_max_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the members above exist
};

}  // namespace tessera
