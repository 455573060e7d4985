// ConsensusSender: the meta group's MessageSender. Messages to one peer
// accumulate while a flush is pending and leave as one one-way
// "consensus.batch" (ConsensusBatch) per flush over that peer's Channel.
//
// NOTE(duplication): the storage node (src/node/) grows its own batching
// sender for many groups per peer; this one serves the single meta group
// and should be folded into that one once it lands.
//
// Contract: Send never blocks; messages beyond
// limits::kMetaSenderQueueMessagesMax pending for one peer, to a peer
// without an address, or after Close are dropped (the protocol tolerates
// loss). Per peer, batches leave in the order Send was called.
//
// Thread safety: every method may be called from any thread; Core::mu
// guards the core. Posted flushes share the core, so the sender may go
// before they run (after Close they do nothing); the io_context must
// outlive them.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "node/group_host.h"
#include "rpc/channel_pool.h"

namespace tessera::meta {

class ConsensusSender : public node::MessageSender {
 public:
  ConsensusSender(boost::asio::io_context& io, rpc::ChannelPool* pool)
      : io_(io), core_(std::make_shared<Core>(pool)) {}

  void Send(pb::Message message) override;
  // Drops what is pending and every later message; the pool may then go.
  void Close();

  uint64_t dropped() const;

 private:
  struct Core {
    explicit Core(rpc::ChannelPool* p) : pool(p) {}
    std::mutex mu;  // guards everything below and the use of pool
    rpc::ChannelPool* pool;
    std::map<uint32_t, std::vector<pb::Message>> pending;
    bool closed = false;
    uint64_t dropped = 0;
  };
  static void Flush(Core& core, uint32_t peer);

  boost::asio::io_context& io_;
  const std::shared_ptr<Core> core_;
};

}  // namespace tessera::meta
