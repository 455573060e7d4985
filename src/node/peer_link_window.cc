#include "node/peer_link_window.h"

namespace tessera::node {

void PeerLinkWindow::Record(uint32_t peer, bool timed_out, uint64_t now_ms) {
  if (!outcomes_.count(peer) && outcomes_.size() >= kPeersMax) return;
  std::deque<Outcome>& outcomes = outcomes_[peer];
  outcomes.push_back(Outcome{now_ms, timed_out});
  while (outcomes.size() > kOutcomesPerPeerMax ||
         (!outcomes.empty() && outcomes.front().at_ms + window_ms_ < now_ms)) {
    outcomes.pop_front();
  }
}

std::vector<pb::PeerLinkProto> PeerLinkWindow::Report(uint64_t now_ms) const {
  std::vector<pb::PeerLinkProto> out;
  for (const auto& [peer, outcomes] : outcomes_) {
    pb::PeerLinkProto link;
    link.set_node_id(peer);
    link.set_window_ms(window_ms_);
    for (const Outcome& o : outcomes) {
      if (o.at_ms + window_ms_ < now_ms) continue;
      link.set_calls(link.calls() + 1);
      if (o.timed_out) link.set_timeouts(link.timeouts() + 1);
    }
    if (link.calls() > 0) out.push_back(std::move(link));
  }
  return out;
}

}  // namespace tessera::node
