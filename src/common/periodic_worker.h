// PeriodicWorker: one background thread that runs a round of work every
// interval until stopped (blob GC, sweeper/repairer, slot map refresher).
//
// Contract: Start runs `round` on the worker thread every `interval_ms`
// (the first after one interval); interval 0 never starts a thread. Stop
// (idempotent; also the destructor) wakes the thread, waits for a round in
// progress to finish, and joins. stopping() lets a long round end early.
//
// Thread safety: Start and Stop from one owner thread; stopping() from any.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "common/thread_name.h"

namespace tessera {

class PeriodicWorker {
 public:
  PeriodicWorker() = default;
  PeriodicWorker(const PeriodicWorker&) = delete;
  PeriodicWorker& operator=(const PeriodicWorker&) = delete;
  ~PeriodicWorker() { Stop(); }

  // `name`: the thread's name (common/thread_name.h).
  void Start(std::string name, uint32_t interval_ms, std::function<void()> round) {
    if (interval_ms == 0 || thread_.joinable()) return;
    thread_ = StartNamedThread(std::move(name), [this, interval_ms, round = std::move(round)] {
      std::unique_lock lock(mu_);
      while (!stopping_) {
        wake_.wait_for(lock, std::chrono::milliseconds(interval_ms));
        if (stopping_) return;
        lock.unlock();
        round();
        lock.lock();
      }
    });
  }

  void Stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  bool stopping() const {
    std::lock_guard lock(mu_);
    return stopping_;
  }

 private:
  mutable std::mutex mu_;  // guards stopping_
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tessera
