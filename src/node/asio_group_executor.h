// AsioGroupExecutor: the production GroupExecutor (group_executor.h). Tasks
// run on an Asio strand of the node's io_context; the tick timer is a
// steady_timer on that strand, armed at aligned instants of the real steady
// clock (tick_schedule.h, D60); NowUs is the monotonic clock with the
// process's injected skew (common/fault_clock.h, D81) and RestartStampUs
// the real monotonic clock, never the skewed one.
//
// Thread safety: as GroupExecutor. The io_context must outlive it.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "node/group_executor.h"

namespace tessera::node {

class AsioGroupExecutor final : public GroupExecutor {
 public:
  explicit AsioGroupExecutor(boost::asio::io_context& io);

  void Post(Task task) override;
  void ArmTick(uint64_t interval_us, Task task) override;
  void CancelTick() override;
  uint64_t NowUs() const override;
  uint64_t RestartStampUs() const override;

 private:
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::steady_timer tick_timer_;
};

}  // namespace tessera::node
