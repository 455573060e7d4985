// Goal: the outbound FIFO batches within bounds, never passes a frame that
// is not yet released, and QueueBudget pushes back at its bounds.
#include "rpc/outbound_queue.h"

#include <gtest/gtest.h>

namespace tessera::rpc::internal {
namespace {

OutFrame Frame(std::string bytes, Clock::time_point release = {}) {
  return OutFrame{std::move(bytes), release, true};
}

TEST(OutboundQueue, BatchesInOrderWithinBounds) {
  OutboundQueue queue;
  for (int i = 0; i < 10; ++i) queue.Push(Frame(std::string(10, static_cast<char>('a' + i))));
  std::vector<OutFrame> batch;
  EXPECT_EQ(queue.TakeBatch(Clock::now(), 4, 1000, &batch), 4u);
  EXPECT_EQ(batch[0].bytes[0], 'a');
  EXPECT_EQ(batch[3].bytes[0], 'd');
  batch.clear();
  EXPECT_EQ(queue.TakeBatch(Clock::now(), 100, 25, &batch), 2u);  // 20 bytes fit, 30 do not
  EXPECT_EQ(batch[0].bytes[0], 'e');
  batch.clear();
  EXPECT_EQ(queue.TakeBatch(Clock::now(), 100, 5, &batch), 1u);  // always at least one
  EXPECT_EQ(queue.size(), 3u);
}

TEST(OutboundQueue, DelayedHeadHoldsBackLaterFrames) {
  OutboundQueue queue;
  const Clock::time_point now = Clock::now();
  queue.Push(Frame("now"));
  queue.Push(Frame("later", now + std::chrono::milliseconds(100)));
  queue.Push(Frame("behind"));  // released, but must not overtake "later"
  std::vector<OutFrame> batch;
  EXPECT_EQ(queue.TakeBatch(now, 100, 1000, &batch), 1u);
  EXPECT_EQ(queue.head_release(), now + std::chrono::milliseconds(100));
  EXPECT_EQ(queue.TakeBatch(now, 100, 1000, &batch), 0u);
  EXPECT_EQ(queue.TakeBatch(now + std::chrono::milliseconds(100), 100, 1000, &batch), 2u);
  EXPECT_EQ(batch[1].bytes, "later");
  EXPECT_EQ(batch[2].bytes, "behind");
}

TEST(QueueBudget, BoundsFramesAndBytesButAdmitsIntoEmpty) {
  QueueBudget budget(3, 100);
  EXPECT_TRUE(budget.TryAcquire(500));  // empty: admitted whatever its size
  EXPECT_FALSE(budget.TryAcquire(1));
  budget.Release(1, 500);
  EXPECT_TRUE(budget.TryAcquire(40));
  EXPECT_TRUE(budget.TryAcquire(40));
  EXPECT_FALSE(budget.TryAcquire(40));  // 120 bytes > 100
  EXPECT_TRUE(budget.TryAcquire(20));
  EXPECT_FALSE(budget.TryAcquire(0));   // 3 frames
  EXPECT_EQ(budget.frames(), 3u);
  EXPECT_EQ(budget.bytes(), 100u);
  std::vector<OutFrame> frames{Frame(std::string(40, 'x')), Frame(std::string(40, 'y')),
                               OutFrame{"handshake", {}, false}};
  EXPECT_EQ(ReleaseBudget(budget, frames), 2u);
  EXPECT_EQ(budget.frames(), 1u);
  EXPECT_EQ(budget.bytes(), 20u);
}

}  // namespace
}  // namespace tessera::rpc::internal
