// ClusterView: what the autoadmin knows of the cluster at one instant, built
// from meta's partition map and every storage node's admin.status
// (health_tracker.h). The planner (planner.h) decides from it alone.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "tessera/cluster_rpc.pb.h"
#include "tessera/consensus.pb.h"

namespace tessera::autoadmin {

// The health of one storage node.
enum class NodeHealth {
  kHealthy,      // answered the last poll
  // Answered the last poll, but its disk is slow or failing
  // (gray_detector.h): it leads nothing and receives no replica, and its
  // replicas are replaced once it stays gray for gray_replace_after.
  kGray,
  kUnreachable,  // missed polls, for less than dead_after
  kDead,         // unreachable for dead_after or longer: its replicas are replaced
};
const char* NodeHealthName(NodeHealth health);
// Healthy or gray: the node answered its last poll, and its replicas take
// part in their groups.
inline bool Answered(NodeHealth health) {
  return health == NodeHealth::kHealthy || health == NodeHealth::kGray;
}

// A leader's load and its load split finder's answer
// (GroupStatusProto.load_*; node/load_split_finder.h).
struct LoadReport {
  uint64_t requests_per_s = 0;
  pb::LoadSplitReason reason = pb::LOAD_SPLIT_UNKNOWN;
  std::string split_key;  // reason LOAD_SPLIT_KEY_FOUND
  uint32_t share_permille = 0;
  // What admission sees (GroupStatusProto.load_*_units_per_s, ...): units
  // consumed per second, the boost above the static share (thousandths),
  // and the per-partition caps; all 0 from an older node.
  double read_units_per_s = 0;
  double write_units_per_s = 0;
  uint32_t boost_permille = 0;
  double rcu_max = 0;
  double wcu_max = 0;
};

struct ReplicaReport {
  std::string role;    // consensus::RoleName on that node ("leader", ...)
  uint64_t applied = 0;
  uint64_t chosen = 0;
  uint64_t ballot_round = 0;
  uint32_t ballot_replica = 0;
  pb::Membership membership;  // latest in that replica's log
  bool membership_pending = false;
  // The group stopped on that node for good (a failed log write or
  // snapshot install): it serves nothing until its process restarts.
  bool stopped = false;
  // Leaders only: the estimated key+value bytes of the group's state
  // (GroupStatusProto.state_bytes); 0 elsewhere.
  uint64_t state_bytes = 0;
  LoadReport load;  // leaders only
  // Leaders only: the estimated live keys (GroupStatusProto.state_keys).
  uint64_t state_keys = 0;
};

struct NodeView {
  uint32_t id = 0;
  std::string az;
  NodeHealth health = NodeHealth::kHealthy;
  uint64_t unreachable_for_ms = 0;  // 0 while healthy
  uint64_t gray_for_ms = 0;         // how long it has been gray; 0 when not
  std::string degraded_reason;      // why its disk is (or was last) degraded
  // The operator drains it (`tessera cluster drain`): its replicas move
  // off, and it is never a target.
  bool draining = false;
  // The groups it hosts, as its last answered poll reported them (kept
  // while it is unreachable).
  std::map<uint64_t, ReplicaReport> groups;
};

struct GroupView {
  pb::PartitionDescriptor descriptor;  // meta's
  // The leader as a reachable replica reports itself (highest ballot when
  // several do); 0 when none: the group cannot change its membership now.
  uint32_t leader = 0;
  // Voters whose applied index stayed below what the group had chosen
  // lag_for ago (lag_tracker.h): replaced like a dead node's.
  std::set<uint32_t> lagging_voters;
  // Nodes whose replica of the group reports itself stopped
  // (ReplicaReport::stopped): a voter there is replaced like a dead node's
  // and is never a leadership target.
  std::set<uint32_t> stopped_voters;
  // Key+value bytes of the partition's state as its leader reports them
  // (split_planner.h); 0 when unknown.
  uint64_t state_bytes = 0;
  // Its leader's load (load_split_planner.h); zero when unknown.
  LoadReport load;
  // Live keys as its leader estimates them (placement_publisher.h); 0 when
  // unknown (leader == 0).
  uint64_t state_keys = 0;
  // A split of this group is ordered and not yet finished (meta's map
  // still names the parent's whole range, or a child is not created on
  // every replica): nothing else is planned for it.
  bool splitting = false;
};

struct ClusterView {
  std::map<uint32_t, NodeView> nodes;   // every storage node of the layout
  std::map<uint64_t, GroupView> groups; // every partition of every table
  pb::BlobSlotAssignments blob_slots;   // meta's newest (blob_slot_planner.h)
  // Per table, the split points it was created with
  // (TableDescriptor.split_points): boundaries merges keep (merge_planner.h).
  std::map<std::string, std::set<std::string>> created_split_points;
};

// Fills each group's leader, stopped voters and state bytes (the
// leader's report) from the nodes' reports.
void FindLeaders(ClusterView& view);

}  // namespace tessera::autoadmin
