#include "meta/consensus_sender.h"

#include <boost/asio/post.hpp>

#include "common/limits.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::meta {

void ConsensusSender::Send(pb::Message message) {
  const uint32_t peer = message.to();
  {
    std::lock_guard lock(core_->mu);
    auto& queue = core_->pending[peer];
    if (core_->closed || queue.size() >= limits::kMetaSenderQueueMessagesMax) {
      ++core_->dropped;
      return;
    }
    queue.push_back(std::move(message));
    if (queue.size() > 1) return;  // a flush is already pending
  }
  boost::asio::post(io_, [core = core_, peer] { Flush(*core, peer); });
}

void ConsensusSender::Flush(Core& core, uint32_t peer) {
  // Under core.mu throughout (Channel::Send does not block), so that two
  // flushes for one peer cannot overtake each other.
  std::lock_guard lock(core.mu);
  std::vector<pb::Message> messages;
  messages.swap(core.pending[peer]);
  if (core.closed) return;
  auto channel = core.pool->Get(peer);
  if (!channel.ok()) {
    core.dropped += messages.size();
    return;
  }
  // Split so that one batch stays well inside a frame.
  pb::ConsensusBatch batch;
  size_t bytes = 0;
  auto send = [&] {
    if (batch.messages_size() == 0) return;
    if (!(*channel)->Send("consensus.batch", batch.SerializeAsString()).ok()) {
      core.dropped += static_cast<uint64_t>(batch.messages_size());
    }
    batch.Clear();
    bytes = 0;
  };
  for (pb::Message& m : messages) {
    const size_t size = m.ByteSizeLong();
    if (bytes > 0 && bytes + size > limits::kRpcWriteBatchBytesMax) send();
    bytes += size;
    *batch.add_messages() = std::move(m);
  }
  send();
}

void ConsensusSender::Close() {
  std::lock_guard lock(core_->mu);
  core_->closed = true;
  core_->pending.clear();
}

uint64_t ConsensusSender::dropped() const {
  std::lock_guard lock(core_->mu);
  return core_->dropped;
}

}  // namespace tessera::meta
