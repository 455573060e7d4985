#include "cli/s3_check.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "blob/blob_id.h"
#include "blob/blob_slot_map.h"
#include "cli/partition_calls.h"
#include "common/limits.h"
#include "tessera/blob.pb.h"
#include "tessera/cluster_rpc.pb.h"
#include "tessera/s3.pb.h"

namespace tessera::cli {
namespace {

using cluster::ProcessRole;

constexpr std::chrono::milliseconds kRpcTimeout{10'000};
constexpr uint32_t kScanRows = 1'000;
constexpr const char* kS3Table = "_s3";

struct Findings {
  std::set<std::string> referenced;
  uint64_t gc_records = 0;
  std::set<std::string> gc_blob_ids;
  std::map<std::string, std::set<uint32_t>> holders;  // blob id -> nodes holding a file
  std::vector<std::string> unlisted;  // nodes skipped: down, and holding no slot
};

Status ScanPartition(cluster::ClusterClient& client, const pb::PartitionDescriptor& p, Findings& f) {
  pb::S3BlobScanRequest request;
  request.set_group_id(p.group_id());
  request.set_rows(kScanRows);
  for (;;) {
    auto reply = CallPartition(client, p, "s3.blob_scan", request.SerializeAsString());
    if (!reply.ok()) return reply.status();
    pb::S3BlobScanResponse page;
    if (!page.ParseFromString(*reply)) return Status::Corruption("unparsable s3.blob_scan answer");
    f.referenced.insert(page.referenced().begin(), page.referenced().end());
    if (request.start_key().empty()) {
      f.gc_records += page.gc_records();
      f.gc_blob_ids.insert(page.gc_blob_ids().begin(), page.gc_blob_ids().end());
    }
    if (page.next_key().empty()) return Status::Ok();
    request.set_start_key(page.next_key());
  }
}

Status ListNode(cluster::ClusterClient& client, uint32_t node, Findings& f) {
  pb::BlobListRequest request;
  request.set_limit(static_cast<uint32_t>(limits::kBlobListItemsMax));
  for (;;) {
    auto reply = client.Call(node, "blob.list", request.SerializeAsString(), kRpcTimeout);
    if (!reply.ok()) {
      return Status(reply.status().code(), "node " + std::to_string(node) + ": " + reply.status().ToString());
    }
    pb::BlobListResponse page;
    if (!page.ParseFromString(*reply)) return Status::Corruption("unparsable blob.list answer");
    for (const pb::BlobListEntryProto& e : page.entries()) f.holders[e.blob_id()].insert(node);
    if (!page.more() || page.entries_size() == 0) return Status::Ok();
    request.set_after_blob_id(page.entries(page.entries_size() - 1).blob_id());
  }
}

// The slot map in force: the layout's, with the newest blob slot
// assignments any meta replica serves.
Result<blob::BlobSlotMap> CurrentSlotMap(ClusterSession& session, cluster::ClusterClient& client) {
  std::vector<blob::NodeRef> refs;
  for (const cluster::ProcessEntry& n : session.table().LayoutNodes()) refs.push_back({n.id, n.az});
  auto base = blob::BlobSlotMap::Build(std::move(refs));
  if (!base.ok()) return base.status();
  pb::BlobSlotAssignments newest;
  bool any = false;
  for (const cluster::ProcessEntry& m : session.table().OfRole(ProcessRole::kMeta)) {
    auto reply = client.Call(m.id, "meta.blob_slots", pb::BlobSlotsRequest().SerializeAsString(),
                             kRpcTimeout);
    pb::BlobSlotAssignments a;
    if (!reply.ok() || !a.ParseFromString(*reply)) continue;
    any = true;
    if (a.version() > newest.version()) newest = std::move(a);
  }
  if (!any) return Status::Unavailable("no metadata replica answered meta.blob_slots");
  return base->WithAssignments(newest);
}

S3CheckReport Judge(const Findings& f, const blob::BlobSlotMap& map) {
  S3CheckReport r;
  r.referenced_blobs = f.referenced.size();
  r.pending_gc_records = f.gc_records;
  r.pending_gc_blobs = f.gc_blob_ids.size();
  r.unlisted = f.unlisted;
  const auto problem = [&r](std::string what) {
    r.healthy = false;
    if (r.problems.size() < limits::kS3CheckProblemsListedMax) r.problems.push_back(std::move(what));
  };
  for (const std::string& id : f.referenced) {
    auto parsed = blob::BlobId::Parse(id);
    if (!parsed.ok()) {
      problem("referenced blob id '" + id + "' does not parse");
      continue;
    }
    const std::vector<uint32_t>& replicas = map.ReplicasOf(parsed->slot);
    auto it = f.holders.find(id);
    size_t n = 0, stray = 0;
    if (it != f.holders.end()) {
      for (uint32_t node : it->second) {
        (std::find(replicas.begin(), replicas.end(), node) != replicas.end() ? n : stray) += 1;
      }
    }
    ++r.copies[std::min<size_t>(n, 3)];
    r.stray_files += stray;
    if (n < replicas.size()) ++r.under_replicated;
    if (n < replicas.size()) problem("blob " + id + " referenced, " + std::to_string(n) + " copies");
    if (stray > 0) {
      problem("blob " + id + " has " + std::to_string(stray) +
              " files on nodes that no longer hold its slot");
    }
  }
  for (const auto& [id, nodes] : f.holders) {
    if (f.referenced.count(id)) continue;
    r.unreferenced_files += nodes.size();
    problem("blob " + id + " unreferenced, " + std::to_string(nodes.size()) + " files" +
            (f.gc_blob_ids.count(id) ? " (in a GC record)" : ""));
  }
  if (f.gc_records > 0) problem(std::to_string(f.gc_records) + " GC records pending");
  return r;
}

void Print(const S3CheckReport& r, bool json, std::ostream& out) {
  if (json) {
    out << "{\"referenced_blobs\":" << r.referenced_blobs << ",\"copies\":{\"3\":" << r.copies[3]
        << ",\"2\":" << r.copies[2] << ",\"1\":" << r.copies[1] << ",\"0\":" << r.copies[0]
        << "},\"stray_files\":" << r.stray_files << ",\"unreferenced_files\":" << r.unreferenced_files
        << ",\"pending_gc_records\":" << r.pending_gc_records << ",\"pending_gc_blobs\":" << r.pending_gc_blobs
        << ",\"unlisted_nodes\":[";
    for (size_t i = 0; i < r.unlisted.size(); ++i) out << (i ? "," : "") << "\"" << r.unlisted[i] << "\"";
    out << "],\"ok\":" << (r.healthy ? "true" : "false") << ",\"problems\":[";
    for (size_t i = 0; i < r.problems.size(); ++i) out << (i ? "," : "") << "\"" << r.problems[i] << "\"";
    out << "]}\n";
    return;
  }
  out << "referenced blobs " << r.referenced_blobs << "\ncopies 3=" << r.copies[3] << " 2=" << r.copies[2]
      << " 1=" << r.copies[1] << " 0=" << r.copies[0] << "\nstray blob files " << r.stray_files
      << "\nunreferenced blob files "
      << r.unreferenced_files << "\npending GC records " << r.pending_gc_records << " (blobs "
      << r.pending_gc_blobs << ")\n";
  for (const std::string& n : r.unlisted) {
    out << "not listed: " << n << " (holds no blob slot and does not answer)\n";
  }
  for (const std::string& p : r.problems) out << "problem: " << p << "\n";
  out << (r.healthy ? "OK" : "NOT OK") << "\n";
}

}  // namespace

Result<S3CheckReport> CheckS3Blobs(ClusterSession& session) {
  auto client = session.client();
  if (!client.ok()) return client.status();
  auto partitions = TablePartitions(**client, kS3Table);
  if (!partitions.ok()) return partitions.status();
  Findings findings;
  for (const pb::PartitionDescriptor& p : *partitions) {
    TESSERA_RETURN_IF_ERROR(ScanPartition(**client, p, findings));
  }
  auto map = CurrentSlotMap(session, **client);
  if (!map.ok()) return map.status();
  for (const cluster::ProcessEntry& node : session.table().OfRole(ProcessRole::kNode)) {
    const Status listed = ListNode(**client, node.id, findings);
    if (listed.ok()) continue;
    // A node that holds no slot any more (its slots moved off it) may be
    // gone for good: what it still has on disk is not the cluster's.
    const bool unreachable =
        listed.code() == StatusCode::kUnavailable || listed.code() == StatusCode::kTimeout;
    if (unreachable && map->SlotsOf(node.id).empty()) {
      findings.unlisted.push_back(node.name);
      continue;
    }
    return listed;
  }
  return Judge(findings, *map);
}

Status RunS3Check(ClusterSession& session, bool json, std::ostream& out) {
  auto report = CheckS3Blobs(session);
  if (!report.ok()) return report.status();
  Print(*report, json, out);
  if (!report->healthy) return Status::Conflict("blob check failed");
  return Status::Ok();
}

}  // namespace tessera::cli
