// BatchingMessageSender: the MessageSender shared by every replication group
// of a process (storage node or meta replica). Messages for one destination
// peer that accumulate while its flush is pending leave together as one
// ConsensusBatch, sent as one one-way RPC ("consensus.batch") through
// `send_batch` (in production: the peer's rpc Channel from a ChannelPool).
//
// Contract:
//  1. Send never blocks and never fails: a message is queued for its `to`
//     peer and flushed from the io_context soon after; beyond
//     pending_messages_per_peer_max queued messages for one peer it is
//     dropped and counted (the consensus protocol tolerates loss).
//  2. Messages to one peer are handed to send_batch in Send order (per
//     calling thread; across threads, in the order of the calls); a batch
//     carries at most batch_bytes_max bytes of messages, except that a
//     single larger message goes alone.
//  3. A batch that send_batch refuses (non-OK: Throttled, Unavailable while
//     the peer is unreachable, NotFound for an unknown peer...) is dropped
//     and counted by reason.
//  4. After Stop (also run by the destructor) Send drops everything and no
//     further send_batch call starts.
//
// Thread safety: Send, stats and Stop may be called from any thread.
// send_batch is called on the io threads, one flush per peer at a time.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/limits.h"
#include "common/status.h"
#include "node/group_host.h"

namespace tessera::metrics {
class Registry;
}  // namespace tessera::metrics

namespace tessera::node {

// Sends one serialized pb::ConsensusBatch to `peer_id`, one-way.
using SendBatchFn = std::function<Status(uint32_t peer_id, std::string payload)>;

struct BatchingSenderOptions {
  size_t batch_bytes_max = limits::kConsensusBatchBytesMax;
  size_t pending_messages_per_peer_max = limits::kConsensusPendingMessagesPerPeerMax;
};

struct BatchingSenderStats {
  uint64_t messages_queued = 0;
  uint64_t messages_sent = 0;     // in batches send_batch accepted
  uint64_t batches_sent = 0;
  uint64_t messages_dropped = 0;  // queue full, refused by send_batch, or stopped
};

class BatchingMessageSender : public MessageSender {
 public:
  // `io` must outlive the sender's handlers; `metrics` (may be null) the
  // sender. Metrics: tessera_consensus_messages_sent_total,
  // tessera_consensus_batches_sent_total,
  // tessera_consensus_messages_dropped_total{reason}.
  BatchingMessageSender(boost::asio::io_context& io, SendBatchFn send_batch,
                        metrics::Registry* metrics, BatchingSenderOptions options = {});
  ~BatchingMessageSender() override;
  BatchingMessageSender(const BatchingMessageSender&) = delete;
  BatchingMessageSender& operator=(const BatchingMessageSender&) = delete;

  void Send(pb::Message message) override;
  BatchingSenderStats stats() const;
  void Stop();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace tessera::node
