#include "cli/cluster_add_node.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include "cluster/added_nodes.h"
#include "cluster/cluster_pki.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::cli {
namespace {

using cluster::ProcessEntry;
using cluster::ProcessRole;
using std::chrono::milliseconds;

constexpr milliseconds kRpcTimeout{5'000};
constexpr milliseconds kMapWait{10'000};    // until a meta replica serves the new map
constexpr milliseconds kAnswerWait{30'000};  // until the started node answers

bool Bindable(const std::string& host, uint32_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) return false;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// The spec of the new node: the flags, and defaults for what they leave out.
Result<pb::NodeSpec> SpecFor(const ClusterSession& s, const ClusterCommandArgs& args) {
  pb::NodeSpec spec;
  spec.set_name(args.targets.front());
  spec.set_az(args.add_az);
  spec.set_host(args.add_host);
  // Added before (the command run again): what is not given is as recorded.
  if (const auto known = s.table().ByName(spec.name()); known && known->added) {
    if (spec.host().empty()) spec.set_host(known->host);
    spec.set_peer_port(args.add_peer_port != 0 ? args.add_peer_port : known->peer_port);
    spec.set_http_port(args.add_http_port != 0 ? args.add_http_port : known->http_port);
    return spec;
  }
  std::set<uint32_t> used;
  uint32_t highest_node_port = 0;
  for (const ProcessEntry& e : s.table().all()) {
    for (uint32_t p : {e.peer_port, e.http_port, e.s3_port, e.s3_tls_port, e.kv_tls_port, e.http_tls_port}) {
      if (p != 0) used.insert(p);
    }
    if (e.role == ProcessRole::kNode) {
      highest_node_port = std::max({highest_node_port, e.peer_port, e.http_port});
      if (spec.host().empty() && e.az == spec.az()) spec.set_host(e.host);
    }
  }
  if (spec.host().empty()) spec.set_host("127.0.0.1");  // an unknown AZ: refused below
  uint32_t candidate = highest_node_port + 1;
  auto next_free = [&]() -> Result<uint32_t> {
    for (; candidate <= 65535; ++candidate) {
      if (!used.count(candidate) && Bindable(spec.host(), candidate)) {
        used.insert(candidate);
        return candidate++;
      }
    }
    return Status::InvalidArgument("no free port above " + std::to_string(highest_node_port) +
                                   " on " + spec.host() + "; give --peer-port and --http-port");
  };
  for (auto [given, set] : {std::pair{args.add_peer_port, &pb::NodeSpec::set_peer_port},
                            std::pair{args.add_http_port, &pb::NodeSpec::set_http_port}}) {
    if (given != 0) {
      (spec.*set)(given);
      used.insert(given);
      continue;
    }
    auto port = next_free();
    if (!port.ok()) return port.status();
    (spec.*set)(*port);
  }
  return spec;
}

// The added nodes of the newest storage node map a meta replica serves,
// once it names node `id`.
Result<pb::AddedNodes> AddedNodesNaming(cluster::ClusterClient& client, const ClusterSession& s,
                                        uint32_t id) {
  const auto deadline = std::chrono::steady_clock::now() + kMapWait;
  while (std::chrono::steady_clock::now() < deadline) {
    for (const ProcessEntry& m : s.table().OfRole(ProcessRole::kMeta)) {
      auto raw = client.Call(m.id, "meta.blob_slots", pb::BlobSlotsRequest().SerializeAsString(),
                             kRpcTimeout);
      pb::BlobSlotAssignments map;
      if (!raw.ok() || !map.ParseFromString(*raw)) continue;
      for (const pb::AddedNode& added : map.added_nodes()) {
        if (added.id() != id) continue;
        pb::AddedNodes nodes;
        *nodes.mutable_nodes() = map.added_nodes();
        return nodes;
      }
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  return Status::Timeout("no metadata replica serves the storage node map with node " +
                         std::to_string(id) + " yet");
}

Status WaitUntilAnswering(cluster::ClusterClient& client, uint32_t id) {
  const auto deadline = std::chrono::steady_clock::now() + kAnswerWait;
  Status last = Status::Timeout("not started");
  while (std::chrono::steady_clock::now() < deadline) {
    auto status = client.Call(id, "admin.status", pb::StatusRequest().SerializeAsString(), milliseconds(1000));
    if (status.ok()) return Status::Ok();
    last = status.status();
    std::this_thread::sleep_for(milliseconds(200));
  }
  return Status::Timeout("the node does not answer admin.status (last: " + last.ToString() + ")");
}

}  // namespace

int AddNode(ClusterSession& s, const ClusterCommandArgs& args, std::ostream& out, std::ostream& err) {
  const std::string what = "tessera cluster add-node: ";
  if (args.targets.size() != 1) {
    err << what << "name exactly one new storage node\n";
    return 2;
  }
  auto spec = SpecFor(s, args);
  if (!spec.ok()) {
    err << what << spec.status().message() << "\n";
    return 2;
  }
  // Checked here first so that a misfit leaves meta untouched even when the
  // cluster is down; meta checks again against what it has recorded.
  auto known = cluster::LoadAddedNodes(s.dir());
  if (!known.ok()) {
    err << what << known.status().ToString() << "\n";
    return 2;
  }
  if (auto fits = cluster::NextAddedNode(s.layout(), known->nodes(), *spec); !fits.ok()) {
    err << what << fits.status().message() << "\n";
    return 2;
  }
  auto client = s.client();
  if (!client.ok()) {
    err << what << client.status().ToString() << "\n";
    return 1;
  }
  pb::AddNodeRequest request;
  *request.mutable_node() = *spec;
  auto raw = (*client)->CallAny(ProcessRole::kMeta, "meta.add_node", request.SerializeAsString(), kRpcTimeout);
  pb::AddedNode added;
  if (!raw.ok() || !added.ParseFromString(*raw)) {
    const Status failed = raw.ok() ? Status::Corruption("bad meta.add_node answer") : raw.status();
    err << what << failed.ToString() << "\n";
    return failed.code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  auto nodes = AddedNodesNaming(**client, s, added.id());
  if (!nodes.ok()) {
    err << what << "meta added node " << added.id() << " but " << nodes.status().ToString()
        << "; run the command again\n";
    return 1;
  }
  if (Status saved = cluster::SaveAddedNodes(s.dir(), *nodes); !saved.ok()) {
    err << what << saved.ToString() << "\n";
    return 1;
  }
  if (Status reloaded = s.ReloadTable(); !reloaded.ok()) {
    err << what << reloaded.ToString() << "\n";
    return 1;
  }
  if (Status pki = cluster::EnsureClusterPki(s.dir(), s.table()); !pki.ok()) {
    err << what << pki.ToString() << "\n";
    return 1;
  }
  auto launched = EnsureRunning(s, spec->name());
  if (!launched.ok()) {
    err << what << launched.status().ToString() << "\n";
    return 1;
  }
  client = s.client();  // a client that knows the new node
  if (!client.ok()) {
    err << what << client.status().ToString() << "\n";
    return 1;
  }
  if (Status answering = WaitUntilAnswering(**client, added.id()); !answering.ok()) {
    err << what << spec->name() << ": " << answering.ToString() << "\n";
    return 1;
  }
  out << "added " << spec->name() << " (storage node " << added.id() << ", " << spec->az() << ", rpc "
      << spec->host() << ":" << spec->peer_port() << ", http " << spec->host() << ":"
      << spec->http_port() << ")" << (*launched ? "" : ", already running")
      << "; the autoadmin moves replicas and blob slots onto it (tessera autoadmin status)\n";
  return 0;
}

}  // namespace tessera::cli
