#include "experiment/free_port_layout.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

namespace tessera::experiment {
namespace {

// Above the dev cluster's 19xxx ports (as free_ports.py).
constexpr uint32_t kRangeStart = 27000;

std::pair<uint32_t, uint32_t> PortRange() {
  uint32_t low = 32768, high = 60999;
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  in >> low >> high;
  if (low > kRangeStart + 4 * kPortBlock) return {kRangeStart, low};
  return {high + 1, 65536};
}

bool Bindable(uint32_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// The first port of a block this process now owns (its lock descriptor
// stays open, deliberately, until exit).
Result<uint32_t> ClaimBlock() {
  const char* tmp = std::getenv("TMPDIR");
  const std::filesystem::path dir =
      std::filesystem::path(tmp && *tmp ? tmp : "/tmp") / "tessera-test-ports";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const auto [low, high] = PortRange();
  for (uint32_t first = low; first + kPortBlock <= high; first += kPortBlock) {
    const std::string lock = (dir / (std::to_string(first) + ".lock")).string();
    const int fd = ::open(lock.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      continue;
    }
    bool all = true;
    for (uint32_t p = first; p < first + kPortBlock && all; ++p) all = Bindable(p);
    if (all) return first;
    ::close(fd);
  }
  return Status::Unavailable("no free block of " + std::to_string(kPortBlock) +
                             " loopback ports in [" + std::to_string(low) + ", " +
                             std::to_string(high) + ")");
}

class PortSource {
 public:
  Result<uint32_t> Next() {
    if (ports_.empty()) {
      auto first = ClaimBlock();
      if (!first.ok()) return first.status();
      for (uint32_t p = *first + kPortBlock; p > *first; --p) ports_.push_back(p - 1);
    }
    const uint32_t p = ports_.back();
    ports_.pop_back();
    return p;
  }

 private:
  std::vector<uint32_t> ports_;
};

// A fresh port for a set one (0 stays 0: the process does not serve it).
Result<uint32_t> Fresh(PortSource& source, uint32_t port) {
  if (port == 0) return 0u;
  return source.Next();
}

}  // namespace

Result<pb::ClusterLayout> WithFreePorts(pb::ClusterLayout layout) {
  PortSource source;
  Status failed;
  // Sets a port through `set` unless a port was not found before.
  auto swap = [&](uint32_t port, auto set) {
    if (!failed.ok()) return;
    auto fresh = Fresh(source, port);
    if (fresh.ok()) set(*fresh);
    else failed = fresh.status();
  };
  for (auto& n : *layout.mutable_nodes()) {
    swap(n.peer_port(), [&](uint32_t p) { n.set_peer_port(p); });
    swap(n.http_port(), [&](uint32_t p) { n.set_http_port(p); });
  }
  for (auto& m : *layout.mutable_meta()) {
    swap(m.peer_port(), [&](uint32_t p) { m.set_peer_port(p); });
    swap(m.http_port(), [&](uint32_t p) { m.set_http_port(p); });
  }
  for (auto& r : *layout.mutable_routers()) {
    swap(r.kv_port(), [&](uint32_t p) { r.set_kv_port(p); });
    swap(r.http_port(), [&](uint32_t p) { r.set_http_port(p); });
    swap(r.s3_port(), [&](uint32_t p) { r.set_s3_port(p); });
    swap(r.s3_tls_port(), [&](uint32_t p) { r.set_s3_tls_port(p); });
    swap(r.kv_tls_port(), [&](uint32_t p) { r.set_kv_tls_port(p); });
    swap(r.http_tls_port(), [&](uint32_t p) { r.set_http_tls_port(p); });
  }
  for (auto& a : *layout.mutable_autoadmin()) {
    swap(a.http_port(), [&](uint32_t p) { a.set_http_port(p); });
  }
  for (auto& g : *layout.mutable_gac()) {
    swap(g.peer_port(), [&](uint32_t p) { g.set_peer_port(p); });
    swap(g.http_port(), [&](uint32_t p) { g.set_http_port(p); });
  }
  if (!failed.ok()) return failed;
  return layout;
}

}  // namespace tessera::experiment
