#include "cli/kv_partition_command.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <thread>

#include "cli/cluster_session.h"
#include "cli/partition_calls.h"
#include "common/quoted_key.h"
#include "meta/meta_keys.h"

namespace tessera::cli {
namespace {

using cluster::ProcessRole;
using std::chrono::milliseconds;

constexpr milliseconds kRpcTimeout{10'000};
constexpr milliseconds kPollEvery{250};

int Fail(std::ostream& err, const std::string& what, const Status& s) {
  err << "tessera kv " << what << ": " << s.ToString() << "\n";
  return s.code() == StatusCode::kInvalidArgument ? 2 : 3;
}

Result<std::vector<pb::PartitionDescriptor>> Sorted(cluster::ClusterClient& c, const std::string& table) {
  auto parts = TablePartitions(c, table);
  if (!parts.ok()) {
    if (parts.status().code() == StatusCode::kNotFound) {
      return Status::InvalidArgument("no table '" + table + "'");
    }
    return parts.status();
  }
  std::sort(parts->begin(), parts->end(), [](const auto& a, const auto& b) {
    return a.start_key() < b.start_key();
  });
  return parts;
}

// The parent (narrowed, later epoch) and the child once meta's map shows
// the split of `record`; empty while it does not.
std::vector<pb::PartitionDescriptor> Halves(const std::vector<pb::PartitionDescriptor>& parts,
                                            const pb::SplitRequestRecord& record,
                                            const std::string& old_end) {
  for (size_t i = 0; i < parts.size(); ++i) {
    const pb::PartitionDescriptor& p = parts[i];
    if (p.group_id() != record.group_id() || p.epoch() <= record.parent_epoch() ||
        p.end_key() == old_end || i + 1 >= parts.size()) {
      continue;
    }
    return {p, parts[i + 1]};
  }
  return {};
}

// Whether meta still holds the request or an intent for the group.
Result<bool> StillPending(cluster::ClusterClient& c, uint64_t group) {
  auto raw = c.CallAny(ProcessRole::kMeta, "meta.splits", pb::SplitsRequest().SerializeAsString(), kRpcTimeout);
  if (!raw.ok()) return raw.status();
  pb::SplitsResponse splits;
  if (!splits.ParseFromString(*raw)) return Status::Corruption("unparsable meta.splits answer");
  for (const auto& r : splits.requests()) {
    if (r.group_id() == group) return true;
  }
  for (const auto& i : splits.intents()) {
    if (i.parent().group_id() == group) return true;
  }
  return false;
}

int Wait(cluster::ClusterClient& c, const KvPartitionArgs& a, const pb::SplitRequestRecord& record,
         const std::string& old_end, std::ostream& out, std::ostream& err) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(a.timeout_s);
  bool gone_once = false;
  while (std::chrono::steady_clock::now() < deadline) {
    auto parts = Sorted(c, a.table);
    if (parts.ok()) {
      const auto halves = Halves(*parts, record, old_end);
      if (!halves.empty()) {
        out << PartitionLines(halves);
        return 0;
      }
      auto pending = StillPending(c, record.group_id());
      // Gone from meta with the map unchanged, twice (a lagging meta.tables
      // replica may not show a fresh commit yet): refused.
      if (pending.ok() && !*pending && gone_once) {
        err << "tessera kv partition split: the autoadmin refused the split of group "
            << record.group_id() << " (see `tessera autoadmin status`, \"split refusals\")\n";
        return 3;
      }
      gone_once = pending.ok() && !*pending;
    }
    std::this_thread::sleep_for(kPollEvery);
  }
  err << "tessera kv partition split: meta's map does not show the split of group " << record.group_id()
      << " after " << a.timeout_s << " s (is an autoadmin running? `tessera autoadmin status`)\n";
  return 3;
}

}  // namespace

std::string PartitionLines(const std::vector<pb::PartitionDescriptor>& partitions) {
  std::string out;
  for (const pb::PartitionDescriptor& p : partitions) {
    std::string replicas;
    for (const pb::ReplicaPlacement& r : p.replicas()) {
      replicas += (replicas.empty() ? "" : ",") + std::to_string(r.node_id());
    }
    out += "group " + std::to_string(p.group_id()) + " epoch " + std::to_string(p.epoch()) + " [" +
           QuotedKey(p.start_key()) + ", " + QuotedKey(p.end_key()) + ") replicas " + replicas + "\n";
  }
  return out;
}

int RunKvPartitionCommand(const KvPartitionArgs& a, std::ostream& out, std::ostream& err) {
  spdlog::set_level(spdlog::level::err);
  const std::string what = a.action == "split" ? "partition split" : "partitions";
  if (Status name = meta::ValidateTableName(a.table); !name.ok()) return Fail(err, what, name);
  if (a.action == "split" && a.auto_key == !a.key.empty()) {
    return Fail(err, what, Status::InvalidArgument("give exactly one of --key K and --auto"));
  }
  if (a.action == "split" && !a.auto_key && !a.in_key.empty()) {
    return Fail(err, what, Status::InvalidArgument("--in goes with --auto (--key names the partition)"));
  }
  auto session = ClusterSession::Open(a.layout_path, a.dir);
  if (!session.ok()) return Fail(err, what, session.status());
  auto client = (*session)->client();
  if (!client.ok()) return Fail(err, what, client.status());
  cluster::ClusterClient& c = **client;
  auto parts = Sorted(c, a.table);
  if (!parts.ok()) return Fail(err, what, parts.status());
  if (a.action != "split") {
    out << PartitionLines(*parts);
    return 0;
  }
  pb::RequestSplitRequest request;
  request.set_table(a.table);
  request.set_key(a.auto_key ? a.in_key : a.key);
  request.set_auto_key(a.auto_key);
  auto raw = c.CallAny(ProcessRole::kMeta, "meta.request_split", request.SerializeAsString(), kRpcTimeout);
  if (!raw.ok()) return Fail(err, what, raw.status());
  pb::SplitRequestRecord record;
  if (!record.ParseFromString(*raw)) return Fail(err, what, Status::Corruption("unparsable answer"));
  std::string old_end;
  for (const pb::PartitionDescriptor& p : *parts) {
    if (p.group_id() == record.group_id()) old_end = p.end_key();
  }
  if (a.no_wait) {
    out << "requested: group " << record.group_id() << " at "
        << (record.split_key().empty() ? std::string("a key its leader chooses") : QuotedKey(record.split_key()))
        << "\n";
    return 0;
  }
  return Wait(c, a, record, old_end, out, err);
}

}  // namespace tessera::cli
