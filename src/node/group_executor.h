// GroupExecutor: where a replication group's host runs and what time it is
// there. GroupHost (group_host.h) touches time and scheduling only through
// this seam, so the same host code runs on an Asio strand with the
// process's monotonic clock (asio_group_executor.h, `tessera node`) and on
// a virtual clock whose every task the caller runs when it chooses
// (virtual_time_loop.h: tests, and the simulator once it runs GroupHost).
// D86 says which seams exist and what stays production-only.
//
// Contract:
//  1. Serial context: tasks run one at a time, never concurrently, in the
//     order they were posted (FIFO). The group's state is touched only
//     from them.
//  2. Post never runs `task` inline, even when called from the serial
//     context; it may be called from any thread.
//  3. One tick timer per group: ArmTick replaces an armed tick; the task
//     runs on the serial context at the first multiple of `interval_us`
//     strictly after now on the executor's tick clock (tick_schedule.h;
//     the real steady clock in production, where NowUs may carry an
//     injected skew); CancelTick (serial context only) drops it unrun.
//  4. NowUs never decreases.
//
// Thread safety: Post and NowUs from any thread; ArmTick and CancelTick from
// the serial context only.
#pragma once

#include <cstdint>
#include <functional>

namespace tessera::node {

class GroupExecutor {
 public:
  using Task = std::function<void()>;
  virtual ~GroupExecutor() = default;

  virtual void Post(Task task) = 0;
  virtual void ArmTick(uint64_t interval_us, Task task) = 0;
  virtual void CancelTick() = 0;
  // The clock the consensus core and every host deadline run on, µs.
  virtual uint64_t NowUs() const = 0;
  // A value that grows across restarts of the host's process (request ids
  // must not repeat after a restart; GroupHost shifts it left by 16 bits).
  virtual uint64_t RestartStampUs() const = 0;
};

}  // namespace tessera::node
