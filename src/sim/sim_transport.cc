#include "sim/sim_transport.h"

#include <utility>

namespace tessera::sim {

SimTransport::SimTransport(node::VirtualTimeLoop* loop, SimNetwork* network, uint64_t seed)
    : loop_(loop), network_(network), prng_(seed) {}

void SimTransport::Send(pb::Message message) {
  std::lock_guard lock(mu_);
  ++stats_.sent;
  const ReplicaId from = message.from();
  const ReplicaId to = message.to();
  auto target = endpoints_.find(to);
  if (!endpoints_.count(from) || target == endpoints_.end() || from == to) {
    ++stats_.lost;
    return;
  }
  delays_.clear();
  network_->Route(from, to, prng_, &delays_);
  if (delays_.empty()) {
    ++stats_.lost;
    return;
  }
  stats_.duplicated += delays_.size() - 1;
  const uint64_t incarnation = target->second.incarnation;
  const uint64_t now_us = loop_->now_us();
  auto shared = std::make_shared<const pb::Message>(std::move(message));
  for (TimeUs delay : delays_) {
    loop_->PostAt(now_us + delay,
                  [this, to, incarnation, shared] { Arrive(to, incarnation, *shared); });
  }
}

// The copy is handed over without the lock: `deliver` may send.
void SimTransport::Arrive(ReplicaId to, uint64_t incarnation, const pb::Message& message) {
  DeliverFn deliver;
  {
    std::lock_guard lock(mu_);
    auto it = endpoints_.find(to);
    if (it == endpoints_.end() || it->second.incarnation != incarnation) {
      ++stats_.lost_on_arrival;
      return;
    }
    deliver = it->second.deliver;
    ++stats_.delivered;
  }
  deliver(message);
}

void SimTransport::Attach(ReplicaId id, DeliverFn deliver) {
  Endpoint replaced;  // destroyed without the lock
  std::lock_guard lock(mu_);
  Endpoint& endpoint = endpoints_[id];
  replaced = std::move(endpoint);
  endpoint = Endpoint{std::move(deliver), next_incarnation_++};
}

void SimTransport::Detach(ReplicaId id) {
  DeliverFn dropped;  // destroyed without the lock
  std::lock_guard lock(mu_);
  auto it = endpoints_.find(id);
  if (it == endpoints_.end()) return;
  dropped = std::move(it->second.deliver);
  endpoints_.erase(it);
}

void SimTransport::Clear() {
  std::map<ReplicaId, Endpoint> dropped;
  std::lock_guard lock(mu_);
  dropped.swap(endpoints_);
}

SimTransportStats SimTransport::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace tessera::sim
