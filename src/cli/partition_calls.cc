#include "cli/partition_calls.h"

#include <chrono>
#include <set>

namespace tessera::cli {
namespace {

constexpr std::chrono::milliseconds kRpcTimeout{10'000};
constexpr size_t kAttemptsMax = 16;

}  // namespace

Result<std::vector<pb::PartitionDescriptor>> TablePartitions(cluster::ClusterClient& client,
                                                             const std::string& table) {
  auto tables = client.CallAny(cluster::ProcessRole::kMeta, "meta.tables",
                               pb::TablesRequest().SerializeAsString(), kRpcTimeout);
  if (!tables.ok()) return tables.status();
  pb::TablesResponse map;
  if (!map.ParseFromString(*tables)) return Status::Corruption("unparsable meta.tables answer");
  std::vector<pb::PartitionDescriptor> out;
  for (const pb::PartitionDescriptor& p : map.partitions()) {
    if (p.table() == table) out.push_back(p);
  }
  if (out.empty()) return Status::NotFound("table " + table + " has no partitions");
  return out;
}

Result<std::string> CallPartition(cluster::ClusterClient& client, const pb::PartitionDescriptor& p,
                                  const std::string& method, const std::string& payload) {
  std::vector<uint32_t> order;
  if (p.leader_hint() != 0) order.push_back(p.leader_hint());
  for (const pb::ReplicaPlacement& r : p.replicas()) order.push_back(r.node_id());
  std::set<uint32_t> tried;
  Status last = Status::Unavailable("no replica");
  for (size_t i = 0; i < order.size() && i < kAttemptsMax; ++i) {
    if (!tried.insert(order[i]).second) continue;
    auto reply = client.Call(order[i], method, payload, kRpcTimeout);
    if (reply.ok()) return reply;
    last = reply.status();
    if (last.code() == StatusCode::kNotLeader && last.leader_hint() != 0) {
      order.push_back(last.leader_hint());
    }
  }
  return Status(last.code(), "group " + std::to_string(p.group_id()) + ": " + last.ToString());
}

}  // namespace tessera::cli
