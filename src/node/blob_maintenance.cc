#include "node/blob_maintenance.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>

#include "common/fault_clock.h"
#include "common/wait_for.h"
#include "node/s3_blob_refs.h"
#include "tessera/cluster_rpc.pb.h"
#include "tessera/s3.pb.h"

namespace tessera::node {
namespace {

constexpr const char* kS3Table = "_s3";
constexpr std::chrono::milliseconds kRpcTimeout{5'000};
constexpr std::chrono::milliseconds kStepWait{30'000};

// The wall clock with the process's injected offset (admin.faults
// clock_offset_ms), compared with blob files' mtimes.
int64_t NowMs() { return fault_clock::WallNowMs(); }

// One rpc to `peer`, waited for.
Result<std::string> CallPeer(rpc::ChannelPool& pool, uint32_t peer, const std::string& method,
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

// The `_s3` partition holding the records of `owner`.
const pb::PartitionDescriptor* PartitionOf(const std::vector<pb::PartitionDescriptor>& partitions,
                                           const std::string& owner) {
  const std::string first_record = owner + '\0';
  for (const pb::PartitionDescriptor& p : partitions) {
    if (p.start_key() <= first_record && (p.end_key().empty() || first_record < p.end_key())) {
      return &p;
    }
  }
  return nullptr;
}

}  // namespace

struct BlobMaintenance::Metrics {
  explicit Metrics(metrics::Registry& r)
      : scanned(r.GetCounter("tessera_blob_scanned_total", "Blob copies the sweeper examined")),
        orphans_deleted(r.GetCounter("tessera_blob_orphans_deleted_total",
                                     "Unreferenced blob copies the sweeper deleted")),
        repaired(r.GetCounter("tessera_blob_repaired_total",
                              "Missing or damaged blob copies restored on another replica")),
        repair_errors(r.GetCounter("tessera_blob_repair_errors_total",
                                   "Blob copies the repairer could not check or restore")),
        handed_off(r.GetCounter("tessera_blob_handed_off_total",
                                "Blob copies deleted here once the slot's new replicas held them")),
        legacy(r.GetCounter("tessera_blob_legacy_owner_total",
                            "Blob copies without an owner (format 1): never swept")),
        errors(r.GetCounter("tessera_blob_sweep_errors_total",
                            "Sweeper steps that failed (partition map, reference reads, deletes)")) {}
  metrics::Counter& scanned;
  metrics::Counter& orphans_deleted;
  metrics::Counter& repaired;
  metrics::Counter& repair_errors;
  metrics::Counter& handed_off;
  metrics::Counter& legacy;
  metrics::Counter& errors;
};

// What one round learned: the partition map, replicas that failed.
struct BlobMaintenance::Round {
  int64_t now_ms = 0;
  std::optional<std::vector<pb::PartitionDescriptor>> partitions;
  std::set<uint32_t> failed_nodes;
};

BlobMaintenance::BlobMaintenance(uint32_t self_id, ReplicationHost& replication,
                                 blob::BlobStore& store, blob::BlobClient& blobs,
                                 rpc::ChannelPool& pool, std::vector<uint32_t> meta_ids,
                                 metrics::Registry& metrics, BlobSweepOptions options)
    : self_id_(self_id),
      replication_(replication),
      store_(store),
      blobs_(blobs),
      pool_(pool),
      meta_ids_(std::move(meta_ids)),
      options_(options),
      metrics_(std::make_unique<Metrics>(metrics)) {}

BlobMaintenance::~BlobMaintenance() { Stop(); }

void BlobMaintenance::Start() {
  worker_.Start("blob-maint", options_.interval_ms, [this] { RunRound(); });
}

void BlobMaintenance::Stop() { worker_.Stop(); }

bool BlobMaintenance::RunRound() {
  auto page = store_.List(cursor_slot_, cursor_after_, limits::kBlobSweepBlobsPerRoundMax);
  if (!page.ok()) {
    metrics_->errors.Increment();
    return false;
  }
  const bool wrapped = !page->more;
  if (wrapped) {
    cursor_slot_ = 0;
    cursor_after_.reset();
  } else {
    cursor_after_ = page->entries.back().id;
  }
  metrics_->scanned.Increment(page->entries.size());
  Round round;
  round.now_ms = NowMs();
  Examine(round, page->entries);
  return wrapped;
}

// Groups the old enough blobs by owner and handles each owner's at once.
void BlobMaintenance::Examine(Round& round, const std::vector<blob::BlobListEntry>& entries) {
  std::map<std::string, std::vector<const blob::BlobListEntry*>> by_owner;
  for (const blob::BlobListEntry& e : entries) {
    if (e.corrupt || round.now_ms - e.mtime_ms < int64_t{options_.min_age_s} * 1000) continue;
    if (e.owner.empty()) {
      metrics_->legacy.Increment();
      continue;
    }
    by_owner[e.owner].push_back(&e);
  }
  if (by_owner.empty()) return;
  auto tables = CallPeer(pool_, meta_ids_.empty() ? 0 : meta_ids_[NowMs() % meta_ids_.size()],
                         "meta.tables", pb::TablesRequest().SerializeAsString());
  pb::TablesResponse map;
  if (!tables.ok() || !map.ParseFromString(*tables)) {
    metrics_->errors.Increment();
    return;
  }
  round.partitions.emplace();
  for (const pb::PartitionDescriptor& p : map.partitions()) {
    if (p.table() == kS3Table) round.partitions->push_back(p);
  }
  for (const auto& [owner, blobs] : by_owner) {
    const pb::PartitionDescriptor* partition = PartitionOf(*round.partitions, owner);
    if (!partition) {
      metrics_->errors.Increment();
      continue;
    }
    auto refs = AskReferences(round, *partition, owner, blobs);
    if (!refs.ok()) {
      metrics_->errors.Increment();
      continue;
    }
    for (const blob::BlobListEntry* e : blobs) {
      if (refs->count(e->id.ToString())) {
        Repair(round, *e);
      } else if (round.now_ms - e->mtime_ms >= int64_t{options_.orphan_grace_s} * 1000) {
        const Status deleted = store_.Delete(e->id);
        if (deleted.ok()) {
          metrics_->orphans_deleted.Increment();
          spdlog::info("blob.orphan_deleted id={}", e->id.ToString());
        } else if (deleted.code() != StatusCode::kNotFound) {
          metrics_->errors.Increment();
        }
      }
    }
  }
}

// Asks the partition's leader (trying its replicas, the hinted leader
// first) which of `blobs` the owner's records reference.
Result<std::set<std::string>> BlobMaintenance::AskReferences(
    Round& round, const pb::PartitionDescriptor& partition, const std::string& owner,
    const std::vector<const blob::BlobListEntry*>& blobs) {
  pb::S3BlobRefsRequest request;
  request.set_group_id(partition.group_id());
  request.set_owner(owner);
  for (const blob::BlobListEntry* e : blobs) request.add_blob_ids(e->id.ToString());
  std::vector<uint32_t> order;
  if (partition.leader_hint() != 0) order.push_back(partition.leader_hint());
  for (const pb::ReplicaPlacement& r : partition.replicas()) order.push_back(r.node_id());
  std::set<uint32_t> tried;
  Status last = Status::Unavailable("no replica of group " + std::to_string(partition.group_id()));
  for (size_t i = 0; i < order.size() && tried.size() < order.size(); ++i) {
    const uint32_t node = order[i];
    if (!tried.insert(node).second || round.failed_nodes.count(node)) continue;
    Result<pb::S3BlobRefsResponse> answer = Ask(node, request);
    if (answer.ok()) return std::set<std::string>(answer->referenced().begin(), answer->referenced().end());
    last = answer.status();
    if (last.code() == StatusCode::kNotLeader) {
      if (last.leader_hint() != 0) order.push_back(last.leader_hint());
    } else if (last.code() == StatusCode::kUnavailable || last.code() == StatusCode::kTimeout) {
      round.failed_nodes.insert(node);
    }
  }
  return last;
}

Result<pb::S3BlobRefsResponse> BlobMaintenance::Ask(uint32_t node, const pb::S3BlobRefsRequest& request) {
  if (node == self_id_) {
    auto local = WaitFor<Result<pb::S3BlobRefsResponse>>(kStepWait, [&](auto finish) {
      QueryBlobRefs(replication_, request, finish);
    });
    if (!local) return Status::Timeout("local s3.blob_refs did not answer");
    return std::move(*local);
  }
  auto reply = CallPeer(pool_, node, "s3.blob_refs", request.SerializeAsString());
  if (!reply.ok()) return reply.status();
  pb::S3BlobRefsResponse response;
  if (!response.ParseFromString(*reply)) return Status::Corruption("unparseable s3.blob_refs answer");
  return response;
}

// The slot's replicas (the map in force) must hold the blob; copies it to
// those that lack it or hold a damaged copy. A copy on a node that is no
// longer one of the slot's replicas (the autoadmin moved the slot) is
// handed off: deleted once every replica holds the blob.
void BlobMaintenance::Repair(Round& round, const blob::BlobListEntry& entry) {
  const std::shared_ptr<const blob::BlobSlotMap> map = blobs_.slot_map();
  const std::vector<uint32_t>& replicas = map->ReplicasOf(entry.id.slot);
  const bool mine = std::find(replicas.begin(), replicas.end(), self_id_) != replicas.end();
  bool all_hold = true;
  for (const uint32_t node : replicas) {
    if (node == self_id_) continue;
    if (round.failed_nodes.count(node)) {
      all_hold = false;
      continue;
    }
    auto stat = WaitFor<Result<blob::BlobClient::StatInfo>>(kStepWait, [&](auto finish) {
      blobs_.StatNode(node, entry.id, finish);
    });
    if (stat && stat->ok()) continue;
    const StatusCode code = stat ? stat->status().code() : StatusCode::kTimeout;
    if (code != StatusCode::kNotFound && code != StatusCode::kCorruption) {
      round.failed_nodes.insert(node);
      metrics_->repair_errors.Increment();
      all_hold = false;
      continue;
    }
    auto local = store_.Read(entry.id, 0, UINT64_MAX);
    if (!local.ok()) {
      metrics_->repair_errors.Increment();
      return;  // our own copy is gone or bad: another holder repairs
    }
    auto put = WaitFor<Status>(kStepWait, [&](auto finish) {
      blobs_.PutNode(node, entry.id, local->owner, std::string(local->data.view()), finish);
    });
    if (put && put->ok()) {
      metrics_->repaired.Increment();
      spdlog::info("blob.repaired id={} to_node={}", entry.id.ToString(), node);
    } else {
      round.failed_nodes.insert(node);
      metrics_->repair_errors.Increment();
      all_hold = false;
    }
  }
  if (mine || !all_hold) return;
  const Status deleted = store_.Delete(entry.id);
  if (deleted.ok()) {
    metrics_->handed_off.Increment();
    spdlog::info("blob.handed_off id={} slot_map_version={}", entry.id.ToString(), map->version());
  } else if (deleted.code() != StatusCode::kNotFound) {
    metrics_->errors.Increment();
  }
}

}  // namespace tessera::node
