// Goal: the simulated transport delivers each surviving copy at the virtual
// instant its link drew, replays the same deliveries from the same seed,
// and loses what a partition blocks or a dead incarnation would receive.
#include "sim/sim_transport.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tessera::sim {
namespace {

pb::Message MessageOf(ReplicaId from, ReplicaId to, uint64_t group_id) {
  pb::Message m;
  m.set_from(from);
  m.set_to(to);
  m.set_group_id(group_id);
  return m;
}

// Every arrival as "time:from>to#n", n the message's group id (a tag).
class Recorder {
 public:
  explicit Recorder(node::VirtualTimeLoop* loop) : loop_(loop) {}
  SimTransport::DeliverFn For() {
    return [this](pb::Message m) {
      log.push_back(std::to_string(loop_->now_us()) + ":" + std::to_string(m.from()) + ">" +
                    std::to_string(m.to()) + "#" + std::to_string(m.group_id()));
    };
  }
  std::vector<std::string> log;

 private:
  node::VirtualTimeLoop* loop_;
};

NetworkParams Lossy() {
  NetworkParams params;
  params.loss_ppm = 100'000;
  params.duplicate_ppm = 100'000;
  params.delay_min_us = 1'000;
  params.delay_jitter_us = 4'000;
  return params;
}

std::vector<std::string> RunSends(uint64_t seed, SimTransportStats* stats) {
  node::VirtualTimeLoop loop(0);
  SimNetwork network(3);
  network.set_params(Lossy());
  SimTransport transport(&loop, &network, seed);
  Recorder recorder(&loop);
  for (ReplicaId id = 1; id <= 3; ++id) transport.Attach(id, recorder.For());
  for (uint64_t i = 0; i < 200; ++i) {
    transport.Send(MessageOf(1 + i % 3, 1 + (i + 1) % 3, i));
    if (i % 10 == 9) loop.AdvanceTo(loop.now_us() + 500);
  }
  loop.AdvanceTo(loop.now_us() + 10'000);
  EXPECT_FALSE(loop.NextTickUs().has_value());
  *stats = transport.stats();
  return recorder.log;
}

TEST(SimTransportTest, SameSeedSameDeliveriesAtTheDrawnInstants) {
  SimTransportStats a_stats;
  SimTransportStats b_stats;
  const std::vector<std::string> a = RunSends(11, &a_stats);
  const std::vector<std::string> b = RunSends(11, &b_stats);
  EXPECT_EQ(a, b);
  EXPECT_NE(RunSends(12, &b_stats), a);
  EXPECT_EQ(a_stats.sent, 200u);
  EXPECT_GT(a_stats.lost, 0u);
  EXPECT_GT(a_stats.duplicated, 0u);
  EXPECT_EQ(a_stats.delivered, a.size());
  EXPECT_EQ(a_stats.sent - a_stats.lost + a_stats.duplicated, a_stats.delivered);
  // Delays lie in [delay_min, delay_min + jitter] of the send instant; the
  // sends of a round happen at multiples of 500 µs.
  for (const std::string& arrival : a) {
    const uint64_t at = std::stoull(arrival.substr(0, arrival.find(':')));
    const uint64_t tag = std::stoull(arrival.substr(arrival.find('#') + 1));
    const uint64_t sent_at = (tag / 10) * 500;
    EXPECT_GE(at, sent_at + 1'000) << arrival;
    EXPECT_LE(at, sent_at + 5'000) << arrival;
  }
}

TEST(SimTransportTest, BlockedLinksAndDetachedReplicasLoseTheirMessages) {
  node::VirtualTimeLoop loop(0);
  SimNetwork network(3);
  SimTransport transport(&loop, &network, 5);
  Recorder recorder(&loop);
  for (ReplicaId id = 1; id <= 3; ++id) transport.Attach(id, recorder.For());

  network.Block(1, 2);
  transport.Send(MessageOf(1, 2, 1));  // blocked
  transport.Send(MessageOf(2, 1, 2));  // the other direction is open
  loop.AdvanceTo(10'000);
  EXPECT_EQ(recorder.log, std::vector<std::string>{"200:2>1#2"});

  // In flight to replica 3 when its process dies; it restarts before the
  // copy would arrive: the copy is lost all the same.
  transport.Send(MessageOf(1, 3, 3));
  transport.Detach(3);
  transport.Send(MessageOf(1, 3, 4));  // to a dead replica
  transport.Attach(3, recorder.For());
  transport.Send(MessageOf(3, 1, 5));  // from the new incarnation
  loop.AdvanceTo(20'000);
  EXPECT_EQ(recorder.log.size(), 2u);
  EXPECT_EQ(recorder.log.back(), "10200:3>1#5");
  const SimTransportStats stats = transport.stats();
  EXPECT_EQ(stats.lost, 2u);
  EXPECT_EQ(stats.lost_on_arrival, 1u);
  EXPECT_EQ(stats.delivered, 2u);
  transport.Clear();
}

}  // namespace
}  // namespace tessera::sim
