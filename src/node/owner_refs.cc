#include "node/owner_refs.h"

#include <algorithm>
#include <chrono>

#include "common/limits.h"
#include "common/wait_for.h"
#include "node/s3_blob_refs.h"

namespace tessera::node {
namespace {

constexpr const char* kS3Table = "_s3";
constexpr std::chrono::milliseconds kRpcTimeout{5'000};
constexpr std::chrono::milliseconds kStepWait{30'000};

}  // namespace

Result<std::string> CallPeerSync(rpc::ChannelPool& pool, uint32_t peer, const std::string& method,
                                 std::string payload) {
  auto channel = pool.Get(peer);
  if (!channel.ok()) return channel.status();
  auto reply = WaitFor<Result<std::string>>(kStepWait, [&](auto finish) {
    const Status accepted = (*channel)->Call(method, std::move(payload), kRpcTimeout, finish);
    if (!accepted.ok()) finish(accepted);
  });
  if (!reply) return Status::Timeout(method + " to " + std::to_string(peer) + " did not answer");
  return std::move(*reply);
}

const pb::PartitionDescriptor* PartitionOfOwner(const std::vector<pb::PartitionDescriptor>& partitions,
                                                const std::string& owner) {
  const std::string first_record = owner + '\0';
  for (const pb::PartitionDescriptor& p : partitions) {
    if (p.start_key() <= first_record && (p.end_key().empty() || first_record < p.end_key())) {
      return &p;
    }
  }
  return nullptr;
}

RoutedOwnerRefs::RoutedOwnerRefs(uint32_t self_id, ReplicationHost& replication,
                                 rpc::ChannelPool& pool, std::vector<uint32_t> meta_ids)
    : self_id_(self_id), replication_(replication), pool_(pool), meta_ids_(std::move(meta_ids)) {}

Status RoutedOwnerRefs::Refresh() {
  failed_nodes_.clear();
  partitions_.reset();
  if (meta_ids_.empty()) return Status::Unavailable("no metadata replica known");
  const uint32_t meta = meta_ids_[refreshes_++ % meta_ids_.size()];
  auto tables = CallPeerSync(pool_, meta, "meta.tables", pb::TablesRequest().SerializeAsString());
  if (!tables.ok()) return tables.status();
  pb::TablesResponse map;
  if (!map.ParseFromString(*tables)) return Status::Corruption("unparseable meta.tables answer");
  partitions_.emplace();
  for (const pb::PartitionDescriptor& p : map.partitions()) {
    if (p.table() == kS3Table) partitions_->push_back(p);
  }
  return Status::Ok();
}

Result<std::set<std::string>> RoutedOwnerRefs::Referenced(const std::string& owner,
                                                          const std::vector<std::string>& blob_ids) {
  if (!partitions_) return Status::Unavailable("no partition map");
  const pb::PartitionDescriptor* partition = PartitionOfOwner(*partitions_, owner);
  if (!partition) return Status::Unavailable("no _s3 partition holds the owner");
  std::set<std::string> referenced;
  for (size_t begin = 0; begin < blob_ids.size(); begin += limits::kBlobRefsIdsMax) {
    const size_t end = std::min(blob_ids.size(), begin + limits::kBlobRefsIdsMax);
    pb::S3BlobRefsRequest request;
    request.set_group_id(partition->group_id());
    request.set_owner(owner);
    for (size_t i = begin; i < end; ++i) request.add_blob_ids(blob_ids[i]);
    auto chunk = AskPartition(*partition, request);
    if (!chunk.ok()) return chunk.status();
    referenced.merge(*chunk);
  }
  return referenced;
}

// Asks the partition's leader (trying its replicas, the hinted leader
// first, following NotLeader hints).
Result<std::set<std::string>> RoutedOwnerRefs::AskPartition(const pb::PartitionDescriptor& partition,
                                                            const pb::S3BlobRefsRequest& request) {
  std::vector<uint32_t> order;
  if (partition.leader_hint() != 0) order.push_back(partition.leader_hint());
  for (const pb::ReplicaPlacement& r : partition.replicas()) order.push_back(r.node_id());
  std::set<uint32_t> tried;
  Status last = Status::Unavailable("no replica of group " + std::to_string(partition.group_id()));
  for (size_t i = 0; i < order.size() && tried.size() < order.size(); ++i) {
    const uint32_t node = order[i];
    if (!tried.insert(node).second || failed_nodes_.count(node)) continue;
    Result<pb::S3BlobRefsResponse> answer = Ask(node, request);
    if (answer.ok()) return std::set<std::string>(answer->referenced().begin(), answer->referenced().end());
    last = answer.status();
    if (last.code() == StatusCode::kNotLeader) {
      if (last.leader_hint() != 0) order.push_back(last.leader_hint());
    } else if (last.code() == StatusCode::kUnavailable || last.code() == StatusCode::kTimeout) {
      failed_nodes_.insert(node);
    } else if (last.code() == StatusCode::kWrongPartition) {
      return last;  // the map is stale: asked again after the next Refresh
    }
  }
  return last;
}

Result<pb::S3BlobRefsResponse> RoutedOwnerRefs::Ask(uint32_t node, const pb::S3BlobRefsRequest& request) {
  if (node == self_id_) {
    auto local = WaitFor<Result<pb::S3BlobRefsResponse>>(kStepWait, [&](auto finish) {
      QueryBlobRefs(replication_, request, finish);
    });
    if (!local) return Status::Timeout("local s3.blob_refs did not answer");
    return std::move(*local);
  }
  auto reply = CallPeerSync(pool_, node, "s3.blob_refs", request.SerializeAsString());
  if (!reply.ok()) return reply.status();
  pb::S3BlobRefsResponse response;
  if (!response.ParseFromString(*reply)) return Status::Corruption("unparseable s3.blob_refs answer");
  return response;
}

}  // namespace tessera::node
