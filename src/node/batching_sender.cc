#include "node/batching_sender.h"

#include <atomic>
#include <boost/asio/post.hpp>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/metrics.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::node {

namespace asio = boost::asio;

struct BatchingMessageSender::State : std::enable_shared_from_this<State> {
  struct PeerQueue {
    std::deque<pb::Message> messages;
    bool flush_scheduled = false;
  };

  State(asio::io_context& io_context, SendBatchFn send, metrics::Registry* registry,
        BatchingSenderOptions opts)
      : io(io_context), send_batch(std::move(send)), options(opts) {
    if (registry != nullptr) {
      sent_counter = &registry->GetCounter("tessera_consensus_messages_sent_total",
                                           "Consensus messages handed to the transport");
      batches_counter = &registry->GetCounter("tessera_consensus_batches_sent_total",
                                              "ConsensusBatch one-way RPCs handed to the transport");
      const char* help = "Outbound consensus messages dropped before the transport";
      dropped_full = &registry->GetCounter("tessera_consensus_messages_dropped_total", help,
                                           {{"reason", "queue_full"}});
      dropped_refused = &registry->GetCounter("tessera_consensus_messages_dropped_total", help,
                                              {{"reason", "transport_refused"}});
      dropped_stopped = &registry->GetCounter("tessera_consensus_messages_dropped_total", help,
                                              {{"reason", "stopped"}});
    }
  }

  void Drop(metrics::Counter* counter, uint64_t n) {
    dropped.fetch_add(n, std::memory_order_relaxed);
    if (counter != nullptr) counter->Increment(n);
  }

  void Flush(uint32_t peer);
  void SendOne(uint32_t peer, pb::ConsensusBatch& batch);

  asio::io_context& io;
  const SendBatchFn send_batch;
  const BatchingSenderOptions options;
  metrics::Counter* sent_counter = nullptr;
  metrics::Counter* batches_counter = nullptr;
  metrics::Counter* dropped_full = nullptr;
  metrics::Counter* dropped_refused = nullptr;
  metrics::Counter* dropped_stopped = nullptr;

  std::atomic<uint64_t> queued{0}, sent{0}, batches{0}, dropped{0};
  std::mutex mu;  // guards peers and stopped
  std::unordered_map<uint32_t, PeerQueue> peers;
  bool stopped = false;
};

void BatchingMessageSender::State::Flush(uint32_t peer) {
  // flush_scheduled stays set while this flush runs, so one flush per peer
  // runs at a time and batches leave in order.
  std::deque<pb::Message> messages;
  {
    std::lock_guard lock(mu);
    messages.swap(peers[peer].messages);
    if (stopped) {
      Drop(dropped_stopped, messages.size());
      messages.clear();
    }
  }
  pb::ConsensusBatch batch;
  size_t batch_bytes = 0;
  for (pb::Message& message : messages) {
    const size_t bytes = message.ByteSizeLong();
    if (batch.messages_size() > 0 && batch_bytes + bytes > options.batch_bytes_max) {
      SendOne(peer, batch);
      batch.Clear();
      batch_bytes = 0;
    }
    batch_bytes += bytes;
    *batch.add_messages() = std::move(message);
  }
  if (batch.messages_size() > 0) SendOne(peer, batch);
  std::lock_guard lock(mu);
  PeerQueue& queue = peers[peer];
  if (queue.messages.empty() || stopped) {
    queue.flush_scheduled = false;
    return;
  }
  asio::post(io, [self = shared_from_this(), peer] { self->Flush(peer); });
}

void BatchingMessageSender::State::SendOne(uint32_t peer, pb::ConsensusBatch& batch) {
  const auto n = static_cast<uint64_t>(batch.messages_size());
  const Status status = send_batch(peer, batch.SerializeAsString());
  if (!status.ok()) return Drop(dropped_refused, n);
  sent.fetch_add(n, std::memory_order_relaxed);
  batches.fetch_add(1, std::memory_order_relaxed);
  if (sent_counter != nullptr) sent_counter->Increment(n);
  if (batches_counter != nullptr) batches_counter->Increment();
}

BatchingMessageSender::BatchingMessageSender(asio::io_context& io, SendBatchFn send_batch,
                                             metrics::Registry* metrics,
                                             BatchingSenderOptions options)
    : state_(std::make_shared<State>(io, std::move(send_batch), metrics, options)) {}

BatchingMessageSender::~BatchingMessageSender() { Stop(); }

void BatchingMessageSender::Send(pb::Message message) {
  const uint32_t peer = message.to();
  bool schedule = false;
  {
    std::lock_guard lock(state_->mu);
    if (state_->stopped) return state_->Drop(state_->dropped_stopped, 1);
    State::PeerQueue& queue = state_->peers[peer];
    if (queue.messages.size() >= state_->options.pending_messages_per_peer_max) {
      return state_->Drop(state_->dropped_full, 1);
    }
    queue.messages.push_back(std::move(message));
    state_->queued.fetch_add(1, std::memory_order_relaxed);
    schedule = !queue.flush_scheduled;
    queue.flush_scheduled = true;
  }
  if (schedule) asio::post(state_->io, [state = state_, peer] { state->Flush(peer); });
}

BatchingSenderStats BatchingMessageSender::stats() const {
  BatchingSenderStats s;
  s.messages_queued = state_->queued.load();
  s.messages_sent = state_->sent.load();
  s.batches_sent = state_->batches.load();
  s.messages_dropped = state_->dropped.load();
  return s;
}

void BatchingMessageSender::Stop() {
  std::lock_guard lock(state_->mu);
  state_->stopped = true;
}

}  // namespace tessera::node
