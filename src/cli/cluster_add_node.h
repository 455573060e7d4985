// `tessera cluster add-node NAME --az AZ [--host H] [--peer-port P]
// [--http-port P]`: a new storage node joins the running cluster
// (cluster/added_nodes.h). Meta records it in the storage node map
// (meta.add_node), which every node, router and autoadmin instance polls;
// the command then keeps the operator's copy (DIR/added_nodes.textproto),
// issues the node's certificate, starts it and waits until it answers. The
// autoadmin then moves replicas and blob slots onto it (docs/autoadmin.md,
// "Spreading").
//
// Ports not given are the lowest ones above the cluster's storage nodes'
// that no process uses and that can be bound on the host; the host not
// given is that of the AZ's first storage node; for a node added before,
// both are the recorded ones.
//
// Exit codes: 0 added and answering (also when it had been added with the
// same spec before), 1 meta or the node did not answer in time, 2 a name,
// AZ, host or port that does not fit the cluster (nothing changed).
#pragma once

#include <ostream>

#include "cli/cluster_command.h"
#include "cli/cluster_session.h"

namespace tessera::cli {

int AddNode(ClusterSession& s, const ClusterCommandArgs& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
