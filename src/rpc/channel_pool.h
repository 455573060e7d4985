// ChannelPool: a process's channels, one per remote peer id. Everything in
// the process that talks to peer P (every replication group of a node, a
// router's requests) goes through the same Channel, hence the same single
// connection.
//
// Thread safety: every method may be called from any thread; mu_ guards the
// map. Channels handed out stay usable after RemovePeer or an address
// change, but are closed (their calls fail with Aborted).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "rpc/channel.h"

namespace tessera::rpc {

class ChannelPool {
 public:
  // `defaults` supplies identity, timeouts and bounds; host, port and
  // remote_peer_id are set per peer.
  ChannelPool(RpcContext context, ChannelOptions defaults);
  ~ChannelPool();  // closes every channel
  ChannelPool(const ChannelPool&) = delete;
  ChannelPool& operator=(const ChannelPool&) = delete;

  // Where `peer_id` listens. A changed address closes the old channel.
  // InvalidArgument for bad options or beyond limits::kRpcPeersMax peers.
  Status SetPeerAddress(uint32_t peer_id, std::string host, uint16_t port);
  void RemovePeer(uint32_t peer_id);

  // The channel to `peer_id`; Unavailable if its address was never set.
  // Never NotFound: a peer that cannot be reached is not an answer from it
  // (a blob delete would take "not found" for "already deleted").
  Result<std::shared_ptr<Channel>> Get(uint32_t peer_id) const;

 private:
  const RpcContext context_;
  const ChannelOptions defaults_;
  mutable std::mutex mu_;  // guards channels_
  std::unordered_map<uint32_t, std::shared_ptr<Channel>> channels_;
};

}  // namespace tessera::rpc
