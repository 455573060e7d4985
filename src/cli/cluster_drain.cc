#include "cli/cluster_drain.h"

#include <chrono>
#include <thread>

#include "tessera/cluster_rpc.pb.h"

namespace tessera::cli {
namespace {

using cluster::ProcessEntry;
using cluster::ProcessRole;
using std::chrono::milliseconds;

constexpr milliseconds kRpcTimeout{5000};

}  // namespace

Status SetDrain(cluster::ClusterClient& client, uint32_t node_id, bool drain) {
  pb::SetDrainRequest request;
  request.set_node_id(node_id);
  request.set_drain(drain);
  return client.CallAny(ProcessRole::kMeta, "meta.set_drain", request.SerializeAsString(), kRpcTimeout)
      .status();
}

Result<ReplicasLeft> ReplicasOn(cluster::ClusterClient& client, const ProcessEntry& node) {
  auto raw = client.CallAny(ProcessRole::kMeta, "meta.tables", pb::TablesRequest().SerializeAsString(),
                            kRpcTimeout);
  if (!raw.ok()) return raw.status();
  pb::TablesResponse tables;
  if (!tables.ParseFromString(*raw)) return Status::Corruption("bad meta.tables answer");
  ReplicasLeft r;
  for (const pb::PartitionDescriptor& p : tables.partitions()) {
    for (const pb::ReplicaPlacement& replica : p.replicas()) r.named += replica.node_id() == node.id;
  }
  auto status = client.Call(node.id, "admin.status", pb::StatusRequest().SerializeAsString(),
                            milliseconds(1000));
  pb::NodeStatus parsed;
  r.hosted = status.ok() && parsed.ParseFromString(*status) ? parsed.groups_size() : -1;
  return r;
}

int Drain(ClusterSession& s, const ClusterCommandArgs& args, std::ostream& out, std::ostream& err) {
  std::vector<ProcessEntry> nodes;
  for (const std::string& t : args.targets) {
    const auto e = s.table().ByName(t);
    if (!e || e->role != ProcessRole::kNode) {
      err << "tessera cluster drain: '" << t << "' is not a storage node of the layout\n";
      return 2;
    }
    nodes.push_back(*e);
  }
  auto client = s.client();
  if (!client.ok()) {
    err << "tessera cluster drain: " << client.status().ToString() << "\n";
    return 1;
  }
  for (const ProcessEntry& n : nodes) {
    if (Status set = SetDrain(**client, n.id, !args.drain_undo); !set.ok()) {
      err << "tessera cluster drain: " << n.name << ": " << set.ToString() << "\n";
      return 1;
    }
    out << n.name << (args.drain_undo ? ": no longer drained\n"
                                      : ": draining (the autoadmin moves its replicas)\n");
  }
  if (args.drain_undo || args.drain_no_wait) return 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(args.drain_timeout_s);
  for (const ProcessEntry& n : nodes) {
    ReplicasLeft last{-1, -1};
    for (;;) {
      auto r = ReplicasOn(**client, n);
      if (r.ok()) {
        if (r->named != last.named || r->hosted != last.hosted) {
          out << n.name << ": " << r->named << " partition replicas named, "
              << (r->hosted < 0 ? std::string("node not answering") : std::to_string(r->hosted) + " groups hosted")
              << "\n";
          out.flush();
          last = *r;
        }
        if (r->named == 0 && r->hosted == 0) break;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        err << "tessera cluster drain: " << n.name << " still holds replicas after "
            << args.drain_timeout_s << " s (is an autoadmin running? `tessera autoadmin status`)\n";
        return 1;
      }
      std::this_thread::sleep_for(milliseconds(500));
    }
    out << n.name << ": drained\n";
  }
  return 0;
}

}  // namespace tessera::cli
