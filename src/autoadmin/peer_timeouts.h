// Peers' timeouts to a node, as a gray-failure signal (docs/autoadmin.md,
// "Health"): every storage node reports, per peer, the calls it made in
// its last window and how many timed out (NodeStatus.peer_links,
// node/peer_prober.h). A node whose peers mostly cannot get an answer
// from it in time is degraded even while it answers the autoadmin: it is
// paused in part, overloaded, or cut off from its peers.
//
// The verdict needs agreement: a node is accused when at least two peers
// saw at least timeout_percent of at least min_calls calls to it time
// out, and those peers are a majority of the peers that called it. One
// bad link accuses nobody (either end could be at fault); a node whose
// own calls all time out accuses nobody either, and is accused by the
// others in turn (its answers do not reach them).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "knobs/knobs.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::autoadmin {

struct PeerTimeoutOptions {
  uint32_t timeout_percent = knobs::kAutoadminPeerTimeoutPercent.default_value;  // 0: off
  uint32_t min_calls = 5;
};

// The latest peer_links report of each node that answered, by reporter.
using PeerLinkReports = std::map<uint32_t, std::vector<pb::PeerLinkProto>>;

// Why `node` is degraded in its peers' eyes, or empty when it is not.
std::string PeerTimeoutReason(uint32_t node, const PeerLinkReports& reports,
                              const PeerTimeoutOptions& options);

}  // namespace tessera::autoadmin
