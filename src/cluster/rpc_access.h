// Who may call what on the cluster's own RPC (rpc/access_policy.h): one
// policy per kind of server, by the roles of the processes' certificates.
//
//   role     process
//   node     storage node               (ProcessRoleName(kNode))
//   meta     metadata replica           (ProcessRoleName(kMeta))
//   router   S3 / KV front end          (ProcessRoleName(kRouter))
//   gac      global admission control   (ProcessRoleName(kGac))
//   cli      `tessera` commands run by an operator (kCliRole)
//
// The operator's role may call everything. A router may read and write
// data and buckets, but neither inject faults, create groups or tables,
// nor create users; nodes and meta replicas call only what their own work
// needs (replication, blob repair and GC, forwarding to the meta leader).
// docs/security.md lists the rules.
//
// Thread safety: the policies are immutable and shared.
#pragma once

#include <memory>
#include <string_view>

#include "rpc/access_policy.h"

namespace tessera::cluster {

inline constexpr std::string_view kCliRole = "cli";

// The policy of a storage node's RPC server.
std::shared_ptr<const rpc::AccessPolicy> NodeAccessPolicy();
// The policy of a metadata replica's RPC server.
std::shared_ptr<const rpc::AccessPolicy> MetaAccessPolicy();
// The policy of a global admission control instance's RPC server: routers
// report and get their shares; nodes and the operator may ask too.
std::shared_ptr<const rpc::AccessPolicy> GacAccessPolicy();

}  // namespace tessera::cluster
