// The network of a `--netns` experiment run, as data: the names of its
// namespaces and interfaces, the address every layout host maps to, and
// the ip/tc commands that build it, shape it, cut it and take it down.
// Pure: netns_network.h runs the commands. docs/experiments.md ("Real
// network mode") describes the wiring; docs/decisions.md why.
//
// Wiring of the run with process id PID:
//   tessera-PID-br   bridge br0; per AZ i a veth end "az<i>", and the end
//                    "host" of the root namespace's veth, all on br0
//   tessera-PID-AZ   one per AZ: lo, and eth0 (the veth to az<i>) holding
//                    the AZ's addresses; every process of the AZ runs here
//   root namespace   veth tsnPID holding SUBNET.1 (the workload clients and
//                    the cluster-control client reach the routers and
//                    every process through it)
//
// Address mapping (deterministic): SUBNET is the /24 number `subnet_index`
// (0..511) of 198.18.0.0/15 (RFC 2544's benchmarking range, routed
// nowhere), i.e. 198.(18 + index / 256).(index % 256).0/24. The h-th
// distinct host (in layout order: nodes, meta, routers, autoadmin) of the
// i-th AZ (layout order, from 0) maps to SUBNET.(16 * (i + 1) + h): at most
// kNetnsAzsMax AZs and kNetnsHostsPerAzMax hosts per AZ.
//
// Egress of each AZ's eth0 (tc, all inside the AZ's namespace):
//   root htb 1: (default class 1:1); class 1:2 leads to netem (delay,
//   jitter, loss) and u32 filters (prio 2) send every packet for another
//   AZ's address there: traffic inside an AZ and to the root namespace is
//   not delayed. On a kernel without netem, iptables rules (mangle
//   POSTROUTING, before tc) queue the same packets to the queue shaper
//   instead (queue_shaper.h). Cuts are one classic-BPF filter (prio 1, handle 1, direct
//   action) that drops (TC_ACT_SHOT) IPv4 packets to the addresses cut off;
//   the htb qdisc counts them in its "dropped" statistic.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "tessera/cluster.pb.h"
#include "tessera/experiment.pb.h"

namespace tessera::experiment {

inline constexpr uint32_t kNetnsSubnetsMax = 512;  // /24s in 198.18.0.0/15
inline constexpr size_t kNetnsAzsMax = 15;
inline constexpr size_t kNetnsHostsPerAzMax = 16;
inline constexpr double kNetnsDelayMsDefault = 1.0;
inline constexpr double kNetnsJitterMsDefault = 0.2;
inline constexpr double kNetnsDelayMsMax = 1000.0;
inline constexpr char kNetnsPrefix[] = "tessera-";          // namespaces: tessera-PID-...
inline constexpr char kNetnsHostInterfacePrefix[] = "tsn";  // root veth: tsnPID
// The NFQUEUE number each AZ's namespace sends its inter-AZ packets to when
// the queue shaper stands in for netem (queue numbers are per namespace).
inline constexpr uint16_t kNetnsShaperQueue = 0;

// The experiment file's `netns` block with its defaults filled in.
struct NetnsShaping {
  double delay_ms = kNetnsDelayMsDefault;
  double jitter_ms = kNetnsJitterMsDefault;
  double loss_percent = 0;
  bool any() const { return delay_ms > 0 || jitter_ms > 0 || loss_percent > 0; }
};

// InvalidArgument naming the field: delay_ms in 0..kNetnsDelayMsMax,
// jitter_ms in 0..delay_ms, loss_percent in 0..100.
Status ValidateNetnsNetwork(const pb::NetnsNetwork& netns);
NetnsShaping EffectiveShaping(const pb::NetnsNetwork& netns);

struct NetnsAz {
  std::string az;                      // the layout's AZ name
  std::string ns;                      // tessera-PID-AZ
  std::string bridge_port;             // az<i>, in the bridge namespace
  std::vector<std::string> hosts;      // the layout's hosts of this AZ
  std::vector<std::string> addresses;  // addresses[h] is what hosts[h] maps to
};

struct NetnsPlan {
  int pid = 0;
  std::string bridge_ns;       // tessera-PID-br
  std::string host_interface;  // tsnPID
  std::string host_address;    // SUBNET.1
  std::string subnet;          // SUBNET.0/24
  std::vector<NetnsAz> azs;    // layout order

  const NetnsAz* Az(const std::string& az) const;
  // Every namespace of the run, bridge last.
  std::vector<std::string> Namespaces() const;
};

// InvalidArgument when the layout has too many AZs or hosts for the
// mapping, or an AZ name that cannot be part of a namespace name
// ([A-Za-z0-9_-], 1..32 characters).
Result<NetnsPlan> PlanNetns(const pb::ClusterLayout& layout, int pid, uint32_t subnet_index);

// `layout` with every process's host replaced by its mapped address.
pb::ClusterLayout MapHosts(pb::ClusterLayout layout, const NetnsPlan& plan);

// One command line (argv[0] is "ip" or "tc", resolved by the runner).
using NetnsCommand = std::vector<std::string>;

// Namespaces, bridge, veth pairs, addresses, links up: in order.
std::vector<NetnsCommand> BuildCommands(const NetnsPlan& plan);
// The htb root, its classes and the u32 filters of every AZ (no netem).
std::vector<NetnsCommand> ClassifyCommands(const NetnsPlan& plan);
// The netem qdisc of each AZ's class 1:2; empty when !shaping.any().
std::vector<NetnsCommand> NetemCommands(const NetnsPlan& plan, const NetnsShaping& shaping);
// Where the kernel has no netem: in each AZ's namespace, iptables rules
// sending every packet for another AZ's address to NFQUEUE
// kNetnsShaperQueue (with --queue-bypass: packets pass when no shaper is
// bound), for queue_shaper.h to delay or drop.
std::vector<NetnsCommand> QueueShapingCommands(const NetnsPlan& plan);
// `ip link del` of the root's veth, then `ip netns del` of every namespace
// (deleting a namespace deletes its veth ends and bridge).
std::vector<NetnsCommand> TeardownCommands(const NetnsPlan& plan);

// The cut filter of AZ `from` dropping every IPv4 packet to `to_addresses`
// (replaces the one in force); empty `to_addresses`: ClearCutCommand.
NetnsCommand CutCommand(const NetnsAz& from, const std::vector<std::string>& to_addresses);
NetnsCommand ClearCutCommand(const NetnsAz& from);
// `tc -s qdisc show` of the AZ's eth0; ParseDroppedPackets reads it.
NetnsCommand QdiscStatsCommand(const NetnsAz& az);
// The "dropped N" of the root htb qdisc in `tc -s qdisc show` output;
// nullopt when absent.
std::optional<uint64_t> ParseDroppedPackets(const std::string& tc_output);

// Classic BPF (tc's "bytecode" syntax) for a direct-action filter on an
// Ethernet device: TC_ACT_SHOT for IPv4 packets whose destination is one of
// `addresses` (dotted quads), TC_ACT_UNSPEC (the next filter) otherwise.
std::string DropProgram(const std::vector<std::string>& addresses);

// The PID of a namespace named tessera-PID-..., or of a root interface
// tsnPID; nullopt for other names.
std::optional<int> RunPidOfNamespace(const std::string& name);
std::optional<int> RunPidOfInterface(const std::string& name);

// Whether subnet `subnet_index` overlaps a prefix of `ip -4 route show
// table all` output (any table, local routes included; default routes
// ignored): such a subnet is in use on the machine and must not be taken.
bool SubnetInUse(uint32_t subnet_index, const std::string& route_output);

}  // namespace tessera::experiment
