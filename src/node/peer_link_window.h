// PeerLinkWindow: how this node's calls to each other storage node fared
// over the last window_ms, as NodeStatus.peer_links reports it: per peer,
// the calls that completed within the window and how many of them timed
// out (no answer within the call's deadline). The autoadmin reads peers'
// timeouts to a node as a gray-failure signal (docs/autoadmin.md,
// "Health"; autoadmin/peer_timeouts.h).
//
// Bounded: at most kOutcomesPerPeerMax outcomes per peer (the oldest are
// forgotten first) and kPeersMax peers (outcomes for more are dropped).
//
// Thread safety: none (the PeerProber serialises access).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "tessera/cluster_rpc.pb.h"

namespace tessera::node {

class PeerLinkWindow {
 public:
  static constexpr size_t kOutcomesPerPeerMax = 256;
  static constexpr size_t kPeersMax = 128;

  explicit PeerLinkWindow(uint32_t window_ms) : window_ms_(window_ms) {}

  // A call to `peer` completed at `now_ms` (monotonic): answered (whatever
  // the answer) or timed out.
  void Record(uint32_t peer, bool timed_out, uint64_t now_ms);
  // Every peer with a call completed within the window at `now_ms`, in
  // ascending id.
  std::vector<pb::PeerLinkProto> Report(uint64_t now_ms) const;

 private:
  struct Outcome {
    uint64_t at_ms = 0;
    bool timed_out = false;
  };
  const uint32_t window_ms_;
  std::map<uint32_t, std::deque<Outcome>> outcomes_;
};

}  // namespace tessera::node
