#include "experiment/netns_plan.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <sstream>

namespace tessera::experiment {
namespace {

constexpr uint32_t kSubnetBase = (198u << 24) | (18u << 16);  // 198.18.0.0/15
constexpr char kDevice[] = "eth0";                            // in each AZ namespace

std::string Quad(uint32_t a) {
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." +
         std::to_string((a >> 8) & 255) + "." + std::to_string(a & 255);
}

std::optional<uint32_t> ParseQuad(const std::string& s) {
  in_addr addr{};
  if (::inet_pton(AF_INET, s.c_str(), &addr) != 1) return std::nullopt;
  return ntohl(addr.s_addr);
}

bool ValidAzName(const std::string& az) {
  if (az.empty() || az.size() > 32) return false;
  return std::all_of(az.begin(), az.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

std::optional<int> PidAfter(const std::string& name, const std::string& prefix, bool dash_follows) {
  if (name.rfind(prefix, 0) != 0) return std::nullopt;
  const char* first = name.data() + prefix.size();
  const char* last = name.data() + name.size();
  int pid = 0;
  auto [end, ec] = std::from_chars(first, last, pid);
  if (ec != std::errc() || end == first || pid <= 0) return std::nullopt;
  if (dash_follows ? (end == last || *end != '-') : end != last) return std::nullopt;
  return pid;
}

NetnsCommand Tc(const NetnsAz& az, std::vector<std::string> args) {
  NetnsCommand c = {"tc", "-n", az.ns};
  c.insert(c.end(), args.begin(), args.end());
  return c;
}

// "1.25ms": tc takes fractional milliseconds.
std::string Ms(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3fms", ms);
  return text;
}

// Every process of the layout as (AZ, host), in layout order.
std::vector<std::pair<std::string, std::string>> Hosts(const pb::ClusterLayout& l) {
  std::vector<std::pair<std::string, std::string>> hosts;
  for (const auto& p : l.nodes()) hosts.emplace_back(p.az(), p.host());
  for (const auto& p : l.meta()) hosts.emplace_back(p.az(), p.host());
  for (const auto& p : l.routers()) hosts.emplace_back(p.az(), p.host());
  for (const auto& p : l.autoadmin()) hosts.emplace_back(p.az(), p.host());
  for (const auto& p : l.gac()) hosts.emplace_back(p.az(), p.host());
  return hosts;
}

}  // namespace

Status ValidateNetnsNetwork(const pb::NetnsNetwork& n) {
  const NetnsShaping s = EffectiveShaping(n);
  if (!(s.delay_ms >= 0 && s.delay_ms <= kNetnsDelayMsMax)) {
    return Status::InvalidArgument("netns.delay_ms = " + std::to_string(s.delay_ms) +
                                   ": must be in 0.." + std::to_string(kNetnsDelayMsMax));
  }
  if (!(s.jitter_ms >= 0 && s.jitter_ms <= s.delay_ms)) {
    return Status::InvalidArgument("netns.jitter_ms = " + std::to_string(s.jitter_ms) +
                                   ": must be in 0..delay_ms (" + std::to_string(s.delay_ms) + ")");
  }
  if (!(s.loss_percent >= 0 && s.loss_percent <= 100)) {
    return Status::InvalidArgument("netns.loss_percent = " + std::to_string(s.loss_percent) +
                                   ": must be in 0..100");
  }
  return Status::Ok();
}

NetnsShaping EffectiveShaping(const pb::NetnsNetwork& n) {
  NetnsShaping s;
  if (n.has_delay_ms()) s.delay_ms = n.delay_ms();
  // An explicit delay without a jitter: no jitter (the default's 0.2 ms
  // belongs to the default delay).
  if (n.has_jitter_ms()) {
    s.jitter_ms = n.jitter_ms();
  } else if (n.has_delay_ms()) {
    s.jitter_ms = 0;
  }
  if (n.has_loss_percent()) s.loss_percent = n.loss_percent();
  return s;
}

const NetnsAz* NetnsPlan::Az(const std::string& az) const {
  for (const NetnsAz& a : azs) {
    if (a.az == az) return &a;
  }
  return nullptr;
}

std::vector<std::string> NetnsPlan::Namespaces() const {
  std::vector<std::string> all;
  for (const NetnsAz& a : azs) all.push_back(a.ns);
  all.push_back(bridge_ns);
  return all;
}

Result<NetnsPlan> PlanNetns(const pb::ClusterLayout& layout, int pid, uint32_t subnet_index) {
  if (subnet_index >= kNetnsSubnetsMax || pid <= 0) {
    return Status::InvalidArgument("netns: subnet index or pid out of range");
  }
  if (static_cast<size_t>(layout.azs_size()) > kNetnsAzsMax) {
    return Status::InvalidArgument("netns: at most " + std::to_string(kNetnsAzsMax) + " AZs");
  }
  const uint32_t subnet = kSubnetBase + (subnet_index << 8);
  const std::string tag = kNetnsPrefix + std::to_string(pid);
  NetnsPlan plan;
  plan.pid = pid;
  plan.bridge_ns = tag + "-br";
  plan.host_interface = kNetnsHostInterfacePrefix + std::to_string(pid);
  plan.host_address = Quad(subnet + 1);
  plan.subnet = Quad(subnet) + "/24";
  for (int i = 0; i < layout.azs_size(); ++i) {
    const std::string& az = layout.azs(i);
    if (!ValidAzName(az)) {
      return Status::InvalidArgument("netns: AZ name '" + az +
                                     "' is not 1..32 characters of A-Z, a-z, 0-9, '_' and '-'");
    }
    plan.azs.push_back({az, tag + "-" + az, "az" + std::to_string(i), {}, {}});
  }
  for (const auto& [az, host] : Hosts(layout)) {
    auto it = std::find_if(plan.azs.begin(), plan.azs.end(),
                           [&](const NetnsAz& a) { return a.az == az; });
    if (it == plan.azs.end()) return Status::InvalidArgument("netns: unknown AZ '" + az + "'");
    if (std::find(it->hosts.begin(), it->hosts.end(), host) != it->hosts.end()) continue;
    if (it->hosts.size() == kNetnsHostsPerAzMax) {
      return Status::InvalidArgument("netns: AZ " + az + " has more than " +
                                     std::to_string(kNetnsHostsPerAzMax) + " distinct hosts");
    }
    const auto i = static_cast<uint32_t>(it - plan.azs.begin());
    it->addresses.push_back(Quad(subnet + 16 * (i + 1) + static_cast<uint32_t>(it->hosts.size())));
    it->hosts.push_back(host);
  }
  return plan;
}

pb::ClusterLayout MapHosts(pb::ClusterLayout layout, const NetnsPlan& plan) {
  auto map = [&](const std::string& az, std::string* host) {
    const NetnsAz* a = plan.Az(az);
    if (a == nullptr) return;
    auto it = std::find(a->hosts.begin(), a->hosts.end(), *host);
    if (it != a->hosts.end()) *host = a->addresses[static_cast<size_t>(it - a->hosts.begin())];
  };
  for (auto& p : *layout.mutable_nodes()) map(p.az(), p.mutable_host());
  for (auto& p : *layout.mutable_meta()) map(p.az(), p.mutable_host());
  for (auto& p : *layout.mutable_routers()) map(p.az(), p.mutable_host());
  for (auto& p : *layout.mutable_autoadmin()) map(p.az(), p.mutable_host());
  for (auto& p : *layout.mutable_gac()) map(p.az(), p.mutable_host());
  return layout;
}

std::vector<NetnsCommand> BuildCommands(const NetnsPlan& plan) {
  const std::string& br = plan.bridge_ns;
  std::vector<NetnsCommand> c;
  c.push_back({"ip", "netns", "add", br});
  for (const NetnsAz& a : plan.azs) c.push_back({"ip", "netns", "add", a.ns});
  c.push_back({"ip", "-n", br, "link", "add", "br0", "type", "bridge"});
  c.push_back({"ip", "-n", br, "link", "set", "br0", "up"});
  for (const NetnsAz& a : plan.azs) {
    c.push_back({"ip", "-n", br, "link", "add", a.bridge_port, "type", "veth", "peer", "name",
                 kDevice, "netns", a.ns});
    c.push_back({"ip", "-n", br, "link", "set", a.bridge_port, "master", "br0", "up"});
    c.push_back({"ip", "-n", a.ns, "link", "set", "lo", "up"});
    for (const std::string& address : a.addresses) {
      c.push_back({"ip", "-n", a.ns, "addr", "add", address + "/24", "dev", kDevice});
    }
    c.push_back({"ip", "-n", a.ns, "link", "set", kDevice, "up"});
  }
  c.push_back({"ip", "link", "add", plan.host_interface, "type", "veth", "peer", "name", "host",
               "netns", br});
  c.push_back({"ip", "-n", br, "link", "set", "host", "master", "br0", "up"});
  c.push_back({"ip", "addr", "add", plan.host_address + "/24", "dev", plan.host_interface});
  c.push_back({"ip", "link", "set", plan.host_interface, "up"});
  return c;
}

std::vector<NetnsCommand> ClassifyCommands(const NetnsPlan& plan) {
  std::vector<NetnsCommand> c;
  for (const NetnsAz& a : plan.azs) {
    // r2q keeps htb from warning about the quantum of a 10 Gbit/s class.
    c.push_back(Tc(a, {"qdisc", "add", "dev", kDevice, "root", "handle", "1:", "htb", "default",
                       "1", "r2q", "100000"}));
    for (const char* cls : {"1:1", "1:2"}) {
      c.push_back(Tc(a, {"class", "add", "dev", kDevice, "parent", "1:", "classid", cls, "htb",
                         "rate", "10gbit"}));
    }
    for (const NetnsAz& other : plan.azs) {
      if (other.az == a.az) continue;
      for (const std::string& address : other.addresses) {
        c.push_back(Tc(a, {"filter", "add", "dev", kDevice, "parent", "1:", "protocol", "ip",
                           "prio", "2", "u32", "match", "ip", "dst", address + "/32", "flowid",
                           "1:2"}));
      }
    }
  }
  return c;
}

std::vector<NetnsCommand> NetemCommands(const NetnsPlan& plan, const NetnsShaping& shaping) {
  std::vector<NetnsCommand> c;
  if (!shaping.any()) return c;
  for (const NetnsAz& a : plan.azs) {
    NetnsCommand netem = Tc(a, {"qdisc", "add", "dev", kDevice, "parent", "1:2", "handle", "20:",
                                "netem", "delay", Ms(shaping.delay_ms)});
    if (shaping.jitter_ms > 0) netem.push_back(Ms(shaping.jitter_ms));
    if (shaping.loss_percent > 0) {
      char loss[32];
      std::snprintf(loss, sizeof loss, "%.3f%%", shaping.loss_percent);
      netem.insert(netem.end(), {"loss", loss});
    }
    c.push_back(std::move(netem));
  }
  return c;
}

std::vector<NetnsCommand> QueueShapingCommands(const NetnsPlan& plan) {
  std::vector<NetnsCommand> c;
  for (const NetnsAz& a : plan.azs) {
    for (const NetnsAz& other : plan.azs) {
      if (other.az == a.az) continue;
      for (const std::string& address : other.addresses) {
        c.push_back({"ip", "netns", "exec", a.ns, "iptables", "-w", "-t", "mangle", "-A",
                     "POSTROUTING", "-o", kDevice, "-d", address + "/32", "-j", "NFQUEUE",
                     "--queue-num", std::to_string(kNetnsShaperQueue), "--queue-bypass"});
      }
    }
  }
  return c;
}

std::vector<NetnsCommand> TeardownCommands(const NetnsPlan& plan) {
  // The root's veth first: it would go with the bridge namespace, but the
  // kernel destroys a namespace's devices asynchronously, after `ip netns
  // del` returns.
  std::vector<NetnsCommand> c = {{"ip", "link", "del", plan.host_interface}};
  for (const std::string& ns : plan.Namespaces()) c.push_back({"ip", "netns", "del", ns});
  return c;
}

NetnsCommand CutCommand(const NetnsAz& from, const std::vector<std::string>& to_addresses) {
  if (to_addresses.empty()) return ClearCutCommand(from);
  return Tc(from, {"filter", "replace", "dev", kDevice, "parent", "1:", "protocol", "all", "prio",
                   "1", "handle", "1", "bpf", "bytecode", DropProgram(to_addresses), "da"});
}

NetnsCommand ClearCutCommand(const NetnsAz& from) {
  return Tc(from, {"filter", "del", "dev", kDevice, "parent", "1:", "prio", "1"});
}

NetnsCommand QdiscStatsCommand(const NetnsAz& az) {
  return Tc(az, {"-s", "qdisc", "show", "dev", kDevice});
}

std::optional<uint64_t> ParseDroppedPackets(const std::string& tc_output) {
  // qdisc htb 1: root ...\n Sent 558 bytes 7 pkt (dropped 1, overlimits 0 ...
  const size_t root = tc_output.find("qdisc htb 1: root");
  if (root == std::string::npos) return std::nullopt;
  const std::string key = "(dropped ";
  const size_t at = tc_output.find(key, root);
  if (at == std::string::npos) return std::nullopt;
  uint64_t dropped = 0;
  const char* first = tc_output.data() + at + key.size();
  auto [end, ec] = std::from_chars(first, tc_output.data() + tc_output.size(), dropped);
  if (ec != std::errc() || end == first) return std::nullopt;
  return dropped;
}

std::string DropProgram(const std::vector<std::string>& addresses) {
  // 0: ldh [12]             EtherType
  // 1: jeq #0x800, 2, PASS  IPv4?
  // 2: ld [30]              IPv4 destination (14-byte Ethernet header + 16)
  // 3+i: jeq #ADDR_i, SHOT, next
  // PASS: ret #-1           TC_ACT_UNSPEC: the next filter decides
  // SHOT: ret #2            TC_ACT_SHOT: dropped
  const size_t n = addresses.size();
  std::ostringstream p;
  p << (n + 5) << ",40 0 0 12,21 0 " << (n + 1) << " 2048,32 0 0 30";
  for (size_t i = 0; i < n; ++i) {
    const std::optional<uint32_t> a = ParseQuad(addresses[i]);
    p << ",21 " << (n - i) << " 0 " << a.value_or(0);
  }
  p << ",6 0 0 4294967295,6 0 0 2";
  return p.str();
}

std::optional<int> RunPidOfNamespace(const std::string& name) {
  return PidAfter(name, kNetnsPrefix, /*dash_follows=*/true);
}

std::optional<int> RunPidOfInterface(const std::string& name) {
  return PidAfter(name, kNetnsHostInterfacePrefix, /*dash_follows=*/false);
}

bool SubnetInUse(uint32_t subnet_index, const std::string& route_output) {
  const uint32_t lo = kSubnetBase + (subnet_index << 8);
  const uint32_t hi = lo + 255;
  std::istringstream lines(route_output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string word;
    words >> word;
    static const char* kTypes[] = {"local", "broadcast", "unicast", "blackhole", "unreachable",
                                   "prohibit", "multicast", "anycast", "throw", "nat"};
    if (std::any_of(std::begin(kTypes), std::end(kTypes), [&](const char* t) { return word == t; })) {
      words >> word;
    }
    if (word.empty() || word == "default") continue;
    const size_t slash = word.find('/');
    const std::optional<uint32_t> base = ParseQuad(word.substr(0, slash));
    if (!base) continue;
    int length = 32;
    if (slash != std::string::npos) {
      std::from_chars(word.data() + slash + 1, word.data() + word.size(), length);
    }
    if (length < 0 || length > 32) continue;
    const uint32_t mask = length == 0 ? 0 : ~uint32_t{0} << (32 - length);
    const uint32_t first = *base & mask;
    const uint32_t last = first | ~mask;
    if (first <= hi && lo <= last) return true;
  }
  return false;
}

}  // namespace tessera::experiment
