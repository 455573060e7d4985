// MetaService: one metadata replica. It drives the meta replication group
// (kMetaGroupId, three replicas, one per AZ) with node::GroupHost over its
// own NodeStore, keeps the MemDS current from the applied state, and serves
// over its RpcServer:
//   consensus.batch    one-way  messages among meta replicas
//   meta.lookup        MemDS read, any replica (NotFound for unknown table)
//   meta.lookup_batch  up to limits::kMetaLookupBatchMax MemDS reads in one
//                      call, one result each (the router's MemdsClient)
//   meta.tables        MemDS read, any replica
//   meta.create_table  on the leader; a follower forwards a client's request
//                      to the leader it knows (a forwarded request that
//                      meets a non-leader answers NotLeader with the hint)
//   meta.update_table_capacity  a table's capacity (table_capacity.h), on
//                      the leader like create_table
//   admin.status       NodeStatus with the meta group's status
//   meta.*bucket*, meta.*user*  the S3 bucket registry and users:
//                      RegistryService (registry_service.h), its MemDS
//                      half in RegistryMemds
//
// create_table runs on one worker thread, one request at a time (queue:
// limits::kMetaAdminQueueMax, then Throttled): strong reads of the table
// and the id counters, one conditional KvBatch with every descriptor
// (docs/formats/meta-keys.md, rule 4), then admin.create_group on every
// chosen node, retried with bounded backoff until each acknowledges.
// Creating an existing table with the same split points answers its
// descriptors (and re-ensures its groups); other split points, or another
// capacity than one the request sets: Conflict.
//
// Thread safety: Start, Shutdown and the destructor from one thread that
// does not run the io_context, while it runs. Everything else is internal.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/process_table.h"
#include "common/limits.h"
#include "common/metrics.h"
#include "consensus/options.h"
#include "knobs/knobs.h"
#include "node/batching_sender.h"
#include "meta/memds.h"
#include "meta/partition_admin.h"
#include "meta/placement.h"
#include "meta/registry_memds.h"
#include "meta/registry_service.h"
#include "node/group_host.h"
#include "rpc/channel_pool.h"
#include "rpc/server.h"
#include "storage/node_store.h"

namespace tessera::meta {

struct MetaServiceOptions {
  uint32_t self_id = 0;          // this replica's process id (101..)
  std::string store_path;        // RocksDB directory
  std::string cluster_secret;
  // This process's certificate and the cluster CA (cluster::LoadIdentity);
  // null: plain TCP (tests of the process alone).
  std::shared_ptr<const rpc::TlsCredentials> tls;
  std::vector<cluster::ProcessEntry> processes;  // the whole process table
  std::vector<std::string> azs;                   // the layout's AZs, in order
  // The layout itself: the storage nodes added beyond it are checked
  // against it (meta.add_node) and live in the storage node map.
  pb::ClusterLayout layout;
  consensus::Options consensus;  // timings; self and group_id are set here
  // Buckets one S3 user may own (1..limits::kS3RegistryBucketsMax).
  size_t s3_user_buckets_max = knobs::kMetaS3UserBucketsMax.default_value;
  // Bucket placement ignores published keys older than this (bucket_placement.h).
  uint64_t placement_weights_max_age_ms = knobs::kMetaPlacementWeightsMaxAgeMs.default_value;
};

class MetaService {
 public:
  // Opens the store, rebuilds the MemDS, starts the group and the server on
  // the entry's peer port. IOError when the port is taken, InvalidArgument
  // for options that do not name this replica, storage errors as is.
  static Result<std::unique_ptr<MetaService>> Start(rpc::RpcContext context,
                                                    MetaServiceOptions options);
  // Runs Shutdown.
  ~MetaService();
  MetaService(const MetaService&) = delete;
  MetaService& operator=(const MetaService&) = delete;

  // Stops serving: server, worker, group, channels. Idempotent.
  void Shutdown();

  const MemDs& memds() const { return memds_; }
  const RegistryMemds& registry() const { return registry_; }
  uint16_t port() const { return server_->port(); }

 private:
  using Task = std::function<void()>;

  MetaService(rpc::RpcContext context, MetaServiceOptions options);
  Status Init();
  Status RegisterHandlers();
  // MemDS maintenance, on the group's strand.
  Status RebuildMemds();
  void OnApplied(const std::vector<pb::Entry>& entries);

  // Handlers.
  void HandleConsensus(const pb::Envelope& request);
  void HandleLookup(const pb::Envelope& request, rpc::Responder responder);
  void HandleLookupBatch(const pb::Envelope& request, rpc::Responder responder);
  void HandleStatus(rpc::Responder responder);
  void HandleFaults(const pb::Envelope& request, const rpc::Responder& responder);
  void HandleCreateTable(const rpc::PeerInfo& peer, const pb::Envelope& request,
                         rpc::Responder responder);
  // Queues `task` for the worker thread; Throttled (answered) when full.
  void Enqueue(const char* method, const rpc::Responder& responder, Task task);
  // meta.autoadmin_lease / meta.update_partition (PartitionAdmin), on the
  // worker thread; NotLeader answers are forwarded to the leader.
  void RunPartitionAdmin(const rpc::PeerInfo& peer, const pb::Envelope& request,
                         rpc::Responder responder);
  // meta.request_split: the partition holding the key (MemDs), then
  // PartitionAdmin::RequestSplit; InvalidArgument for an unknown table.
  Result<pb::SplitRequestRecord> RequestSplit(PartitionAdmin& admin,
                                              const pb::RequestSplitRequest& request);

  // create_table, on the worker thread.
  void RunCreateTable(const rpc::PeerInfo& peer, const std::string& payload,
                      rpc::Responder responder);
  Result<pb::CreateTableResponse> CreateTable(const pb::CreateTableRequest& request);
  Result<pb::CreateTableResponse> AnswerExisting(const std::string& name,
                                                 const std::vector<std::string>& split_points,
                                                 const pb::TableCapacity& capacity);
  Result<pb::CreateTableResponse> BuildTable(const std::string& name,
                                             const std::vector<std::string>& split_points,
                                             uint64_t table_id, uint64_t first_group_id);
  Status EnsureGroups(const std::vector<pb::PartitionDescriptor>& partitions);
  Result<std::optional<pb::KvRecord>> ReadStrong(const std::string& key);
  Result<pb::KvApplyResult> WriteSync(pb::KvBatch batch);
  // Waits `ms` unless Shutdown starts; false when it did.
  bool SleepUnlessStopping(uint32_t ms);
  void WorkerLoop();

  rpc::RpcContext context_;
  MetaServiceOptions options_;
  std::vector<NodeInfo> nodes_;
  metrics::Counter& lookups_;
  metrics::Counter& create_tables_;
  metrics::Gauge& map_version_;

  MemDs memds_;
  RegistryMemds registry_;
  // Disk fault knobs (admin.faults), shared with the store's writer.
  std::shared_ptr<storage::StorageFaults> storage_faults_ = std::make_shared<storage::StorageFaults>();
  std::unique_ptr<storage::NodeStore> store_;
  std::unique_ptr<rpc::ChannelPool> pool_;
  std::unique_ptr<node::BatchingMessageSender> sender_;
  std::shared_ptr<node::GroupHost> host_;
  std::unique_ptr<RegistryService> registry_service_;
  std::unique_ptr<PartitionAdmin> partition_admin_;
  std::unique_ptr<rpc::RpcServer> server_;

  std::mutex mu_;  // guards tasks_ and stopping_
  std::condition_variable cv_;
  std::deque<Task> tasks_;
  bool stopping_ = false;
  std::thread worker_;
  bool shut_down_ = false;
};

}  // namespace tessera::meta
