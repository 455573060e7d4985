// NodeServer: a storage node's serving side. A ReplicationHost (store, groups,
// consensus sender) behind one RpcServer on the node's peer port and one
// HttpServer (metrics, health) on its http port, with outbound consensus
// traffic through a ChannelPool to the peers given.
//
// RPC methods (proto/tessera/cluster_rpc.proto):
//   consensus.batch     one-way ConsensusBatch -> each message to its group
//                       (unknown groups: counted, dropped)
//   kv.get/scan/write   to the group's GroupHost; errors as the envelope
//                       status (NotFound for a group not hosted here,
//                       NotLeader with the leader's node id as hint, ...).
//                       First charged against the table's capacity
//                       (KvAdmission, docs/admission.md): ThroughputExceeded
//                       when refused; units given back when not served.
//                       A key outside the group's range (its stored
//                       descriptor; partition_range.h) is refused first
//                       with WrongPartition, nothing proposed or read.
//   admin.create_group  ReplicationHost::CreateGroup (idempotent)
//   admin.status        NodeStatus with every group's status
//   admin.state_digest  text, one line per hosted group: "group=G applied=A
//                       pairs=P bytes=B checksum=C" (GroupHost::StateDigest,
//                       scanned on the node's digest thread, one group at a
//                       time); replicas with equal lines hold equal states.
//                       For operators and tests (`tessera cluster digest`).
//   admin.faults        FaultRules: per-peer drop/delay on outbound frames
//                       (rpc FaultInjector; merged unless `replace`), and
//                       the disk knobs fsync_delay_ms / fail_writes, which
//                       always take the request's values (absent = off) and
//                       apply to the log's synced writes and to blob fsyncs.
//                       Answers the rules now in force.
//   s3.blob_refs/blob_scan
//                       blob references of `_s3` partitions (s3_blob_refs.h)
//   blob.put/read/delete/list/stat
//                       the node's blob store (blob::BlobService,
//                       proto/tessera/blob.proto, docs/formats/blobs.md): file
//                       work on a few blob worker threads, never on the io
//                       threads; Throttled when their queue is full.
// Background: the blob GC of the `_s3` partitions this node leads
// (BlobGc) and the orphan sweeper/repairer of its blob copies
// (BlobMaintenance), each on its own thread.
// Who may call which method: cluster::NodeAccessPolicy (rpc_access.h).
// HTTP (unauthenticated, so nothing that costs more than a render): GET
// /metrics (Prometheus text), GET /health (200 JSON with the groups while
// serving, 503 otherwise).
//
// Lifecycle: Start, then Stop from a thread not running the io_context
// while it runs; then stop the io threads; then destroy the NodeServer
// (which closes the store). The io_context, registry and fault injector
// must outlive the NodeServer.
//
// Thread safety: Start/Stop from one thread; accessors from any thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "admission/node_admission.h"
#include "common/metrics.h"
#include "common/result.h"
#include "knobs/knobs.h"
#include "node/blob_gc.h"
#include "node/blob_maintenance.h"
#include "node/replication_host.h"
#include "rpc/fault_injector.h"
#include "rpc/types.h"

namespace tessera::node {

struct PeerAddress {
  uint32_t id = 0;
  std::string host;
  uint16_t port = 0;
  std::string az;  // storage nodes: their AZ (the blob slot map needs it)
  // A storage node added beyond the layout (cluster/added_nodes.h): not in
  // the layout's blob slot map, which the storage node map extends.
  bool added = false;
};

struct NodeServerOptions {
  uint32_t node_id = 0;  // process id from the layout (or the added nodes)
  bool added = false;    // this node was added beyond the layout
  std::string name;
  std::string az;
  std::string cluster_secret;
  // This process's certificate and the cluster CA (cluster::LoadIdentity);
  // null: plain TCP (tests of the process alone).
  std::shared_ptr<const rpc::TlsCredentials> tls;
  std::string rpc_host = "127.0.0.1";
  uint16_t rpc_port = 0;   // 0: any free port
  std::string http_host = "127.0.0.1";
  uint16_t http_port = 0;  // 0: any free port
  std::string store_path;  // RocksDB directory
  // Fault injection (off by default): NodeStoreOptions::fault_install_delay_ms.
  uint32_t fault_snapshot_install_delay_ms = knobs::kNodeFaultSnapshotInstallDelayMs.default_value;
  // Threads the process runs the io_context on (cluster::IoThreadsFor; 0:
  // the default). Read by `tessera node`, not by NodeServer, which runs on
  // whatever io_context it is given.
  uint32_t io_threads = knobs::kNodeIoThreads.default_value;
  // Blob store directory; empty: "blobs" beside the RocksDB directory.
  std::string blob_path;
  // Processes this node sends consensus messages to (itself is skipped).
  std::vector<PeerAddress> peers;
  // The metadata replicas (the blob sweeper reads the `_s3` partition map).
  // Empty: no GC, no sweeper (in-process tests).
  std::vector<PeerAddress> meta_peers;
  // The GAC instances (the tables' consumption for adaptive capacity);
  // empty: partitions keep their static shares.
  std::vector<PeerAddress> gac_peers;
  BlobGcOptions gc;
  BlobSweepOptions sweep;
  GroupHostOptions group_defaults;  // timings for every group
  // How often group gauges and storage counters are refreshed.
  uint32_t stats_interval_ms = 1000;
  // Capacity admission of KV requests (node/kv_admission.h); its table
  // capacities come from meta_peers (none: nothing is charged).
  admission::NodeAdmissionOptions admission;
};

class NodeServer {
 public:
  // Opens the store, restores groups, starts serving. IOError when a port is
  // taken; the store's errors.
  static Result<std::unique_ptr<NodeServer>> Start(boost::asio::io_context& io,
                                                   metrics::Registry& metrics,
                                                   rpc::FaultInjector& faults,
                                                   NodeServerOptions options);
  ~NodeServer();
  NodeServer(const NodeServer&) = delete;
  NodeServer& operator=(const NodeServer&) = delete;

  // Stops serving (HTTP, RPC), stops the groups and the outbound channels.
  // Idempotent.
  void Stop();

  uint16_t rpc_port() const;
  uint16_t http_port() const;
  ReplicationHost& replication() { return *replication_; }

 private:
  class Impl;
  explicit NodeServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  ReplicationHost* replication_ = nullptr;
};

}  // namespace tessera::node
