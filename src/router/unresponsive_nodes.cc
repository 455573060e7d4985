#include "router/unresponsive_nodes.h"

#include <algorithm>

#include "common/limits.h"

namespace tessera::router {

void UnresponsiveNodes::Mark(uint32_t node, Clock::time_point now) {
  if (avoid_ == Clock::duration::zero()) return;
  std::lock_guard lock(mu_);
  if (until_.size() >= limits::kRouterUnresponsiveNodesMax && !until_.contains(node)) {
    std::erase_if(until_, [now](const auto& entry) { return entry.second <= now; });
    if (until_.size() >= limits::kRouterUnresponsiveNodesMax) {
      until_.erase(std::min_element(until_.begin(), until_.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
      }));
    }
  }
  until_[node] = now + avoid_;
}

void UnresponsiveNodes::Answered(uint32_t node) {
  std::lock_guard lock(mu_);
  until_.erase(node);
}

bool UnresponsiveNodes::Avoided(uint32_t node, Clock::time_point now) const {
  std::lock_guard lock(mu_);
  const auto it = until_.find(node);
  return it != until_.end() && now < it->second;
}

size_t UnresponsiveNodes::size() const {
  std::lock_guard lock(mu_);
  return until_.size();
}

}  // namespace tessera::router
