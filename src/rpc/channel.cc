#include "rpc/channel.h"

#include "rpc/channel_core.h"

namespace tessera::rpc {
namespace {

Status ValidateChannelOptions(const ChannelOptions& o) {
  TESSERA_RETURN_IF_ERROR(ValidateIdentity(o.identity));
  if (o.host.empty() || o.port == 0 || o.remote_peer_id == 0) {
    return Status::InvalidArgument("rpc channel: host, port and remote_peer_id are required");
  }
  if (o.connect_timeout_ms == 0 || o.connect_timeout_ms > limits::kRpcCallTimeoutMsMax) {
    return Status::InvalidArgument("rpc channel: connect_timeout_ms out of range");
  }
  if (o.backoff_initial_ms == 0 || o.backoff_initial_ms > o.backoff_max_ms ||
      o.backoff_max_ms > limits::kRpcBackoffMsMax) {
    return Status::InvalidArgument("rpc channel: need 0 < backoff_initial_ms <= backoff_max_ms <= " +
                                   std::to_string(limits::kRpcBackoffMsMax));
  }
  if (o.queue_frames_max == 0 || o.queue_frames_max > limits::kRpcChannelQueueFramesMax ||
      o.queue_bytes_max == 0 || o.queue_bytes_max > limits::kRpcChannelQueueBytesMax ||
      o.pending_calls_max == 0 || o.pending_calls_max > limits::kRpcPendingCallsMax) {
    return Status::InvalidArgument("rpc channel: a bound is 0 or above its limit");
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Channel>> Channel::Create(RpcContext context, ChannelOptions options) {
  TESSERA_RETURN_IF_ERROR(ValidateChannelOptions(options));
  return std::unique_ptr<Channel>(
      new Channel(std::make_shared<internal::ChannelCore>(context, std::move(options))));
}

Channel::Channel(std::shared_ptr<internal::ChannelCore> core) : core_(std::move(core)) {}

Channel::~Channel() { core_->Close(); }

Status Channel::Send(std::string_view method, std::string payload) {
  return core_->Send(method, std::move(payload));
}

Status Channel::Call(std::string_view method, std::string payload,
                     std::chrono::milliseconds timeout, CallCallback done) {
  return core_->Call(method, std::move(payload), timeout, std::move(done));
}

Status Channel::Call(std::string_view method, SplitPayload payload,
                     std::chrono::milliseconds timeout, CallCallback done) {
  return core_->Call(method, std::move(payload), timeout, std::move(done));
}

Status Channel::CallForBytes(std::string_view method, std::string payload,
                             std::chrono::milliseconds timeout, BytesCallCallback done) {
  return core_->CallForBytes(method, std::move(payload), timeout, std::move(done));
}

void Channel::Close() { core_->Close(); }

ChannelStats Channel::stats() const { return core_->stats(); }

const ChannelOptions& Channel::options() const { return core_->options(); }

}  // namespace tessera::rpc
