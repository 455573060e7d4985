#include "cli/s3_check.h"

#include <chrono>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

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

struct Report {
  uint64_t copies[4] = {0, 0, 0, 0};  // referenced blobs with 0..3+ copies
  uint64_t unreferenced_files = 0;
  std::vector<std::string> problems;
  bool healthy = true;
};

Report Judge(const Findings& f, size_t copies_wanted) {
  Report r;
  const auto problem = [&r](std::string what) {
    r.healthy = false;
    if (r.problems.size() < limits::kS3CheckProblemsListedMax) r.problems.push_back(std::move(what));
  };
  for (const std::string& id : f.referenced) {
    auto it = f.holders.find(id);
    const size_t n = it == f.holders.end() ? 0 : it->second.size();
    ++r.copies[std::min<size_t>(n, 3)];
    if (n < copies_wanted) problem("blob " + id + " referenced, " + std::to_string(n) + " copies");
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

void Print(const Findings& f, const Report& r, bool json, std::ostream& out) {
  if (json) {
    out << "{\"referenced_blobs\":" << f.referenced.size() << ",\"copies\":{\"3\":" << r.copies[3]
        << ",\"2\":" << r.copies[2] << ",\"1\":" << r.copies[1] << ",\"0\":" << r.copies[0]
        << "},\"unreferenced_files\":" << r.unreferenced_files
        << ",\"pending_gc_records\":" << f.gc_records << ",\"pending_gc_blobs\":" << f.gc_blob_ids.size()
        << ",\"ok\":" << (r.healthy ? "true" : "false") << ",\"problems\":[";
    for (size_t i = 0; i < r.problems.size(); ++i) out << (i ? "," : "") << "\"" << r.problems[i] << "\"";
    out << "]}\n";
    return;
  }
  out << "referenced blobs " << f.referenced.size() << "\ncopies 3=" << r.copies[3] << " 2=" << r.copies[2]
      << " 1=" << r.copies[1] << " 0=" << r.copies[0] << "\nunreferenced blob files "
      << r.unreferenced_files << "\npending GC records " << f.gc_records << " (blobs "
      << f.gc_blob_ids.size() << ")\n";
  for (const std::string& p : r.problems) out << "problem: " << p << "\n";
  out << (r.healthy ? "OK" : "NOT OK") << "\n";
}

}  // namespace

Status RunS3Check(ClusterSession& session, bool json, std::ostream& out) {
  auto client = session.client();
  if (!client.ok()) return client.status();
  auto partitions = TablePartitions(**client, kS3Table);
  if (!partitions.ok()) return partitions.status();
  Findings findings;
  for (const pb::PartitionDescriptor& p : *partitions) {
    TESSERA_RETURN_IF_ERROR(ScanPartition(**client, p, findings));
  }
  const std::vector<cluster::ProcessEntry> nodes = session.table().OfRole(ProcessRole::kNode);
  for (const cluster::ProcessEntry& node : nodes) {
    TESSERA_RETURN_IF_ERROR(ListNode(**client, node.id, findings));
  }
  const Report report = Judge(findings, std::min<size_t>(3, nodes.size()));
  Print(findings, report, json, out);
  if (!report.healthy) return Status::Conflict("blob check failed");
  return Status::Ok();
}

}  // namespace tessera::cli
