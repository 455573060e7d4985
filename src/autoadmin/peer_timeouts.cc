#include "autoadmin/peer_timeouts.h"

namespace tessera::autoadmin {

std::string PeerTimeoutReason(uint32_t node, const PeerLinkReports& reports,
                              const PeerTimeoutOptions& options) {
  if (options.timeout_percent == 0) return std::string();
  size_t callers = 0, accusers = 0;
  for (const auto& [reporter, links] : reports) {
    if (reporter == node) continue;
    for (const pb::PeerLinkProto& link : links) {
      if (link.node_id() != node || link.calls() < options.min_calls) continue;
      ++callers;
      if (link.timeouts() * 100 >= link.calls() * options.timeout_percent) ++accusers;
    }
  }
  if (accusers < 2 || accusers * 2 <= callers) return std::string();
  return std::to_string(accusers) + " of " + std::to_string(callers) + " peers saw >= " +
         std::to_string(options.timeout_percent) + " % of their calls to it time out";
}

}  // namespace tessera::autoadmin
