#include "rpc/channel_pool.h"

namespace tessera::rpc {

ChannelPool::ChannelPool(RpcContext context, ChannelOptions defaults)
    : context_(context), defaults_(std::move(defaults)) {}

ChannelPool::~ChannelPool() {
  std::lock_guard lock(mu_);
  for (auto& [peer_id, channel] : channels_) channel->Close();
}

Status ChannelPool::SetPeerAddress(uint32_t peer_id, std::string host, uint16_t port) {
  std::lock_guard lock(mu_);
  const auto it = channels_.find(peer_id);
  if (it != channels_.end()) {
    const ChannelOptions& current = it->second->options();
    if (current.host == host && current.port == port) return Status::Ok();
  } else if (channels_.size() >= limits::kRpcPeersMax) {
    return Status::InvalidArgument("rpc channel pool: more than " +
                                   std::to_string(limits::kRpcPeersMax) + " peers");
  }
  ChannelOptions options = defaults_;
  options.host = std::move(host);
  options.port = port;
  options.remote_peer_id = peer_id;
  Result<std::unique_ptr<Channel>> channel = Channel::Create(context_, std::move(options));
  if (!channel.ok()) return channel.status();
  if (it != channels_.end()) {
    it->second->Close();
    it->second = std::move(channel).value();
  } else {
    channels_.emplace(peer_id, std::move(channel).value());
  }
  return Status::Ok();
}

void ChannelPool::RemovePeer(uint32_t peer_id) {
  std::lock_guard lock(mu_);
  const auto it = channels_.find(peer_id);
  if (it == channels_.end()) return;
  it->second->Close();
  channels_.erase(it);
}

Result<std::shared_ptr<Channel>> ChannelPool::Get(uint32_t peer_id) const {
  std::lock_guard lock(mu_);
  const auto it = channels_.find(peer_id);
  if (it == channels_.end()) {
    return Status::Unavailable("rpc channel pool: no address for peer " + std::to_string(peer_id));
  }
  return it->second;
}

}  // namespace tessera::rpc
