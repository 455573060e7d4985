// Status, readiness and fault actions of `tessera cluster`.
#pragma once

#include <optional>
#include <ostream>
#include <vector>

#include "cli/cluster_command.h"
#include "cli/cluster_session.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::cli {

// OK once every partition of every table has a replica holding the lease.
Status AllPartitionsLed(ClusterSession& s);
// Prints processes (with state) and partitions (replicas, leader, applied
// index, lag). False when the metadata service could not be reached.
bool PrintStatus(ClusterSession& s, std::ostream& out);
// The same facts as one JSON object (pb::ClusterStatusReport in protobuf's
// JSON mapping, proto field names, every field present); false as above.
bool PrintStatusJson(ClusterSession& s, std::ostream& out);
// Prints the endpoints and how to authenticate.
void PrintEndpoints(ClusterSession& s, std::ostream& out);
// digest: for each storage node among the targets, one line per hosted
// group, "NAME group=G applied=A pairs=P bytes=B checksum=C" (the node's
// admin.state_digest); replicas with equal lines hold equal states.
int PrintDigests(ClusterSession& s, const ClusterCommandArgs& args, std::ostream& out,
                 std::ostream& err);
// One partition of the metadata service's map and the node whose replica
// holds the lease, if any answered holding it.
struct LedPartition {
  pb::PartitionDescriptor partition;
  std::optional<uint32_t> leader_node_id;
};
// Every partition of every table (meta.tables) with its leader, from the
// storage nodes' admin.status (the data `cluster status` prints).
// Unavailable when no meta replica answers.
Result<std::vector<LedPartition>> PartitionLeaders(ClusterSession& s);

// The fault actions, each through the processes' admin.faults with the
// rule set recorded in DIR/faults/NAME.textproto (so faults add up):
// `partition A B`: A and B (process names or AZs) drop everything to each
// other (only A -> B when `one_way`); InvalidArgument when either denotes
// nothing.
Status PartitionSides(ClusterSession& s, const std::string& a, const std::string& b, bool one_way,
                      std::ostream& out);
// `heal`: every process that serves RPC drops its fault rules.
Status HealAll(ClusterSession& s, std::ostream& out);
// `slow-disk TARGET`: fsyncs of the target's processes take `slow_ms` longer
// (0 restores them); InvalidArgument when the target denotes nothing.
Status SlowDisk(ClusterSession& s, const std::string& target, uint32_t slow_ms, std::ostream& out);
// `full-disk TARGET`: every synced write (log group commit, blob fsync) of
// the target's processes fails with an I/O error while `fail` holds (until
// `heal` for the command), as on a full disk
// (admin.faults fail_writes); InvalidArgument when the target denotes
// nothing.
Status FailWrites(ClusterSession& s, const std::string& target, bool fail, std::ostream& out);
// `clock TARGET`: the target's processes read a wall clock `offset_ms`
// ahead (negative: behind) and hand their consensus replicas a monotonic
// time running `skew_ppm` millionths fast (common/fault_clock.h); 0
// clears, an absent knob keeps its value in force. InvalidArgument when the
// target denotes nothing or only routers or autoadmin processes, which take
// no fault rules.
Status SetClock(ClusterSession& s, const std::string& target, std::optional<int64_t> offset_ms,
                std::optional<int32_t> skew_ppm, std::ostream& out);
// partition / heal / slow-disk / full-disk as `tessera cluster` runs them
// (exit code).
int RunFaultAction(ClusterSession& s, const ClusterCommandArgs& args, std::ostream& out,
                   std::ostream& err);

}  // namespace tessera::cli
