#include "cli/cluster_status.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <map>
#include <sstream>

#include "cli/router_command.h"
#include "router/token.h"
#include "tessera/cluster_rpc.pb.h"
#include "tessera/cluster_status.pb.h"

namespace tessera::cli {
namespace {

using cluster::ProcessEntry;
using cluster::ProcessRole;
using std::chrono::milliseconds;

constexpr milliseconds kRpcTimeout{2000};

// "running", "paused" (SIGSTOP), or "down".
std::string ProcessState(ClusterSession& s, const ProcessEntry& e) {
  auto pid = s.supervisor().LivePid(e.name);
  if (!pid.ok()) return "down";
  std::ifstream stat("/proc/" + std::to_string(*pid) + "/stat");
  std::string pid_field, comm, state;
  stat >> pid_field >> comm >> state;
  return state == "T" ? "paused" : "running";
}

Result<pb::TablesResponse> Tables(ClusterSession& s) {
  auto client = s.client();
  if (!client.ok()) return client.status();
  auto raw = (*client)->CallAny(ProcessRole::kMeta, "meta.tables",
                                pb::TablesRequest().SerializeAsString(), kRpcTimeout);
  if (!raw.ok()) return raw.status();
  pb::TablesResponse tables;
  if (!tables.ParseFromString(*raw)) return Status::Corruption("bad meta.tables answer");
  return tables;
}

// group id -> node id -> that replica's status, from every reachable node.
std::map<uint64_t, std::map<uint32_t, pb::GroupStatusProto>> GroupStatuses(ClusterSession& s) {
  std::map<uint64_t, std::map<uint32_t, pb::GroupStatusProto>> out;
  auto client = s.client();
  if (!client.ok()) return out;
  for (const ProcessEntry& e : s.table().OfRole(ProcessRole::kNode)) {
    auto raw = (*client)->Call(e.id, "admin.status", pb::StatusRequest().SerializeAsString(),
                               milliseconds(500));
    pb::NodeStatus status;
    if (!raw.ok() || !status.ParseFromString(*raw)) continue;
    for (const auto& g : status.groups()) out[g.group_id()][e.id] = g;
  }
  return out;
}

std::string Printable(const std::string& key) {
  if (key.empty()) return "";
  std::ostringstream o;
  for (unsigned char c : key) {
    if (c >= 0x21 && c < 0x7F) o << c;
    else o << "\\x" << std::hex << std::setw(2) << std::setfill('0') << int(c) << std::dec;
  }
  return o.str();
}

}  // namespace

Status AllPartitionsLed(ClusterSession& s) {
  auto tables = Tables(s);
  if (!tables.ok()) return tables.status();
  if (tables->partitions_size() == 0) return Status::Unavailable("no partitions yet");
  auto statuses = GroupStatuses(s);
  for (const auto& p : tables->partitions()) {
    bool led = false;
    for (const auto& [node, g] : statuses[p.group_id()]) led = led || g.holds_lease();
    if (!led) return Status::Unavailable("group " + std::to_string(p.group_id()) + " has no leader");
  }
  return Status::Ok();
}

namespace {

// Every fact PrintStatus shows, gathered once.
pb::ClusterStatusReport GatherStatus(ClusterSession& s) {
  pb::ClusterStatusReport report;
  for (const ProcessEntry& e : s.table().all()) {
    pb::ProcessStatusLine* p = report.add_processes();
    // Autoadmin instances serve only HTTP (GET /status).
    const uint32_t port = e.role == ProcessRole::kAutoadmin ? e.http_port : e.peer_port;
    p->set_name(e.name);
    p->set_id(e.id);
    p->set_role(cluster::ProcessRoleName(e.role));
    p->set_az(e.az);
    p->set_endpoint(e.host + ":" + std::to_string(port));
    p->set_state(ProcessState(s, e));
  }
  auto tables = Tables(s);
  if (!tables.ok()) {
    report.set_partitions_error(tables.status().ToString());
    return report;
  }
  auto statuses = GroupStatuses(s);
  for (const auto& d : tables->partitions()) {
    const auto& replicas = statuses[d.group_id()];
    uint64_t max_applied = 0;
    bool changing = false;
    for (const auto& [node, g] : replicas) {
      max_applied = std::max(max_applied, g.applied());
      changing = changing || g.membership_pending();
    }
    pb::PartitionStatus* p = report.add_partitions();
    p->set_table(d.table());
    p->set_start_key(d.start_key());
    p->set_end_key(d.end_key());
    p->set_group(d.group_id());
    p->set_epoch(d.epoch());
    p->set_changing(changing);
    for (const auto& r : d.replicas()) {
      pb::ReplicaStatusLine* line = p->add_replicas();
      auto name = s.table().ById(r.node_id());
      line->set_name(name ? name->name : std::to_string(r.node_id()));
      line->set_node_id(r.node_id());
      line->set_az(r.az());
      line->set_learner(r.role() == pb::REPLICA_LEARNER);
      line->set_log_only(r.log_only());
      auto it = replicas.find(r.node_id());
      if (it == replicas.end()) continue;
      line->set_reachable(true);
      line->set_role(it->second.role());
      line->set_leader(it->second.holds_lease());
      line->set_applied(it->second.applied());
      line->set_lag(max_applied - it->second.applied());
      line->set_load_rps(it->second.load_rps());
      line->set_state_keys(it->second.state_keys());
    }
  }
  return report;
}

}  // namespace

bool PrintStatusJson(ClusterSession& s, std::ostream& out) {
  const pb::ClusterStatusReport report = GatherStatus(s);
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(report, &json, options).ok()) return false;
  out << json << "\n";
  return report.partitions_error().empty();
}

bool PrintStatus(ClusterSession& s, std::ostream& out) {
  const pb::ClusterStatusReport report = GatherStatus(s);
  out << "\nprocesses\n";
  out << "  " << std::left << std::setw(15) << "name" << std::setw(11) << "role" << std::setw(6)
      << "az" << std::setw(22) << "endpoint" << "state\n";
  for (const pb::ProcessStatusLine& p : report.processes()) {
    out << "  " << std::setw(15) << p.name() << std::setw(11) << p.role() << std::setw(6) << p.az()
        << std::setw(22) << p.endpoint() << p.state() << "\n";
  }
  if (!report.partitions_error().empty()) {
    out << "\npartitions: metadata service unreachable (" << report.partitions_error() << ")\n";
    return false;
  }
  out << "\npartitions (* = leader holding the lease; [learner] = a replica being added; [log] =\n"
         "a log replica, standing in for a lost voter until its full replacement joins)\n";
  for (const pb::PartitionStatus& p : report.partitions()) {
    out << "  " << p.table() << " [" << Printable(p.start_key()) << ", "
        << (p.end_key().empty() ? "end" : Printable(p.end_key())) << ") group " << p.group()
        << ":";
    for (const pb::ReplicaStatusLine& r : p.replicas()) {
      out << "  " << r.name() << (r.learner() ? "[learner]" : "") << (r.log_only() ? "[log]" : "");
      if (!r.reachable()) {
        out << "(unreachable)";
        continue;
      }
      out << (r.leader() ? "*" : "") << " applied " << r.applied() << " lag " << r.lag();
      if (r.load_rps() > 0) out << " load " << r.load_rps() << "/s";
    }
    if (p.changing()) out << "  [membership change in progress]";
    out << "\n";
  }
  return true;
}

void PrintEndpoints(ClusterSession& s, std::ostream& out) {
  out << "\nendpoints\n";
  for (const ProcessEntry& r : s.table().OfRole(ProcessRole::kRouter)) {
    out << "  KV HTTP API  http://" << r.host << ":" << r.http_port << "/kv/{table}/{key}\n";
    if (r.http_tls_port != 0) {
      out << "  KV HTTPS     https://localhost:" << r.http_tls_port << "/kv/{table}/{key}  (trust "
          << s.dir() << "/tls/ca.pem)\n";
    }
    out << "  KV native    " << r.host << ":" << r.peer_port << "\n";
    if (r.kv_tls_port != 0) {
      out << "  KV native TLS " << r.host << ":" << r.kv_tls_port
          << "  (KvClientOptions::tls_ca_file = " << s.dir() << "/tls/ca.pem)\n";
    }
    if (r.s3_port != 0) out << "  S3 (HTTP)    http://" << r.host << ":" << r.s3_port << "\n";
    if (r.s3_tls_port != 0) {
      out << "  S3 (HTTPS)   https://localhost:" << r.s3_tls_port << "  (trust " << s.dir()
          << "/tls/ca.pem: AWS_CA_BUNDLE or --ca-bundle)\n";
    }
    if (r.s3_port != 0 || r.s3_tls_port != 0) {
      out << "  S3 base domain " << router::DefaultS3BaseDomain(s.layout().router_settings())
          << "  (virtual-hosted style: BUCKET.<base domain>:PORT; any other host: path style)\n";
    }
  }
  out << "  cluster directory " << s.dir() << " (logs in logs/, credentials in credentials)\n";
  auto credentials = router::LoadCredentials(s.dir() + "/credentials");
  if (credentials.ok() && credentials->size() > 0) {
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    const router::Credential first = credentials->First();
    out << "\ncredentials\n  access key " << first.access_key << "\n  secret key "
        << first.secret_key << "\n  bearer token (24 h) " << router::IssueToken(first, now + 86400)
        << "\n  more tokens: tessera kv token --dir " << s.dir() << "\n";
  }
  out << "\ntry: tessera kv put --dir " << s.dir() << " kv hello world\n";
  for (const ProcessEntry& r : s.table().OfRole(ProcessRole::kRouter)) {
    if (r.s3_port == 0) continue;
    out << "     AWS_ACCESS_KEY_ID=<access key> AWS_SECRET_ACCESS_KEY=<secret key> "
           "aws --endpoint-url http://"
        << r.host << ":" << r.s3_port << " s3 mb s3://my-bucket\n"
        << "S3 clients: tessera s3 client-config aws|s3cmd|rclone|boto3 [--https] [--user NAME] "
           "--dir "
        << s.dir() << "\n            prints a configuration the client takes as is (path style, "
                      "SigV4, region, CA bundle)\n";
    break;
  }
}

namespace {

std::string FaultPath(ClusterSession& s, const std::string& name) {
  return s.dir() + "/faults/" + name + ".textproto";
}

pb::FaultRules LoadFaults(ClusterSession& s, const std::string& name) {
  pb::FaultRules rules;
  std::ifstream in(FaultPath(s, name));
  std::stringstream text;
  text << in.rdbuf();
  google::protobuf::TextFormat::ParseFromString(text.str(), &rules);
  return rules;
}

// Sends the whole rule set (replace) and records it for the next action.
Status ApplyFaults(ClusterSession& s, const ProcessEntry& e, pb::FaultRules rules) {
  rules.set_replace(true);
  std::filesystem::create_directories(s.dir() + "/faults");
  std::string text;
  google::protobuf::TextFormat::PrintToString(rules, &text);
  std::ofstream(FaultPath(s, e.name)) << text;
  auto client = s.client();
  if (!client.ok()) return client.status();
  return (*client)->Call(e.id, "admin.faults", rules.SerializeAsString(), kRpcTimeout).status();
}

void SetDrop(pb::FaultRules& rules, uint32_t peer) {
  for (auto& p : *rules.mutable_peers()) {
    if (p.peer_id() == peer) {
      p.set_drop_probability(1.0);
      return;
    }
  }
  auto* p = rules.add_peers();
  p->set_peer_id(peer);
  p->set_drop_probability(1.0);
}

}  // namespace

int PrintDigests(ClusterSession& s, const ClusterCommandArgs& args, std::ostream& out,
                 std::ostream& err) {
  auto client = s.client();
  if (!client.ok()) {
    err << "tessera cluster digest: " << client.status().ToString() << "\n";
    return 1;
  }
  int rc = 0;
  for (const std::string& t : args.targets) {
    const std::vector<ProcessEntry> entries = s.Resolve(t);
    if (entries.empty()) {
      err << "unknown process or AZ: " << t << "\n";
      rc = 2;
    }
    for (const ProcessEntry& e : entries) {
      if (e.role != ProcessRole::kNode) continue;
      // A scan of every group's whole state: allowed its time.
      auto digest = (*client)->Call(e.id, "admin.state_digest", "", std::chrono::seconds(60));
      if (!digest.ok()) {
        err << e.name << ": " << digest.status().ToString() << "\n";
        rc = 1;
        continue;
      }
      std::istringstream lines(*digest);
      for (std::string line; std::getline(lines, line);) out << e.name << " " << line << "\n";
    }
  }
  return rc;
}

namespace {

// The first error of a fault action, naming the process; every process is
// tried.
class FaultReport {
 public:
  explicit FaultReport(std::ostream& out) : out_(out) {}
  void Add(const ProcessEntry& e, const Status& st, const std::string& what) {
    if (st.ok()) {
      out_ << e.name << ": " << what << "\n";
    } else if (first_.ok()) {
      first_ = Status(st.code(), e.name + ": " + st.ToString());
    }
  }
  Status status() const { return first_; }

 private:
  std::ostream& out_;
  Status first_;
};

}  // namespace

Status HealAll(ClusterSession& s, std::ostream& out) {
  FaultReport report(out);
  for (const ProcessEntry& e : s.table().all()) {
    if (!cluster::ServesRpc(e.role)) continue;
    report.Add(e, ApplyFaults(s, e, pb::FaultRules()), "healed");
  }
  return report.status();
}

namespace {

// Changes the per-process fault rules (disk knobs, clock faults) of every
// process `target` names that serves the internal RPC (`change` edits its
// rules in force), reporting `what` per process.
Status ChangeDiskFaults(ClusterSession& s, const std::string& target,
                        const std::function<void(pb::FaultRules&)>& change, const std::string& what,
                        std::ostream& out) {
  const std::vector<ProcessEntry> entries = s.Resolve(target);
  if (entries.empty()) return Status::InvalidArgument("unknown process or AZ: " + target);
  FaultReport report(out);
  for (const ProcessEntry& e : entries) {
    if (!cluster::ServesRpc(e.role)) continue;
    pb::FaultRules rules = LoadFaults(s, e.name);
    change(rules);
    report.Add(e, ApplyFaults(s, e, rules), what);
  }
  return report.status();
}

}  // namespace

Status SlowDisk(ClusterSession& s, const std::string& target, uint32_t slow_ms, std::ostream& out) {
  return ChangeDiskFaults(
      s, target, [slow_ms](pb::FaultRules& rules) { rules.set_fsync_delay_ms(slow_ms); },
      "fsync delayed by " + std::to_string(slow_ms) + " ms", out);
}

Status FailWrites(ClusterSession& s, const std::string& target, bool fail, std::ostream& out) {
  return ChangeDiskFaults(
      s, target, [fail](pb::FaultRules& rules) { rules.set_fail_writes(fail); },
      fail ? "synced writes fail" : "synced writes succeed", out);
}

Status SetClock(ClusterSession& s, const std::string& target, std::optional<int64_t> offset_ms,
                std::optional<int32_t> skew_ppm, std::ostream& out) {
  const std::vector<ProcessEntry> entries = s.Resolve(target);
  if (!entries.empty() && std::none_of(entries.begin(), entries.end(), [](const ProcessEntry& e) {
        return cluster::ServesRpc(e.role);
      })) {
    return Status::InvalidArgument(target + ": only storage nodes and meta replicas take clock faults "
                                   "(routers and autoadmin processes serve no admin.faults)");
  }
  return ChangeDiskFaults(
      s, target,
      [offset_ms, skew_ppm](pb::FaultRules& rules) {
        if (offset_ms) rules.set_clock_offset_ms(*offset_ms);
        if (skew_ppm) rules.set_clock_skew_ppm(*skew_ppm);
      },
      (offset_ms ? "wall clock offset " + std::to_string(*offset_ms) + " ms" : std::string()) +
          (offset_ms && skew_ppm ? ", " : "") +
          (skew_ppm ? "monotonic skew " + std::to_string(*skew_ppm) + " ppm" : std::string()),
      out);
}

Status PartitionSides(ClusterSession& s, const std::string& a, const std::string& b, bool one_way,
                      std::ostream& out) {
  auto side_a = s.Resolve(a), side_b = s.Resolve(b);
  if (side_a.empty() || side_b.empty()) {
    return Status::InvalidArgument("unknown process or AZ: " + (side_a.empty() ? a : b));
  }
  FaultReport report(out);
  auto cut = [&](const std::vector<ProcessEntry>& from, const std::vector<ProcessEntry>& to,
                 const std::string& to_label) {
    for (const ProcessEntry& e : from) {
      if (!cluster::ServesRpc(e.role)) continue;
      pb::FaultRules rules = LoadFaults(s, e.name);
      // Routers take no fault rules and talk to every node (docs/router.md):
      // cutting only their inbound side would drop the answers to requests
      // that still arrive, turning every write into "outcome unknown".
      for (const ProcessEntry& peer : to) {
        if (cluster::ServesRpc(peer.role)) SetDrop(rules, peer.id);
      }
      report.Add(e, ApplyFaults(s, e, rules), "drops everything to " + to_label);
    }
  };
  cut(side_a, side_b, b);
  if (!one_way) cut(side_b, side_a, a);
  return report.status();
}

Result<std::vector<LedPartition>> PartitionLeaders(ClusterSession& s) {
  auto tables = Tables(s);
  if (!tables.ok()) return tables.status();
  auto statuses = GroupStatuses(s);
  std::vector<LedPartition> out;
  for (const auto& p : tables->partitions()) {
    LedPartition& led = out.emplace_back();
    led.partition = p;
    for (const auto& [node, g] : statuses[p.group_id()]) {
      if (g.holds_lease()) led.leader_node_id = node;
    }
  }
  return out;
}

int RunFaultAction(ClusterSession& s, const ClusterCommandArgs& args, std::ostream& out,
                   std::ostream& err) {
  Status st;
  if (args.action == "heal") {
    st = HealAll(s, out);
  } else if (args.action == "slow-disk") {
    for (const std::string& t : args.targets) {
      Status one = SlowDisk(s, t, args.slow_ms, out);
      if (st.ok()) st = one;
    }
  } else if (args.action == "full-disk") {
    for (const std::string& t : args.targets) {
      Status one = FailWrites(s, t, /*fail=*/true, out);
      if (st.ok()) st = one;
    }
  } else if (args.action == "clock") {
    for (const std::string& t : args.targets) {
      Status one = SetClock(s, t, args.clock_offset_ms, args.clock_skew_ppm, out);
      if (st.ok()) st = one;
    }
  } else if (args.targets.size() != 2) {
    err << "tessera cluster partition takes two process names or AZs\n";
    return 2;
  } else {
    st = PartitionSides(s, args.targets[0], args.targets[1], args.one_way, out);
  }
  if (st.ok()) return 0;
  err << st.ToString() << "\n";
  return st.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

}  // namespace tessera::cli
