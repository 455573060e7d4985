// ProcessTable: every process of a cluster layout with its stable process id
// (storage nodes 1.., metadata replicas 101.., routers 201.., autoadmin
// instances 301.., global admission control instances 401..), role, AZ and
// endpoints. Process ids double as replica ids in replication groups and as
// peer ids on the internal RPC transport.
//
// Thread safety: immutable after construction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/cluster.pb.h"

namespace tessera::cluster {

enum class ProcessRole { kNode, kMeta, kRouter, kAutoadmin, kGac };
// "node", "meta", "router", "autoadmin", "gac"
const char* ProcessRoleName(ProcessRole role);

// Whether processes of `role` serve the internal RPC on their peer port
// (storage nodes and metadata replicas; routers serve clients there, and
// autoadmin instances only call). GAC instances serve gac.report on
// their peer port but are no replication peers: not counted here.
inline bool ServesRpc(ProcessRole role) {
  return role == ProcessRole::kNode || role == ProcessRole::kMeta;
}

inline constexpr uint32_t kFirstNodeId = 1;
inline constexpr uint32_t kFirstMetaId = 101;
inline constexpr uint32_t kFirstRouterId = 201;
inline constexpr uint32_t kFirstAutoadminId = 301;
inline constexpr uint32_t kFirstGacId = 401;

struct ProcessEntry {
  uint32_t id = 0;
  ProcessRole role = ProcessRole::kNode;
  std::string name;
  std::string az;
  std::string host;
  uint32_t peer_port = 0;  // internal RPC (nodes, meta, gac); native KV API (routers)
  uint32_t http_port = 0;  // metrics, health (all); HTTP KV API (routers)
  uint32_t s3_port = 0;    // routers only
  uint32_t s3_tls_port = 0;
  uint32_t kv_tls_port = 0;    // routers: the native KV API over TLS; 0: off
  uint32_t http_tls_port = 0;  // routers: the HTTP KV API over TLS; 0: off
  // A storage node added to the running cluster (cluster/added_nodes.h),
  // not one of the layout's: the layout's blob slot map leaves it out.
  bool added = false;
};

class ProcessTable {
 public:
  // `layout` must be valid (ValidateLayout).
  explicit ProcessTable(const pb::ClusterLayout& layout);
  // The layout's processes and the storage nodes added to it, which must
  // fit it (cluster::WithAddedNodes succeeds; CHECKed).
  ProcessTable(const pb::ClusterLayout& layout, const pb::AddedNodes& added);

  const std::vector<ProcessEntry>& all() const { return entries_; }
  std::vector<ProcessEntry> OfRole(ProcessRole role) const;
  std::optional<ProcessEntry> ById(uint32_t id) const;
  std::optional<ProcessEntry> ByName(const std::string& name) const;
  // The layout's own storage nodes (not the added ones), in id order: what
  // the layout's blob slot map is built from.
  std::vector<ProcessEntry> LayoutNodes() const;
  // Every process in `az`.
  std::vector<ProcessEntry> InAz(const std::string& az) const;

 private:
  std::vector<ProcessEntry> entries_;
};

}  // namespace tessera::cluster
