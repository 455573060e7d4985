#include "cluster/layout.h"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "cluster/layout_knobs.h"

namespace tessera::cluster {
namespace {

bool IsLoopback(const std::string& host) { return host.rfind("127.", 0) == 0; }
// 198.18.0.0/15: where `experiment run --netns` maps the hosts, inside the
// network namespaces it creates (experiment/netns_plan.h).
bool IsNetnsAddress(const std::string& host) {
  return host.rfind("198.18.", 0) == 0 || host.rfind("198.19.", 0) == 0;
}

// Collects names, ports and AZ memberships while checking each process.
class LayoutChecker {
 public:
  explicit LayoutChecker(const pb::ClusterLayout& layout)
      : azs_(layout.azs().begin(), layout.azs().end()) {}

  Status Process(const std::string& kind, const std::string& name, const std::string& az,
                 const std::string& host, const std::vector<uint32_t>& ports) {
    if (name.empty()) return Status::InvalidArgument(kind + " without a name");
    if (!names_.insert(name).second) return Status::InvalidArgument("duplicate name " + name);
    if (!azs_.count(az)) return Status::InvalidArgument(name + ": unknown AZ '" + az + "'");
    if (!IsLoopback(host) && !IsNetnsAddress(host)) {
      return Status::InvalidArgument(name + ": host " + host + " is not a loopback address");
    }
    for (uint32_t port : ports) {
      if (port == 0 || port > 65535) return Status::InvalidArgument(name + ": invalid port");
      if (!ports_.insert({host, port}).second) {
        return Status::InvalidArgument(name + ": port " + std::to_string(port) + " used twice");
      }
    }
    ++per_az_[kind][az];
    return Status::Ok();
  }

  int Count(const std::string& kind, const std::string& az) { return per_az_[kind][az]; }

 private:
  std::set<std::string> azs_;
  std::set<std::string> names_;
  std::set<std::pair<std::string, uint32_t>> ports_;
  std::map<std::string, std::map<std::string, int>> per_az_;
};

}  // namespace

Status ValidateLayout(const pb::ClusterLayout& layout) {
  std::set<std::string> azs(layout.azs().begin(), layout.azs().end());
  if (azs.size() < 3 || azs.size() != static_cast<size_t>(layout.azs_size())) {
    return Status::InvalidArgument("a layout names at least three distinct AZs");
  }
  if (layout.routers_size() == 0) return Status::InvalidArgument("a layout needs a router");
  LayoutChecker check(layout);
  for (const auto& n : layout.nodes()) {
    TESSERA_RETURN_IF_ERROR(
        check.Process("node", n.name(), n.az(), n.host(), {n.peer_port(), n.http_port()}));
  }
  for (const auto& m : layout.meta()) {
    TESSERA_RETURN_IF_ERROR(
        check.Process("meta", m.name(), m.az(), m.host(), {m.peer_port(), m.http_port()}));
  }
  for (const auto& r : layout.routers()) {
    std::vector<uint32_t> ports = {r.kv_port(), r.http_port(), r.s3_port(), r.s3_tls_port()};
    for (uint32_t optional_port : {r.kv_tls_port(), r.http_tls_port()}) {
      if (optional_port != 0) ports.push_back(optional_port);
    }
    TESSERA_RETURN_IF_ERROR(check.Process("router", r.name(), r.az(), r.host(), ports));
  }
  for (const auto& a : layout.autoadmin()) {
    TESSERA_RETURN_IF_ERROR(check.Process("autoadmin", a.name(), a.az(), a.host(), {a.http_port()}));
  }
  for (const auto& g : layout.gac()) {
    TESSERA_RETURN_IF_ERROR(
        check.Process("gac", g.name(), g.az(), g.host(), {g.peer_port(), g.http_port()}));
  }
  for (const std::string& az : azs) {
    if (check.Count("node", az) == 0) return Status::InvalidArgument(az + " has no storage node");
    if (check.Count("meta", az) != 1) {
      return Status::InvalidArgument(az + " needs exactly one metadata replica");
    }
  }
  return CheckLayoutKnobs(layout);
}

Result<pb::ClusterLayout> ParseLayout(const std::string& text) {
  pb::ClusterLayout layout;
  if (!google::protobuf::TextFormat::ParseFromString(text, &layout)) {
    return Status::InvalidArgument("not a valid ClusterLayout in protobuf text format");
  }
  TESSERA_RETURN_IF_ERROR(ValidateLayout(layout));
  return layout;
}

Result<pb::ClusterLayout> LoadLayout(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read cluster layout " + path);
  std::stringstream text;
  text << in.rdbuf();
  auto layout = ParseLayout(text.str());
  if (!layout.ok()) return Status::InvalidArgument(path + ": " + layout.status().message());
  return layout;
}

std::string DescribeLayout(const pb::ClusterLayout& layout) {
  std::ostringstream out;
  out << "cluster '" << layout.name() << "': " << layout.azs_size() << " AZs, "
      << layout.nodes_size() << " storage nodes, " << layout.meta_size()
      << " metadata replicas, " << layout.routers_size() << " router(s), "
      << layout.autoadmin_size() << " autoadmin instance(s)";
  if (layout.gac_size() > 0) out << ", " << layout.gac_size() << " GAC instance(s)";
  out << "\n";
  for (const auto& n : layout.nodes()) {
    out << "  node    " << n.name() << "  " << n.az() << "  peer " << n.host() << ":"
        << n.peer_port() << "  http " << n.host() << ":" << n.http_port() << "\n";
  }
  for (const auto& m : layout.meta()) {
    out << "  meta    " << m.name() << "  " << m.az() << "  peer " << m.host() << ":"
        << m.peer_port() << "  http " << m.host() << ":" << m.http_port() << "\n";
  }
  for (const auto& r : layout.routers()) {
    out << "  router  " << r.name() << "  " << r.az() << "  kv " << r.host() << ":"
        << r.kv_port() << "  http " << r.host() << ":" << r.http_port() << "  s3 http://"
        << r.host() << ":" << r.s3_port() << "  s3 https://" << r.host() << ":"
        << r.s3_tls_port();
    if (r.kv_tls_port() != 0) out << "  kv+tls " << r.host() << ":" << r.kv_tls_port();
    if (r.http_tls_port() != 0) out << "  https " << r.host() << ":" << r.http_tls_port();
    out << "\n";
  }
  for (const auto& a : layout.autoadmin()) {
    out << "  autoadmin " << a.name() << "  " << a.az() << "  http " << a.host() << ":"
        << a.http_port() << "\n";
  }
  for (const auto& g : layout.gac()) {
    out << "  gac     " << g.name() << "  " << g.az() << "  peer " << g.host() << ":"
        << g.peer_port() << "  http " << g.host() << ":" << g.http_port() << "\n";
  }
  return out.str();
}

}  // namespace tessera::cluster
