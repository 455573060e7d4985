// VirtualTimeLoop: GroupExecutors (group_executor.h) on one virtual clock,
// for tests and simulation of GroupHost. Nothing runs by itself: the owner
// runs the posted tasks (RunReady) and moves time forward (AdvanceTo), so a
// host's elections, leases and deadlines happen at instants the owner
// chooses, however long the real machine takes. Tasks posted from other
// threads (a store's commit callbacks) wait in the queue until the owner
// runs them.
//
// Invariants: now_us() only grows; a tick or timer task runs only once time
// reached its instant, and ticks and timers run in (instant, arming order)
// order; every executor has at most one armed tick.
//
// Thread safety: Post and NowUs of its executors from any thread; every
// other method (and ArmTick/CancelTick, called from tasks) on the owner's
// thread. The loop must outlive every executor it made; an executor's
// destructor drops its armed tick.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "node/group_executor.h"

namespace tessera::node {

class VirtualTimeLoop {
 public:
  explicit VirtualTimeLoop(uint64_t start_us = 1'000'000) : now_us_(start_us) {}
  ~VirtualTimeLoop();
  VirtualTimeLoop(const VirtualTimeLoop&) = delete;
  VirtualTimeLoop& operator=(const VirtualTimeLoop&) = delete;

  // A new executor on this loop's clock (one per group).
  std::unique_ptr<GroupExecutor> NewExecutor();

  uint64_t now_us() const;
  // Runs posted tasks in FIFO order, those they post included, until none
  // is queued or `tasks_max` ran; returns how many ran.
  size_t RunReady(size_t tasks_max = 1'000'000);
  // Waits (real time, at most `timeout`) until a task is queued; true when
  // one is.
  bool WaitForTask(std::chrono::milliseconds timeout);
  // A one-shot timer: `task` runs once time reaches `at_us` (an instant
  // already past counts as now), ordered with the ticks by (instant, arming
  // order); it cannot be cancelled. The simulated network delivers with it
  // (sim/sim_transport.h). Any thread.
  void PostAt(uint64_t at_us, GroupExecutor::Task task);
  // Moves time to `until_us` (never backwards), stopping at every armed
  // tick or timer on the way to run it and then RunReady.
  void AdvanceTo(uint64_t until_us);
  // The instant of the earliest armed tick or timer, if any.
  std::optional<uint64_t> NextTickUs() const;

 private:
  class Executor;
  using TickKey = std::pair<uint64_t, uint64_t>;  // (instant, arming order)

  void Post(GroupExecutor::Task task);
  TickKey Arm(uint64_t interval_us, GroupExecutor::Task task);
  void Cancel(const TickKey& key);

  mutable std::mutex mu_;  // guards every member below
  std::condition_variable posted_;
  uint64_t now_us_;
  uint64_t next_arm_seq_ = 0;
  std::deque<GroupExecutor::Task> queue_;
  std::map<TickKey, GroupExecutor::Task> ticks_;  // armed ticks and timers
};

}  // namespace tessera::node
