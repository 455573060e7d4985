// Status, readiness and fault actions of `tessera cluster`.
#pragma once

#include <ostream>

#include "cli/cluster_command.h"
#include "cli/cluster_session.h"

namespace tessera::cli {

// OK once every partition of every table has a replica holding the lease.
Status AllPartitionsLed(ClusterSession& s);
// Prints processes (with state) and partitions (replicas, leader, applied
// index, lag). False when the metadata service could not be reached.
bool PrintStatus(ClusterSession& s, std::ostream& out);
// Prints the endpoints and how to authenticate.
void PrintEndpoints(ClusterSession& s, std::ostream& out);
// digest: for each storage node among the targets, one line per hosted
// group, "NAME group=G applied=A pairs=P bytes=B checksum=C" (the node's
// admin.state_digest); replicas with equal lines hold equal states.
int PrintDigests(ClusterSession& s, const ClusterCommandArgs& args, std::ostream& out,
                 std::ostream& err);
// partition / heal / slow-disk.
int RunFaultAction(ClusterSession& s, const ClusterCommandArgs& args, std::ostream& out,
                   std::ostream& err);

}  // namespace tessera::cli
