// Goal: BatchingMessageSender groups messages per destination peer into
// ConsensusBatches in send order, splits at the byte bound, drops (and
// counts) beyond the per-peer queue bound, on transport refusal and after
// Stop.
#include "node/batching_sender.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <map>
#include <mutex>
#include <vector>

#include "common/metrics.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::node {
namespace {

pb::Message MakeMessage(uint32_t to, uint64_t group, size_t padding = 0) {
  pb::Message m;
  m.set_group_id(group);
  m.set_from(1);
  m.set_to(to);
  if (padding > 0) {
    pb::Entry* e = m.mutable_accept()->add_entries();
    e->set_command(std::string(padding, 'x'));
  }
  return m;
}

class Capture {
 public:
  SendBatchFn Fn() {
    return [this](uint32_t peer, std::string payload) -> Status {
      std::lock_guard lock(mu);
      if (refuse) return Status::Unavailable("peer down");
      pb::ConsensusBatch batch;
      EXPECT_TRUE(batch.ParseFromString(payload));
      batches[peer].push_back(batch);
      return Status::Ok();
    };
  }
  std::mutex mu;
  bool refuse = false;
  std::map<uint32_t, std::vector<pb::ConsensusBatch>> batches;
};

// The io_context is run by the test itself, so everything Sent before the
// run is pending at once: the batching is deterministic.
TEST(BatchingSenderTest, BatchesPerPeerInOrder) {
  boost::asio::io_context io;
  metrics::Registry registry;
  Capture capture;
  BatchingMessageSender sender(io, capture.Fn(), &registry);
  for (uint64_t g = 1; g <= 5; ++g) {
    sender.Send(MakeMessage(2, g));
    sender.Send(MakeMessage(3, g));
  }
  io.run();
  ASSERT_EQ(capture.batches[2].size(), 1u);
  ASSERT_EQ(capture.batches[3].size(), 1u);
  const pb::ConsensusBatch& to2 = capture.batches[2][0];
  ASSERT_EQ(to2.messages_size(), 5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(to2.messages(i).group_id(), static_cast<uint64_t>(i + 1));
  EXPECT_EQ(sender.stats().messages_sent, 10u);
  EXPECT_EQ(sender.stats().batches_sent, 2u);
  EXPECT_NE(registry.RenderText().find("tessera_consensus_batches_sent_total 2\n"), std::string::npos);
}

TEST(BatchingSenderTest, SplitsAtByteBoundAndSendsOversizedAlone) {
  boost::asio::io_context io;
  Capture capture;
  BatchingSenderOptions options;
  options.batch_bytes_max = 1000;
  BatchingMessageSender sender(io, capture.Fn(), nullptr, options);
  for (int i = 0; i < 4; ++i) sender.Send(MakeMessage(2, 1, 400));  // two per batch
  sender.Send(MakeMessage(2, 1, 5000));                                // alone
  sender.Send(MakeMessage(2, 1, 10));
  io.run();
  const auto& batches = capture.batches[2];
  ASSERT_EQ(batches.size(), 4u);
  EXPECT_EQ(batches[0].messages_size(), 2);
  EXPECT_EQ(batches[1].messages_size(), 2);
  EXPECT_EQ(batches[2].messages_size(), 1);
  EXPECT_EQ(batches[3].messages_size(), 1);
  EXPECT_EQ(batches[3].messages(0).accept().entries(0).command().size(), 10u);
}

TEST(BatchingSenderTest, DropsBeyondQueueBoundOnRefusalAndAfterStop) {
  boost::asio::io_context io;
  metrics::Registry registry;
  Capture capture;
  BatchingSenderOptions options;
  options.pending_messages_per_peer_max = 3;
  BatchingMessageSender sender(io, capture.Fn(), &registry, options);
  for (int i = 0; i < 5; ++i) sender.Send(MakeMessage(2, 1));
  io.run();
  EXPECT_EQ(capture.batches[2].at(0).messages_size(), 3);
  EXPECT_EQ(sender.stats().messages_dropped, 2u);
  EXPECT_NE(registry.RenderText().find(
                "tessera_consensus_messages_dropped_total{reason=\"queue_full\"} 2\n"),
            std::string::npos);

  capture.refuse = true;
  sender.Send(MakeMessage(2, 1));
  io.restart();
  io.run();
  EXPECT_EQ(sender.stats().messages_dropped, 3u);

  capture.refuse = false;
  sender.Stop();
  sender.Send(MakeMessage(2, 1));
  io.restart();
  io.run();
  EXPECT_EQ(capture.batches[2].size(), 1u);
  EXPECT_EQ(sender.stats().messages_dropped, 4u);
}

}  // namespace
}  // namespace tessera::node
