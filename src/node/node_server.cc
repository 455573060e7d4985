#include "node/node_server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

#include "blob/blob_service.h"
#include "blob/slot_map_refresher.h"
#include "node/disk_health.h"
#include "admission/capacity_units.h"
#include "node/fault_rules.h"
#include "node/kv_admission.h"
#include "node/load_split_finder.h"
#include "node/membership_rpcs.h"
#include "node/split_rpc.h"
#include "node/partition_range.h"
#include "node/peer_prober.h"
#include "node/rpc_handler_util.h"
#include "node/s3_blob_refs.h"
#include "node/read_charge.h"
#include "node/s3_reads.h"
#include "common/limits.h"
#include "http/http_server.h"
#include "cluster/rpc_access.h"
#include "rpc/channel_pool.h"
#include "rpc/server.h"
#include "tessera/kv.pb.h"

namespace tessera::node {
namespace {

namespace asio = boost::asio;

// Gauge value of a replica role (consensus::RoleName): follower 0,
// pre-candidate 1, candidate 2, leader 3.
double RoleValue(std::string_view role) {
  if (role == "leader") return 3;
  if (role == "candidate") return 2;
  if (role == "pre-candidate") return 1;
  return 0;
}

uint64_t SteadyNowMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

pb::LoadSplitReason ToProto(LoadSplitReason reason) {
  switch (reason) {
    case LoadSplitReason::kKeyFound: return pb::LOAD_SPLIT_KEY_FOUND;
    case LoadSplitReason::kTooFewSamples: return pb::LOAD_SPLIT_TOO_FEW_SAMPLES;
    case LoadSplitReason::kOneHotKey: return pb::LOAD_SPLIT_ONE_HOT_KEY;
    case LoadSplitReason::kSequential: return pb::LOAD_SPLIT_SEQUENTIAL;
    case LoadSplitReason::kUnbalanced: return pb::LOAD_SPLIT_UNBALANCED;
  }
  return pb::LOAD_SPLIT_UNKNOWN;
}

void SetLoadSplit(const LoadSplitAnswer& load, pb::GroupStatusProto& status) {
  status.set_load_rps(load.requests_per_s);
  status.set_load_split_reason(ToProto(load.reason));
  status.set_load_split_key(load.split_key);
  status.set_load_split_share_permille(load.share_permille);
}

// Both windows cover the same span, so the leader's figures agree.
static_assert(admission::NodeAdmission::kConsumptionWindowMs == LoadSplitFinder::kWindowMs);

void SetConsumption(const admission::PartitionLoad& load, pb::GroupStatusProto& status) {
  status.set_load_read_units_per_s(load.read_units_per_s);
  status.set_load_write_units_per_s(load.write_units_per_s);
  status.set_load_boost_permille(load.boost_permille);
  status.set_partition_rcu_max(load.rcu_max);
  status.set_partition_wcu_max(load.wcu_max);
}

pb::GroupStatusProto ToProto(uint64_t group_id, const GroupStatus& s) {
  pb::GroupStatusProto p;
  p.set_group_id(group_id);
  p.set_role(consensus::RoleName(s.role));
  p.set_leader(s.leader);
  *p.mutable_ballot() = s.ballot;
  p.set_chosen(s.chosen);
  p.set_applied(s.applied);
  p.set_last_slot(s.last_slot);
  p.set_holds_lease(s.holds_lease);
  p.set_stopped(s.stopped);
  *p.mutable_voters() = s.membership.voters();
  *p.mutable_learners() = s.membership.learners();
  *p.mutable_log_only() = s.membership.log_only();
  p.set_membership_pending(s.membership_pending);
  p.set_log_start(s.log_start);
  return p;
}

// A write's cost (admission/capacity_units.h): a batch by its items and
// conditions; an S3 command (the `_s3` table) as one write unit.
double WriteUnitsOf(const pb::KvWriteRequest& write) {
  if (write.has_s3()) return admission::WriteUnits(0);
  std::vector<uint64_t> sizes;
  sizes.reserve(write.batch().writes_size());
  for (const pb::KvWrite& w : write.batch().writes()) {
    sizes.push_back(w.key().size() + (w.delete_() ? 0 : w.value().size()));
  }
  return admission::BatchWriteUnits(sizes, static_cast<uint64_t>(write.batch().conditions_size()));
}

// Refusals of a write that prove it was never proposed: its units go back.
bool NotProposed(StatusCode code) {
  return code == StatusCode::kNotLeader || code == StatusCode::kThrottled ||
         code == StatusCode::kStaleEpoch || code == StatusCode::kNotFound;
}

// A request whose key left the group's range (partition_range.h).
Status WrongPartition(uint64_t group_id) {
  return Status::WrongPartition("key is outside the range of group " + std::to_string(group_id) +
                                " (the partition split); resolve the key again");
}

}  // namespace

class NodeServer::Impl {
 public:
  Impl(asio::io_context& io, metrics::Registry& metrics, rpc::FaultInjector& faults,
       NodeServerOptions options)
      : io_(io),
        metrics_(metrics),
        faults_(faults),
        options_(std::move(options)),
        strand_(asio::make_strand(io)),
        stats_timer_(strand_),
        bad_batches_(metrics.GetCounter("tessera_consensus_bad_batches_total",
                                        "consensus.batch payloads that did not parse")) {}

  Status Start();
  void Stop();

  // Calls `done` with every group's status once all answered (any thread).
  void CollectStatus(std::function<void(std::vector<pb::GroupStatusProto>)> done);

  asio::io_context& io_;
  metrics::Registry& metrics_;
  rpc::FaultInjector& faults_;
  const NodeServerOptions options_;
  asio::strand<asio::io_context::executor_type> strand_;
  asio::steady_timer stats_timer_;
  metrics::Counter& bad_batches_;
  std::shared_ptr<storage::StorageFaults> storage_faults_ = std::make_shared<storage::StorageFaults>();
  std::shared_ptr<rpc::ChannelPool> pool_;
  std::unique_ptr<ReplicationHost> replication_;
  std::unique_ptr<blob::BlobService> blob_;
  std::unique_ptr<blob::BlobClient> blob_client_;  // GC and sweeper
  std::unique_ptr<blob::SlotMapRefresher> slot_map_refresher_;
  std::unique_ptr<RoutedOwnerRefs> gc_owner_refs_;  // the GC thread's (owner rule)
  std::unique_ptr<BlobGc> blob_gc_;
  std::unique_ptr<BlobMaintenance> blob_maintenance_;
  std::unique_ptr<PeerProber> peer_prober_;
  KvAdmission admission_{options_.node_id, options_.admission, metrics_};
  // Sampled keys of the KV requests served, per group: the leaders' load
  // and split key in admin.status (load_split_finder.h).
  LoadSplitFinders load_finders_;
  std::unique_ptr<rpc::RpcServer> rpc_;
  std::unique_ptr<http::HttpServer> http_;
  // admin.state_digest's and admin.split_key's scans: one at a time, a few waiting.
  JobThread digest_jobs_{"state-digest", limits::kNodeDigestJobsMax};
  // admin.change_membership / admin.drop_group / admin.transfer_leadership
  // (membership_rpcs.h), admin.split_group (split_rpc.h).
  JobThread admin_jobs_{"node-admin", limits::kNodeAdminJobsMax};
  // On strand_: when the groups stopped on a disk error were last tried
  // (RestartFailedGroups); one try in flight at a time.
  std::chrono::steady_clock::time_point last_restart_try_{};
  std::atomic<bool> restart_in_flight_{false};
  std::atomic<bool> serving_{false};
  bool stop_called_ = false;  // Stop's own flag (Start/Stop thread)
  bool stopped_ = false;      // on strand_: no more stats rounds

  std::mutex mu_;  // guards last_status_ and last_commit_stats_
  std::vector<pb::GroupStatusProto> last_status_;
  storage::GroupCommitStats last_commit_stats_;
  uint64_t last_scan_flushes_ = 0;         // under mu_, as last_commit_stats_
  uint64_t last_scan_flush_failures_ = 0;

 private:
  Status RegisterHandlers();
  Status OpenBlobService();
  Status StartBlobMaintenance();
  // The host this node's own channels reach its RPC server at: the address
  // it listens on, loopback for a wildcard address.
  std::string SelfHost() const;
  void OnConsensusBatch(const pb::Envelope& request);
  void OnGet(const pb::Envelope& request, rpc::Responder responder);
  void OnScan(const pb::Envelope& request, rpc::Responder responder);
  void OnWrite(const pb::Envelope& request, rpc::Responder responder);
  void OnCreateGroup(const pb::Envelope& request, rpc::Responder responder);
  void OnStatus(rpc::Responder responder);
  void OnStateDigest(rpc::Responder responder);
  void OnFaults(const pb::Envelope& request, rpc::Responder responder);
  void OnHttp(http::Request request, http::Respond respond);
  std::string HealthJson();
  void ScheduleStats();
  void RefreshStats();
  void MaybeRestartFailedGroups();
  std::shared_ptr<GroupHost> FindOrFail(uint64_t group_id, const rpc::Responder& responder);
};

Status NodeServer::Impl::Start() {
  rpc::Identity identity{options_.node_id, "node", options_.cluster_secret, options_.tls};
  TESSERA_RETURN_IF_ERROR(rpc::ValidateIdentity(identity));
  const rpc::RpcContext context{io_, metrics_, faults_};
  rpc::ChannelOptions channel_defaults;
  channel_defaults.identity = identity;
  pool_ = std::make_shared<rpc::ChannelPool>(context, channel_defaults);
  for (const PeerAddress& peer : options_.peers) {
    if (peer.id == options_.node_id) continue;
    TESSERA_RETURN_IF_ERROR(pool_->SetPeerAddress(peer.id, peer.host, peer.port));
  }

  ReplicationHostOptions host_options;
  host_options.self_id = options_.node_id;
  host_options.store.path = options_.store_path;
  host_options.store.fault_install_delay_ms = options_.fault_snapshot_install_delay_ms;
  host_options.store.group_commit.faults = storage_faults_;
  host_options.group_defaults = options_.group_defaults;
  std::weak_ptr<rpc::ChannelPool> weak_pool = pool_;
  host_options.send_batch = [weak_pool](uint32_t peer, std::string payload) -> Status {
    std::shared_ptr<rpc::ChannelPool> pool = weak_pool.lock();
    if (!pool) return Status::Aborted("node stopping");
    auto channel = pool->Get(peer);
    if (!channel.ok()) return channel.status();
    return (*channel)->Send("consensus.batch", std::move(payload));
  };
  auto replication = ReplicationHost::Open(io_, metrics_, std::move(host_options));
  if (!replication.ok()) return replication.status();
  replication_ = std::move(replication).value();
  TESSERA_RETURN_IF_ERROR(OpenBlobService());

  rpc::ServerOptions server_options;
  server_options.identity = identity;
  server_options.access = cluster::NodeAccessPolicy();
  server_options.host = options_.rpc_host;
  server_options.port = options_.rpc_port;
  rpc_ = std::make_unique<rpc::RpcServer>(context, server_options);
  // Peers' timeouts (NodeStatus.peer_links): every storage node of the
  // slot map in force, added nodes included; probing starts with the blob
  // maintenance, once the blob client (and its map) exists.
  peer_prober_ = std::make_unique<PeerProber>(
      *pool_, options_.node_id,
      [this] {
        std::vector<uint32_t> ids;
        for (const blob::NodeRef& n : blob_client_->slot_map()->nodes()) ids.push_back(n.node_id);
        return ids;
      },
      PeerProberOptions{});
  TESSERA_RETURN_IF_ERROR(RegisterHandlers());
  TESSERA_RETURN_IF_ERROR(rpc_->Start());

  http::HttpServerOptions http_options;
  http_options.host = options_.http_host;
  http_options.port = options_.http_port;
  http_options.body_bytes_max = 64 << 10;  // GETs only
  http_ = std::make_unique<http::HttpServer>(
      io_, http_options, [this](http::Request r, http::Respond respond) { OnHttp(std::move(r), std::move(respond)); });
  TESSERA_RETURN_IF_ERROR(http_->Start());
  TESSERA_RETURN_IF_ERROR(StartBlobMaintenance());
  serving_ = true;
  asio::post(strand_, [this] { RefreshStats(); });
  spdlog::info("node.started node_id={} name={} az={} rpc_port={} http_port={} groups={}",
               options_.node_id, options_.name, options_.az, rpc_->port(), http_->port(),
               replication_->Groups().size());
  return Status::Ok();
}

Status NodeServer::Impl::RegisterHandlers() {
  using rpc::PeerInfo;
  using rpc::Responder;
  std::vector<std::pair<std::string, rpc::Handler>> handlers = {
      {"consensus.batch",
       [this](const PeerInfo&, const pb::Envelope& r, Responder) { OnConsensusBatch(r); }},
      {"kv.get", [this](const PeerInfo&, const pb::Envelope& r, Responder s) { OnGet(r, std::move(s)); }},
      {"kv.scan", [this](const PeerInfo&, const pb::Envelope& r, Responder s) { OnScan(r, std::move(s)); }},
      {"kv.write", [this](const PeerInfo&, const pb::Envelope& r, Responder s) { OnWrite(r, std::move(s)); }},
      {"admin.create_group",
       [this](const PeerInfo&, const pb::Envelope& r, Responder s) { OnCreateGroup(r, std::move(s)); }},
      {"admin.status", [this](const PeerInfo&, const pb::Envelope&, Responder s) { OnStatus(std::move(s)); }},
      {"node.ping", [](const PeerInfo&, const pb::Envelope&, Responder s) { s.Reply(std::string()); }},
      {"admin.state_digest",
       [this](const PeerInfo&, const pb::Envelope&, Responder s) { OnStateDigest(std::move(s)); }},
      {"admin.faults",
       [this](const PeerInfo&, const pb::Envelope& r, Responder s) { OnFaults(r, std::move(s)); }},
      {"admin.change_membership",
       [this](const PeerInfo&, const pb::Envelope& r, Responder s) {
         ServeChangeMembership(*replication_, admin_jobs_, r, std::move(s));
       }},
      {"admin.drop_group",
       [this](const PeerInfo&, const pb::Envelope& r, Responder s) {
         ServeDropGroup(*replication_, admin_jobs_, r, std::move(s));
       }},
      {"admin.transfer_leadership",
       [this](const PeerInfo&, const pb::Envelope& r, Responder s) {
         ServeTransferLeadership(*replication_, admin_jobs_, r, std::move(s));
       }},
      {"admin.split_group",
       [this](const PeerInfo&, const pb::Envelope& r, Responder s) {
         ServeSplitGroup(*replication_, admin_jobs_, r, std::move(s));
       }},
      {"admin.split_key",
       [this](const PeerInfo&, const pb::Envelope& r, Responder s) {
         ServeSplitKey(*replication_, digest_jobs_, r, std::move(s));
       }},
      {"blob.read",
       [this](const PeerInfo&, const pb::Envelope& r, Responder s) { blob_->HandleRead(r, std::move(s)); }},
      {"blob.delete",
       [this](const PeerInfo&, const pb::Envelope& r, Responder s) { blob_->HandleDelete(r, std::move(s)); }},
      {"blob.list",
       [this](const PeerInfo&, const pb::Envelope& r, Responder s) { blob_->HandleList(r, std::move(s)); }},
      {"blob.stat",
       [this](const PeerInfo&, const pb::Envelope& r, Responder s) { blob_->HandleStat(r, std::move(s)); }},
  };
  auto record_load = [this](uint64_t group_id, std::string_view key) {
    load_finders_.Record(group_id, key, SteadyNowMs());
  };
  for (auto& entry : S3ReadHandlers(replication_.get(), &admission_, record_load)) {
    handlers.push_back(std::move(entry));
  }
  for (auto& entry : S3BlobRefHandlers(replication_.get())) handlers.push_back(std::move(entry));
  for (const auto& [method, handler] : handlers) {
    TESSERA_RETURN_IF_ERROR(rpc_->RegisterHandler(method, handler));
  }
  return rpc_->RegisterPayloadHandler(
      "blob.put", [this](const PeerInfo&, pb::Envelope&, SharedBytes payload, Responder s) {
        blob_->HandlePut(std::move(payload), std::move(s));
      });
}

// The blob store beside the RocksDB directory unless placed explicitly. The
// node's disk fault knobs (admin.faults) also slow or fail blob fsyncs.
Status NodeServer::Impl::OpenBlobService() {
  blob::BlobServiceOptions blob_options;
  blob_options.path = options_.blob_path;
  if (blob_options.path.empty()) {
    blob_options.path = (std::filesystem::path(options_.store_path).parent_path() / "blobs").string();
  }
  std::shared_ptr<storage::StorageFaults> faults = storage_faults_;
  blob_options.store.before_sync = [faults]() -> Status {
    const uint32_t delay_ms = faults->fsync_delay_ms.load();
    if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    if (faults->fail_writes.load()) return Status::IOError("injected fsync failure (fail_writes)");
    return Status::Ok();
  };
  auto blob = blob::BlobService::Open(metrics_, std::move(blob_options));
  if (!blob.ok()) return blob.status();
  blob_ = std::move(blob).value();
  return Status::Ok();
}

std::string NodeServer::Impl::SelfHost() const {
  if (options_.rpc_host == "0.0.0.0") return "127.0.0.1";
  if (options_.rpc_host == "::") return "::1";
  return options_.rpc_host;
}

// The blob GC and sweeper, when the node knows the metadata replicas (a
// `tessera node` process; in-process tests without them run neither).
Status NodeServer::Impl::StartBlobMaintenance() {
  if (options_.meta_peers.empty()) return Status::Ok();
  // The layout's map: from the layout's nodes only (contract 1 of
  // blob_slot_map.h); added nodes come with the storage node map.
  std::vector<blob::NodeRef> nodes;
  if (!options_.added) nodes.push_back(blob::NodeRef{options_.node_id, options_.az});
  for (const PeerAddress& peer : options_.peers) {
    if (peer.id != options_.node_id && !peer.added) nodes.push_back(blob::NodeRef{peer.id, peer.az});
  }
  auto slot_map = blob::BlobSlotMap::Build(std::move(nodes));
  if (!slot_map.ok()) return slot_map.status();
  // The GC deletes (and the sweeper stats and repairs) every replica of a
  // slot through the blob client, this node's own copies included: a
  // channel to itself.
  TESSERA_RETURN_IF_ERROR(pool_->SetPeerAddress(options_.node_id, SelfHost(), rpc_->port()));
  std::vector<uint32_t> meta_ids;
  for (const PeerAddress& meta : options_.meta_peers) {
    TESSERA_RETURN_IF_ERROR(pool_->SetPeerAddress(meta.id, meta.host, meta.port));
    meta_ids.push_back(meta.id);
  }
  blob_client_ = std::make_unique<blob::BlobClient>(*pool_, *slot_map, options_.az, metrics_);
  slot_map_refresher_ = std::make_unique<blob::SlotMapRefresher>(
      *pool_, meta_ids, std::move(slot_map).value(), *blob_client_, metrics_,
      blob::SlotMapRefresher::kIntervalMsDefault);
  gc_owner_refs_ = std::make_unique<RoutedOwnerRefs>(options_.node_id, *replication_, *pool_, meta_ids);
  blob_gc_ = std::make_unique<BlobGc>(*replication_, *blob_client_, gc_owner_refs_.get(), metrics_,
                                      options_.gc);
  blob_maintenance_ = std::make_unique<BlobMaintenance>(options_.node_id, *replication_, blob_->store(),
                                                        *blob_client_, *pool_, meta_ids,
                                                        metrics_, options_.sweep);
  std::vector<uint32_t> gac_ids;
  for (const PeerAddress& gac : options_.gac_peers) {
    TESSERA_RETURN_IF_ERROR(pool_->SetPeerAddress(gac.id, gac.host, gac.port));
    gac_ids.push_back(gac.id);
  }
  admission_.Start(pool_, meta_ids, std::move(gac_ids));
  slot_map_refresher_->Start();
  blob_gc_->Start();
  blob_maintenance_->Start();
  peer_prober_->Start();
  return Status::Ok();
}

void NodeServer::Impl::OnConsensusBatch(const pb::Envelope& request) {
  pb::ConsensusBatch batch;
  if (!batch.ParseFromString(request.payload())) {
    bad_batches_.Increment();
    return;
  }
  replication_->DeliverBatch(std::move(batch));
}

std::shared_ptr<GroupHost> NodeServer::Impl::FindOrFail(uint64_t group_id,
                                                        const rpc::Responder& responder) {
  return FindGroupOrFail(*replication_, group_id, responder);
}

void NodeServer::Impl::OnGet(const pb::Envelope& request, rpc::Responder responder) {
  pb::KvGetRequest get;
  if (!ParsePayload(request, responder, &get)) return;
  auto host = FindOrFail(get.group_id(), responder);
  if (!host) return;
  const uint64_t group_id = get.group_id();
  if (!replication_->DescriptorAllows(
          group_id, [&get](const pb::PartitionDescriptor& d) { return KeyInRange(d, get.key()); })) {
    return responder.Fail(WrongPartition(group_id));
  }
  auto charge = ReadCharge::Admit(admission_, group_id, get.consistency());
  if (!charge.ok()) return responder.Fail(charge.status());
  load_finders_.Record(group_id, get.key(), SteadyNowMs());
  // GroupHost::Read, with the range checked again in the state read: a
  // split may apply while a STRONG read waits (D130).
  auto read = [key = get.key()](Result<const PartitionStateMachine*> state)
      -> Result<std::optional<pb::KvRecord>> {
    if (!state.ok()) return state.status();
    TESSERA_RETURN_IF_ERROR((*state)->CheckKeyInRange(key));
    return (*state)->Get(key);
  };
  host->ReadState(get.consistency(), [read, responder, charge = *charge,
                                      key_bytes = get.key().size()](
                                         Result<const PartitionStateMachine*> state) {
    Result<std::optional<pb::KvRecord>> r = read(state);
    if (!r.ok()) {
      charge.Failed();
      return responder.Fail(r.status());
    }
    charge.Served(r->has_value() ? key_bytes + (*r)->value().size() : 0);
    pb::KvGetResponse response;
    if (r->has_value()) {
      response.set_found(true);
      response.set_value((*r)->value());
      response.set_version((*r)->version());
    }
    responder.Reply(response.SerializeAsString());
  });
}

void NodeServer::Impl::OnScan(const pb::Envelope& request, rpc::Responder responder) {
  pb::KvScanRequest scan;
  if (!ParsePayload(request, responder, &scan)) return;
  if (scan.limit() == 0 || scan.limit() > limits::kScanItemsMax) {
    scan.set_limit(static_cast<uint32_t>(limits::kScanItemsMax));
  }
  auto host = FindOrFail(scan.group_id(), responder);
  if (!host) return;
  const uint64_t group_id = scan.group_id();
  if (!replication_->DescriptorAllows(
          group_id, [&scan](const pb::PartitionDescriptor& d) { return ScanInRange(d, scan); })) {
    return responder.Fail(WrongPartition(group_id));
  }
  auto charge = ReadCharge::Admit(admission_, group_id, scan.consistency());
  if (!charge.ok()) return responder.Fail(charge.status());
  load_finders_.Record(group_id, scan.start_key(), SteadyNowMs());
  // GroupHost::Scan, with the range checked again in the state read (a
  // scan of a parent narrowed meanwhile would end early: D130).
  const pb::Consistency scan_consistency = scan.consistency();
  host->ReadState(scan_consistency, [scan = std::move(scan), responder, charge = *charge](
                                        Result<const PartitionStateMachine*> state) {
    Result<pb::KvScanResponse> r = [&]() -> Result<pb::KvScanResponse> {
      if (!state.ok()) return state.status();
      TESSERA_RETURN_IF_ERROR((*state)->CheckEndInRange(scan.end_key()));
      return (*state)->Scan(scan.start_key(), scan.end_key(), scan.limit());
    }();
    if (!r.ok()) {
      charge.Failed();
      return responder.Fail(r.status());
    }
    uint64_t bytes = 0;
    for (const pb::KvItem& item : r->items()) bytes += item.key().size() + item.value().size();
    charge.Served(bytes);
    responder.Reply(r->SerializeAsString());
  });
}

void NodeServer::Impl::OnWrite(const pb::Envelope& request, rpc::Responder responder) {
  pb::KvWriteRequest write;
  if (!ParsePayload(request, responder, &write)) return;
  auto host = FindOrFail(write.group_id(), responder);
  if (!host) return;
  const uint64_t group_id = write.group_id();
  if (!replication_->DescriptorAllows(
          group_id, [&write](const pb::PartitionDescriptor& d) { return WriteInRange(d, write); })) {
    return responder.Fail(WrongPartition(group_id));
  }
  const admission::Admission admitted =
      admission_.Admit(group_id, admission::CapacityKind::kWrite, WriteUnitsOf(write));
  if (!admitted.admitted) return responder.Fail(ThroughputExceeded(group_id, "write"));
  if (write.has_s3()) {
    // By the object's prefix `B K`: a split key the finder names is then
    // one the `_s3` table allows.
    if (auto key = S3LoadKey(write.s3())) load_finders_.Record(group_id, *key, SteadyNowMs());
  } else if (write.batch().writes_size() > 0) {
    load_finders_.Record(group_id, write.batch().writes(0).key(), SteadyNowMs());
  }
  pb::KvCommand command;
  if (write.has_s3()) {
    *command.mutable_s3() = std::move(*write.mutable_s3());
  } else {
    *command.mutable_batch() = std::move(*write.mutable_batch());
  }
  host->Write(std::move(command), [this, responder, group_id, admitted](Result<pb::KvApplyResult> r) {
    if (!r.ok() && NotProposed(r.status().code())) {
      admission_.Return(group_id, admission::CapacityKind::kWrite, admitted);
    }
    if (!r.ok()) return responder.Fail(r.status());
    // Ordered after a split that moved its keys: applied nowhere, resendable.
    if (r->wrong_partition()) return responder.Fail(WrongPartition(group_id));
    pb::KvWriteResponse response;
    *response.mutable_result() = *r;
    responder.Reply(response.SerializeAsString());
  });
}

void NodeServer::Impl::OnCreateGroup(const pb::Envelope& request, rpc::Responder responder) {
  pb::CreateGroupRequest create;
  if (!ParsePayload(request, responder, &create)) return;
  // CreateGroup recovers the group from the store: slow work, off the
  // connection's strand.
  asio::post(io_, [this, create = std::move(create), responder] {
    const Status status =
        create.split_parent_group_id() == 0
            ? replication_->CreateGroup(create.partition())
            : replication_->CreateSplitChild(create.partition(), create.split_parent_group_id());
    if (!status.ok()) return responder.Fail(status);
    responder.Reply(pb::CreateGroupResponse().SerializeAsString());
  });
}

void NodeServer::Impl::CollectStatus(std::function<void(std::vector<pb::GroupStatusProto>)> done) {
  const std::vector<HostedGroup> groups = replication_->Groups();
  if (groups.empty()) return done({});
  struct Collector {
    std::mutex mu;  // guards statuses and remaining
    std::vector<pb::GroupStatusProto> statuses;
    size_t remaining;
    std::function<void(std::vector<pb::GroupStatusProto>)> done;
  };
  auto collector = std::make_shared<Collector>();
  collector->remaining = groups.size();
  collector->done = std::move(done);
  storage::NodeStore* store = &replication_->store();
  LoadSplitFinders* finders = &load_finders_;
  KvAdmission* admission = &admission_;
  for (const HostedGroup& g : groups) {
    const uint64_t id = g.descriptor.group_id();
    g.host->GetStatus([collector, id, store, finders, admission](GroupStatus s) {
      pb::GroupStatusProto status = ToProto(id, s);
      // The leader's estimate of its state's size, for the split planner.
      const bool leads = s.role == consensus::Role::kLeader && !s.log_only;
      if (leads) {
        auto bytes = store->ApproximateStateBytes(id);
        if (bytes.ok()) status.set_state_bytes(*bytes);
        // Its live keys, for bucket placement (autoadmin placement_publisher.h).
        auto keys = store->ApproximateStateKeys(id);
        if (keys.ok()) status.set_state_keys(*keys);
      }
      // Its load and load split key; a replica that does not lead forgets
      // its samples (a new leader starts afresh).
      if (auto load = finders->Report(id, leads, SteadyNowMs())) SetLoadSplit(*load, status);
      // What admission sees of it (the consumption split triggers).
      if (leads) {
        if (auto consumed = admission->Load(id)) SetConsumption(*consumed, status);
      }
      std::unique_lock lock(collector->mu);
      collector->statuses.push_back(std::move(status));
      if (--collector->remaining > 0) return;
      std::sort(collector->statuses.begin(), collector->statuses.end(),
                [](const auto& a, const auto& b) { return a.group_id() < b.group_id(); });
      auto statuses = std::move(collector->statuses);
      lock.unlock();
      collector->done(std::move(statuses));
    });
  }
}

void NodeServer::Impl::OnStatus(rpc::Responder responder) {
  CollectStatus([this, responder](std::vector<pb::GroupStatusProto> statuses) {
    pb::NodeStatus status;
    status.set_node_id(options_.node_id);
    status.set_name(options_.name);
    status.set_az(options_.az);
    for (auto& g : statuses) *status.add_groups() = std::move(g);
    *status.mutable_disk() = ReadDiskHealth(replication_->store(), options_.store_path);
    for (pb::PeerLinkProto& link : peer_prober_->Report()) *status.add_peer_links() = std::move(link);
    responder.Reply(status.SerializeAsString());
  });
}

void NodeServer::Impl::OnFaults(const pb::Envelope& request, rpc::Responder responder) {
  pb::FaultRules rules;
  if (!ParsePayload(request, responder, &rules)) return;
  const Status applied = ApplyFaultRules(rules, faults_, *storage_faults_);
  if (!applied.ok()) return responder.Fail(applied);
  std::vector<uint32_t> peers;
  for (const PeerAddress& peer : options_.peers) peers.push_back(peer.id);
  responder.Reply(FaultRulesInForce(peers, faults_, *storage_faults_).SerializeAsString());
}

namespace {

// admin.state_digest: one line per hosted group, "group=G applied=A
// pairs=P bytes=B checksum=C" (GroupHost::StateDigest), ascending; replicas
// with equal lines hold equal states.
void ServeStateDigests(ReplicationHost& replication, JobThread& scanner, rpc::Responder responder) {
  struct Pending {
    std::mutex mu;  // guards lines, remaining
    std::map<uint64_t, std::string> lines;
    size_t remaining = 0;
    rpc::Responder responder;
  };
  const std::vector<HostedGroup> groups = replication.Groups();
  if (groups.empty()) return responder.Reply(std::string());
  auto pending = std::make_shared<Pending>();
  pending->remaining = groups.size();
  pending->responder = std::move(responder);
  for (const HostedGroup& g : groups) {
    const uint64_t id = g.descriptor.group_id();
    g.host->StateDigest(scanner, [pending, id](Result<pb::SnapshotManifest> digest) {
      std::string line = "group=" + std::to_string(id);
      if (digest.ok()) {
        line += " applied=" + std::to_string(digest->applied_index()) +
                " pairs=" + std::to_string(digest->pair_count()) +
                " bytes=" + std::to_string(digest->total_bytes()) +
                " checksum=" + std::to_string(digest->checksum());
      } else {
        line += " error=\"" + digest.status().ToString() + "\"";
      }
      std::lock_guard lock(pending->mu);
      pending->lines[id] = std::move(line);
      if (--pending->remaining > 0) return;
      std::string body;
      for (const auto& [group, text] : pending->lines) body += text + "\n";
      pending->responder.Reply(std::move(body));
    });
  }
}

}  // namespace

void NodeServer::Impl::OnStateDigest(rpc::Responder responder) {
  ServeStateDigests(*replication_, digest_jobs_, std::move(responder));
}

void NodeServer::Impl::OnHttp(http::Request request, http::Respond respond) {
  if (request.method != "GET" && request.method != "HEAD") {
    return respond(http::Response::Text(405, "method not allowed\n"));
  }
  if (request.path == "/metrics") {
    http::Response r = http::Response::Text(200, metrics_.RenderText());
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return respond(std::move(r));
  }
  if (request.path == "/health") {
    const bool healthy = serving_.load();
    return respond(http::Response::Json(healthy ? 200 : 503, HealthJson()));
  }
  respond(http::Response::Text(404, "not found\n"));
}

std::string NodeServer::Impl::HealthJson() {
  std::ostringstream out;
  out << "{\"status\":\"" << (serving_.load() ? "ok" : "stopping") << "\",\"node_id\":"
      << options_.node_id << ",\"name\":\"" << options_.name << "\",\"groups\":[";
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < last_status_.size(); ++i) {
    const pb::GroupStatusProto& g = last_status_[i];
    out << (i ? "," : "") << "{\"group\":" << g.group_id() << ",\"role\":\"" << g.role()
        << "\",\"leader\":" << g.leader() << ",\"applied\":" << g.applied() << "}";
  }
  out << "]}";
  return out.str();
}

void NodeServer::Impl::ScheduleStats() {
  stats_timer_.expires_after(std::chrono::milliseconds(options_.stats_interval_ms));
  stats_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !stopped_) RefreshStats();
  });
}

// On strand_. At most every kFailedGroupRestartIntervalMs, one try on the
// admin thread to restart the groups that stopped on a disk error.
void NodeServer::Impl::MaybeRestartFailedGroups() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_restart_try_ < std::chrono::milliseconds(limits::kFailedGroupRestartIntervalMs)) {
    return;
  }
  if (restart_in_flight_.exchange(true)) return;
  last_restart_try_ = now;
  const Status queued = admin_jobs_.Submit([this] {
    const std::vector<uint64_t> restarted = replication_->RestartFailedGroups();
    if (!restarted.empty()) {
      metrics_.GetCounter("tessera_node_group_restarts_total",
                          "Groups restarted from the store after they stopped on a disk error")
          .Increment(restarted.size());
    }
    restart_in_flight_ = false;
  });
  if (!queued.ok()) restart_in_flight_ = false;  // stopping, or the admin queue is full
}

// On strand_. Group gauges from a status round; storage counters advanced by
// the group-commit writer's deltas.
void NodeServer::Impl::RefreshStats() {
  MaybeRestartFailedGroups();
  const storage::GroupCommitStats now = replication_->store().group_commit_stats();
  {
    std::lock_guard lock(mu_);
    const auto advance = [&](const char* name, const char* help, uint64_t current, uint64_t last) {
      if (current > last) metrics_.GetCounter(name, help).Increment(current - last);
    };
    advance("tessera_storage_log_writes_total", "Log writes accepted by the group-commit writer",
            now.writes_submitted, last_commit_stats_.writes_submitted);
    advance("tessera_storage_log_write_failures_total", "Log writes whose synced write failed",
            now.writes_failed, last_commit_stats_.writes_failed);
    advance("tessera_storage_group_commits_total", "Synced RocksDB writes (group commits)",
            now.batches_synced, last_commit_stats_.batches_synced);
    advance("tessera_storage_synced_bytes_total", "Bytes in synced group commits",
            now.bytes_synced, last_commit_stats_.bytes_synced);
    last_commit_stats_ = now;
    const uint64_t flushes = replication_->store().scan_flushes_requested();
    const uint64_t flush_failures = replication_->store().scan_flush_failures();
    advance("tessera_storage_scan_flushes_total",
            "Flushes of the applied state requested because scans stepped over obsolete versions",
            flushes, last_scan_flushes_);
    advance("tessera_storage_scan_flush_failures_total",
            "Requested applied-state flushes that RocksDB refused", flush_failures,
            last_scan_flush_failures_);
    last_scan_flushes_ = flushes;
    last_scan_flush_failures_ = flush_failures;
  }
  CollectStatus([this](std::vector<pb::GroupStatusProto> statuses) {
    for (const pb::GroupStatusProto& g : statuses) {
      const metrics::Labels labels = {{"group", std::to_string(g.group_id())}};
      metrics_.GetGauge("tessera_group_role", "Replica role: 0 follower, 1 pre-candidate, 2 candidate, 3 leader", labels)
          .Set(RoleValue(g.role()));
      metrics_.GetGauge("tessera_group_applied_index", "Highest slot applied by this replica", labels)
          .Set(static_cast<double>(g.applied()));
      metrics_.GetGauge("tessera_group_chosen_index", "Highest slot known chosen by this replica", labels)
          .Set(static_cast<double>(g.chosen()));
      metrics_.GetGauge("tessera_group_leader", "Node id this replica believes leads (0 unknown)", labels)
          .Set(g.leader());
    }
    {
      std::lock_guard lock(mu_);
      last_status_ = std::move(statuses);
    }
    asio::post(strand_, [this] {
      if (!stopped_) ScheduleStats();
    });
  });
}

void NodeServer::Impl::Stop() {
  if (stop_called_) return;
  stop_called_ = true;
  serving_ = false;
  // The maintenance threads wait on rpc and group callbacks: first.
  if (slot_map_refresher_) slot_map_refresher_->Stop();
  admission_.Stop();
  if (blob_gc_) blob_gc_->Stop();
  if (blob_maintenance_) blob_maintenance_->Stop();
  if (peer_prober_) peer_prober_->Stop();
  if (http_) http_->Stop();
  if (rpc_) rpc_->Stop();
  digest_jobs_.Stop();  // its scans hold store snapshots
  admin_jobs_.Stop();   // its jobs write the store
  if (blob_) blob_->Stop();
  if (replication_) replication_->Stop();
  pool_.reset();
  std::promise<void> timer_stopped;
  asio::post(strand_, [this, &timer_stopped] {
    stopped_ = true;
    stats_timer_.cancel();
    timer_stopped.set_value();
  });
  if (!io_.stopped()) timer_stopped.get_future().wait();
  spdlog::info("node.stopped node_id={}", options_.node_id);
}

NodeServer::NodeServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  replication_ = impl_->replication_.get();
}

NodeServer::~NodeServer() {
  Stop();
  // The io threads have stopped: closing the store is safe now.
  impl_->http_.reset();
  impl_->rpc_.reset();
  impl_->blob_gc_.reset();
  impl_->gc_owner_refs_.reset();
  impl_->slot_map_refresher_.reset();
  impl_->blob_maintenance_.reset();
  impl_->peer_prober_.reset();
  impl_->blob_client_.reset();
  impl_->blob_.reset();
  impl_->replication_.reset();
}

Result<std::unique_ptr<NodeServer>> NodeServer::Start(asio::io_context& io, metrics::Registry& metrics,
                                                      rpc::FaultInjector& faults,
                                                      NodeServerOptions options) {
  auto impl = std::make_unique<Impl>(io, metrics, faults, std::move(options));
  const Status started = impl->Start();
  if (!started.ok()) {
    impl->Stop();
    return started;
  }
  return std::unique_ptr<NodeServer>(new NodeServer(std::move(impl)));
}

void NodeServer::Stop() { impl_->Stop(); }

uint16_t NodeServer::rpc_port() const { return impl_->rpc_->port(); }

uint16_t NodeServer::http_port() const { return impl_->http_->port(); }

}  // namespace tessera::node
