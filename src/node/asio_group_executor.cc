#include "node/asio_group_executor.h"

#include <boost/asio/post.hpp>
#include <chrono>

#include "common/fault_clock.h"
#include "node/tick_schedule.h"

namespace tessera::node {

namespace asio = boost::asio;

AsioGroupExecutor::AsioGroupExecutor(asio::io_context& io)
    : strand_(asio::make_strand(io)), tick_timer_(strand_) {}

void AsioGroupExecutor::Post(Task task) { asio::post(strand_, std::move(task)); }

// expires_at cancels a pending wait: its handler gets operation_aborted and
// drops the task, so at most one tick is armed.
void AsioGroupExecutor::ArmTick(uint64_t interval_us, Task task) {
  tick_timer_.expires_at(
      NextAlignedTick(std::chrono::steady_clock::now(), std::chrono::microseconds(interval_us)));
  tick_timer_.async_wait([task = std::move(task)](const boost::system::error_code& ec) {
    if (!ec) task();
  });
}

void AsioGroupExecutor::CancelTick() { tick_timer_.cancel(); }

uint64_t AsioGroupExecutor::NowUs() const { return fault_clock::MonotonicNowUs(); }

uint64_t AsioGroupExecutor::RestartStampUs() const {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace tessera::node
