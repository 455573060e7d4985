// HealthTracker: the storage nodes' health from the autoadmin's polls of
// admin.status, one poll per node per round whatever its state (constant
// work). A node that answers is healthy and its report replaces the last;
// one that does not is unreachable, and dead once unreachable for
// dead_after_ms, counted from its last answer (or from the tracker's start,
// for a node never heard from: a successor instance does not wait longer
// than dead_after for a node that was already gone). A node that answers
// is gray instead of healthy while its disk reports, or its peers'
// timeouts to it, say so (gray_detector.h, peer_timeouts.h).
//
// Thread safety: none; one thread polls.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "autoadmin/cluster_view.h"
#include "autoadmin/gray_detector.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::autoadmin {

class HealthTracker {
 public:
  struct Node {
    uint32_t id = 0;
    std::string az;
  };
  HealthTracker(const std::vector<Node>& nodes, uint64_t dead_after_ms, const GrayOptions& gray,
                uint64_t now_ms);

  // Tracks a node added to the cluster since (unreachable until it
  // answers, like every node at the start). False when tracked already.
  bool AddNode(const Node& node, uint64_t now_ms);

  // `status` is the node's answer, or null when it did not answer. Unknown
  // node ids are ignored.
  void OnPoll(uint32_t node, const pb::NodeStatus* status, uint64_t now_ms);

  const std::map<uint32_t, NodeView>& nodes() const { return nodes_; }

 private:
  const uint64_t dead_after_ms_;
  const GrayOptions gray_;
  std::map<uint32_t, NodeView> nodes_;
  std::map<uint32_t, uint64_t> last_answer_ms_;
  std::map<uint32_t, GrayDetector> disks_;
  PeerLinkReports peer_links_;  // the latest of each node that answered
};

// The report of one group's replica, from admin.status.
ReplicaReport ReportOf(const pb::GroupStatusProto& status);

}  // namespace tessera::autoadmin
