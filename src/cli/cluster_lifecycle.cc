#include "cli/cluster_lifecycle.h"

#include <signal.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>

#include "cli/cluster_status.h"
#include "cli/router_command.h"
#include "cluster/cluster_pki.h"
#include "common/limits.h"
#include "meta/registry_keys.h"
#include "router/token.h"
#include "s3/model/s3_keys.h"
#include "tessera/cluster_rpc.pb.h"
#include "tessera/s3_registry.pb.h"

namespace tessera::cli {
namespace {

using cluster::ProcessEntry;
using cluster::ProcessRole;
using std::chrono::milliseconds;

constexpr milliseconds kRpcTimeout{2000};
constexpr int kStopGraceMs = 5000;

cluster::LaunchSpec SpecFor(const ClusterSession& s, const ProcessEntry& e) {
  // Settings come from the layout (router_settings, node_settings: D24),
  // so a relaunched process runs with the same ones.
  return {e.name,
          {cluster::SelfExecutable(), cluster::ProcessRoleName(e.role), "--layout", s.layout_path(),
           "--name", e.name, "--dir", s.dir()},
          s.NetnsPathOf(e.az)};
}

std::vector<ProcessEntry> LaunchOrder(const cluster::ProcessTable& table) {
  std::vector<ProcessEntry> order;
  for (ProcessRole role :
       {ProcessRole::kMeta, ProcessRole::kNode, ProcessRole::kGac, ProcessRole::kRouter,
        ProcessRole::kAutoadmin}) {
    for (const ProcessEntry& e : table.OfRole(role)) order.push_back(e);
  }
  return order;
}

Status LaunchAll(ClusterSession& s, std::ostream& out) {
  for (const ProcessEntry& e : LaunchOrder(s.table())) {
    if (s.supervisor().LivePid(e.name).ok()) continue;
    auto pid = s.supervisor().Launch(SpecFor(s, e));
    if (!pid.ok()) return pid.status();
    out << "started " << e.name << " (" << cluster::ProcessRoleName(e.role) << ", " << e.az
        << ", pid " << *pid << ")\n";
  }
  return Status::Ok();
}

// Retries `attempt` every 100 ms until it succeeds or `timeout` passes.
template <typename F>
Status WaitFor(F attempt, milliseconds timeout, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Status last = Status::Timeout(what);
  while (std::chrono::steady_clock::now() < deadline) {
    last = attempt();
    if (last.ok()) return last;
    std::this_thread::sleep_for(milliseconds(100));
  }
  return Status::Timeout(what + " (last: " + last.ToString() + ")");
}

// The table kv: `split_points` when given (checked by KvSplitPointsError),
// otherwise `partitions` even ranges.
Status CreateDefaultTable(ClusterSession& s, uint32_t partitions,
                          const std::vector<std::string>& split_points) {
  auto client = s.client();
  if (!client.ok()) return client.status();
  pb::CreateTableRequest req;
  req.set_name("kv");
  if (split_points.empty()) req.set_partitions(partitions);
  for (const std::string& p : split_points) req.add_split_points(p);
  return WaitFor(
      [&]() -> Status {
        return (*client)->CallAny(ProcessRole::kMeta, "meta.create_table", req.SerializeAsString(),
                                  kRpcTimeout).status();
      },
      milliseconds(60'000), "creating table kv");
}

// The S3 table: meta::kS3TablePartitions even ranges of the bucket ids,
// plus the --s3-split points. A table that exists with other split points
// (an earlier `up` with other --s3-split flags) is Conflict, answered at
// once: retrying cannot change it.
Status CreateS3Table(ClusterSession& s, const std::vector<std::string>& split_points) {
  auto client = s.client();
  if (!client.ok()) return client.status();
  pb::CreateTableRequest req;
  req.set_name(std::string(meta::kS3TableName));
  for (const std::string& p : split_points) req.add_split_points(p);
  Status conflict;
  Status st = WaitFor(
      [&]() -> Status {
        auto r = (*client)->CallAny(ProcessRole::kMeta, "meta.create_table",
                                    req.SerializeAsString(), kRpcTimeout);
        if (r.status().code() != StatusCode::kConflict) return r.status();
        conflict = r.status();
        return Status::Ok();
      },
      milliseconds(60'000), "creating table " + req.name());
  return st.ok() ? conflict : st;
}

// One --s3-split value: "BUCKET_ID:OBJECT_KEY" -> (id, key).
Result<std::pair<uint64_t, std::string>> ParseS3Split(const std::string& value) {
  const size_t colon = value.find(':');
  if (colon == std::string::npos) {
    return Status::InvalidArgument("--s3-split '" + value + "': expected BUCKET_ID:OBJECT_KEY");
  }
  uint64_t bucket_id = 0;
  const char* first = value.data();
  const char* last = value.data() + colon;
  auto [end, ec] = std::from_chars(first, last, bucket_id);
  if (colon == 0 || ec != std::errc() || end != last || bucket_id == 0) {
    return Status::InvalidArgument("--s3-split '" + value +
                                   "': BUCKET_ID must be a decimal integer in 1..2^64-1");
  }
  std::string key = value.substr(colon + 1);
  if (key.size() + 8 > limits::kMetaSplitPointBytesMax) {
    return Status::InvalidArgument("--s3-split '" + value + "': OBJECT_KEY is longer than " +
                                   std::to_string(limits::kMetaSplitPointBytesMax - 8) +
                                   " bytes");
  }
  return std::make_pair(bucket_id, std::move(key));
}

// S3 user "admin" with the credentials file's key pair, so the printed
// credentials sign S3 requests too. Idempotent across `up`s; Conflict (an
// admin with other keys, e.g. a replaced credentials file) is reported.
Status EnsureAdminUser(ClusterSession& s, const router::Credential& credential) {
  auto client = s.client();
  if (!client.ok()) return client.status();
  pb::CreateUserRequest req;
  req.set_name("admin");
  req.set_access_key(credential.access_key);
  req.set_secret_key(credential.secret_key);
  Status conflict;
  Status st = WaitFor(
      [&]() -> Status {
        auto r = (*client)->CallAny(ProcessRole::kMeta, "meta.create_user", req.SerializeAsString(),
                                    kRpcTimeout);
        if (r.status().code() != StatusCode::kConflict) return r.status();
        conflict = r.status();
        return Status::Ok();
      },
      milliseconds(30'000), "creating S3 user admin");
  return st.ok() ? conflict : st;
}

// The routers' certificate names: localhost, the S3 base domain and its
// one-label wildcard for virtual-hosted-style buckets (OpenSSL clients do
// not match a wildcard directly under a top-level label like *.localhost).
// The last `lines` lines of the file at `path` (at most its last 4 KiB).
std::string LogTail(const std::string& path, size_t lines) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 4096);
  in.seekg(from);
  std::string tail(static_cast<size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  std::vector<std::string_view> all;
  for (size_t at = 0; at < tail.size();) {
    const size_t nl = std::min(tail.find('\n', at), tail.size());
    if (nl > at) all.emplace_back(tail.data() + at, nl - at);
    at = nl + 1;
  }
  std::string out;
  for (size_t i = all.size() - std::min(all.size(), lines); i < all.size(); ++i) {
    out.append("  ").append(all[i]).append("\n");
  }
  return out;
}

Status EveryProcessRunning(ClusterSession& s) {
  for (const ProcessEntry& e : s.table().all()) {
    if (!s.supervisor().LivePid(e.name).ok()) {
      return Status::Unavailable(e.name + " is not running");
    }
  }
  return Status::Ok();
}

// Why a start-up failed, when the cause is visible from here: processes
// that exited (with the end of their logs) and a nearly full disk.
void ExplainStartFailure(ClusterSession& s, std::ostream& err) {
  for (const ProcessEntry& e : s.table().all()) {
    if (s.supervisor().LivePid(e.name).ok()) continue;
    err << e.name << " exited during start-up; the end of " << s.supervisor().LogPath(e.name)
        << ":\n" << LogTail(s.supervisor().LogPath(e.name), 5);
  }
  std::error_code ec;
  const std::filesystem::space_info space = std::filesystem::space(s.dir(), ec);
  if (!ec && space.available < limits::kClusterDiskFreeWarnBytes) {
    err << "only " << space.available / (1 << 20) << " MiB free on the disk of " << s.dir()
        << ": processes fail to write their data and logs\n";
  }
}

std::vector<std::string> S3CertificateNames(const ClusterSession& s) {
  const std::string domain = router::DefaultS3BaseDomain(s.layout().router_settings());
  return {"localhost", domain, "*." + domain};
}

}  // namespace

void StopAll(ClusterSession& s, std::ostream& out) {
  auto order = LaunchOrder(s.table());
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const bool running = s.supervisor().LivePid(it->name).ok();
    (void)s.supervisor().Stop(it->name, kStopGraceMs);
    if (running) out << "stopped " << it->name << "\n";
  }
}

Status StartCluster(ClusterSession& s, const UpSettings& given, std::ostream& out) {
  auto settings = ChooseUpSettings(s.dir(), given);
  if (!settings.ok()) return settings.status();
  auto s3_split_points = S3TableSplitPointsWith(settings->s3_splits);
  if (!s3_split_points.ok()) return s3_split_points.status();
  if (Status kv = CheckKvSplitPoints(settings->kv_splits); !kv.ok()) return kv;
  auto secret = cluster::EnsureClusterSecret(s.dir());
  if (!secret.ok()) return secret.status();
  auto credential = router::EnsureCredentialsFile(s.dir() + "/credentials");
  if (!credential.ok()) return credential.status();
  // The routers' HTTPS certificate and its CA (docs/http.md); the cluster
  // CA and a certificate per process for the internal RPC (docs/security.md).
  if (Status tls = cluster::EnsureHttpsCertificate(s.dir(), S3CertificateNames(s), {"127.0.0.1"});
      !tls.ok()) {
    return Status(tls.code(), "TLS certificate: " + tls.ToString());
  }
  if (Status pki = cluster::EnsureClusterPki(s.dir(), s.table()); !pki.ok()) {
    return Status(pki.code(), "cluster certificates: " + pki.ToString());
  }
  if (Status recorded = s.Record(*settings); !recorded.ok()) {
    return Status(recorded.code(),
                  "recording the layout in " + s.dir() + ": " + recorded.ToString());
  }
  out << cluster::DescribeLayout(s.layout()) << "layout: " << s.layout_path() << " (a copy of "
      << s.layout_source() << ")\ncluster directory: " << s.dir() << "\n\n";
  Status st = LaunchAll(s, out);
  if (st.ok()) st = CreateDefaultTable(s, settings->partitions, settings->kv_splits);
  if (st.ok()) st = CreateS3Table(s, *s3_split_points);
  if (st.ok()) st = EnsureAdminUser(s, *credential);
  if (st.ok()) st = WaitFor([&] { return AllPartitionsLed(s); }, milliseconds(60'000),
                            "every partition electing a leader");
  // Quorums hide a dead process (a router that could not bind its port, a
  // node whose disk is full): up succeeds only when every process runs.
  if (st.ok()) st = EveryProcessRunning(s);
  if (st.ok()) return st;
  std::ostringstream why;
  why << st.ToString() << "\nlogs: " << s.dir() << "/logs/\n";
  ExplainStartFailure(s, why);
  StopAll(s, out);
  // Not InvalidArgument even when a step said so: the settings were fine.
  return Status(st.code() == StatusCode::kInvalidArgument ? StatusCode::kUnavailable : st.code(),
                why.str());
}

Status SignalProcess(ClusterSession& s, const std::string& name, int signal) {
  return s.supervisor().Signal(name, signal);
}

Result<int> RestartProcess(ClusterSession& s, const std::string& name) {
  const std::optional<ProcessEntry> entry = s.table().ByName(name);
  if (!entry) return Status::InvalidArgument("no process named '" + name + "' in the layout");
  (void)s.supervisor().Stop(name, kStopGraceMs);
  auto pid = s.supervisor().Launch(SpecFor(s, *entry));
  if (!pid.ok()) return pid.status();
  return static_cast<int>(*pid);
}

Result<bool> EnsureRunning(ClusterSession& s, const std::string& name) {
  const std::optional<ProcessEntry> entry = s.table().ByName(name);
  if (!entry) return Status::InvalidArgument("no process named '" + name + "' in the layout");
  if (s.supervisor().LivePid(name).ok()) return false;
  auto pid = s.supervisor().Launch(SpecFor(s, *entry));
  if (!pid.ok()) return pid.status();
  return true;
}

Status CheckKvSplitPoints(const std::vector<std::string>& kv_splits) {
  if (kv_splits.size() + 1 > limits::kMetaPartitionsPerTableMax) {
    return Status::InvalidArgument("--kv-split: more than " +
                                   std::to_string(limits::kMetaPartitionsPerTableMax - 1) + " points");
  }
  for (size_t i = 0; i < kv_splits.size(); ++i) {
    if (kv_splits[i].empty() || kv_splits[i].size() > limits::kMetaSplitPointBytesMax) {
      return Status::InvalidArgument("--kv-split '" + kv_splits[i] + "': a key of 1.." +
                                     std::to_string(limits::kMetaSplitPointBytesMax) + " bytes");
    }
    if (i > 0 && !(kv_splits[i - 1] < kv_splits[i])) {
      return Status::InvalidArgument("--kv-split '" + kv_splits[i] +
                                     "': points must be strictly ascending");
    }
  }
  return Status::Ok();
}

Result<std::vector<std::string>> S3TableSplitPointsWith(const std::vector<std::string>& s3_splits) {
  std::vector<std::string> points = meta::S3TableSplitPoints(meta::kS3TablePartitions);
  for (const std::string& value : s3_splits) {
    auto split = ParseS3Split(value);
    if (!split.ok()) return split.status();
    const auto& [bucket_id, key] = *split;
    points.push_back(s3::model::BucketPrefix(bucket_id));
    if (bucket_id != UINT64_MAX) points.push_back(s3::model::BucketPrefix(bucket_id + 1));
    points.push_back(s3::model::ObjectPrefix(bucket_id, key));
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  if (points.size() + 1 > limits::kMetaPartitionsPerTableMax) {
    return Status::InvalidArgument("--s3-split: the S3 table would have more than " +
                                   std::to_string(limits::kMetaPartitionsPerTableMax) +
                                   " partitions");
  }
  return points;
}

}  // namespace tessera::cli
