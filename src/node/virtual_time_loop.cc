#include "node/virtual_time_loop.h"

#include <algorithm>

#include "common/check.h"

namespace tessera::node {

class VirtualTimeLoop::Executor final : public GroupExecutor {
 public:
  explicit Executor(VirtualTimeLoop* loop) : loop_(loop) {}
  ~Executor() override { CancelTick(); }

  void Post(Task task) override { loop_->Post(std::move(task)); }
  void ArmTick(uint64_t interval_us, Task task) override {
    CancelTick();
    armed_ = loop_->Arm(interval_us, std::move(task));
  }
  void CancelTick() override {
    if (armed_) loop_->Cancel(*armed_);
    armed_.reset();
  }
  uint64_t NowUs() const override { return loop_->now_us(); }
  uint64_t RestartStampUs() const override { return loop_->now_us(); }

 private:
  VirtualTimeLoop* const loop_;
  // Stale once the tick ran (Cancel of a key no longer armed is harmless).
  std::optional<TickKey> armed_;
};

// Tasks still queued or armed may hold the last reference to a host, whose
// executor cancels its tick on destruction: they are destroyed here, while
// every member is still alive, and without the lock.
VirtualTimeLoop::~VirtualTimeLoop() {
  std::deque<GroupExecutor::Task> queue;
  std::map<TickKey, GroupExecutor::Task> ticks;
  std::lock_guard lock(mu_);
  queue.swap(queue_);
  ticks.swap(ticks_);
}

std::unique_ptr<GroupExecutor> VirtualTimeLoop::NewExecutor() {
  return std::make_unique<Executor>(this);
}

uint64_t VirtualTimeLoop::now_us() const {
  std::lock_guard lock(mu_);
  return now_us_;
}

void VirtualTimeLoop::Post(GroupExecutor::Task task) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(task));
  }
  posted_.notify_all();
}

// The first multiple of the interval strictly after now, as
// tick_schedule.h's NextAlignedTick on the real clock.
VirtualTimeLoop::TickKey VirtualTimeLoop::Arm(uint64_t interval_us, GroupExecutor::Task task) {
  TESSERA_CHECK(interval_us > 0);
  std::lock_guard lock(mu_);
  const TickKey key{(now_us_ / interval_us + 1) * interval_us, next_arm_seq_++};
  ticks_.emplace(key, std::move(task));
  return key;
}

void VirtualTimeLoop::PostAt(uint64_t at_us, GroupExecutor::Task task) {
  std::lock_guard lock(mu_);
  ticks_.emplace(TickKey{std::max(at_us, now_us_), next_arm_seq_++}, std::move(task));
}

// The dropped task is destroyed without the lock: it may hold the last
// reference to a host, whose executor then cancels again.
void VirtualTimeLoop::Cancel(const TickKey& key) {
  GroupExecutor::Task dropped;
  std::lock_guard lock(mu_);
  auto it = ticks_.find(key);
  if (it == ticks_.end()) return;
  dropped = std::move(it->second);
  ticks_.erase(it);
}

size_t VirtualTimeLoop::RunReady(size_t tasks_max) {
  size_t ran = 0;
  while (ran < tasks_max) {
    GroupExecutor::Task task;
    {
      std::lock_guard lock(mu_);
      if (queue_.empty()) break;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();  // without the lock: it may post, arm or cancel
    ++ran;
  }
  return ran;
}

bool VirtualTimeLoop::WaitForTask(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return posted_.wait_for(lock, timeout, [this] { return !queue_.empty(); });
}

void VirtualTimeLoop::AdvanceTo(uint64_t until_us) {
  for (;;) {
    GroupExecutor::Task tick;
    {
      std::lock_guard lock(mu_);
      if (ticks_.empty() || ticks_.begin()->first.first > until_us) {
        now_us_ = std::max(now_us_, until_us);
        return;
      }
      auto first = ticks_.begin();
      now_us_ = std::max(now_us_, first->first.first);
      tick = std::move(first->second);
      ticks_.erase(first);
    }
    tick();
    RunReady();
  }
}

std::optional<uint64_t> VirtualTimeLoop::NextTickUs() const {
  std::lock_guard lock(mu_);
  if (ticks_.empty()) return std::nullopt;
  return ticks_.begin()->first.first;
}

}  // namespace tessera::node
