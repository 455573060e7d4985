// KvRouter: sends KV operations to the leader of the partition that holds
// their key, following redirects and retrying what is safe to retry.
//
// Contract (every operation):
//  1. `done` is called exactly once, from an io or channel thread (or
//     before the call returns, for an argument refused at once).
//  2. The partition comes from the RouteResolver (cache + MemDS). The target
//     is, in order: the node named by the last NotLeader hint, the cached
//     leader hint, then the partition's replicas in turn; a node avoided as
//     unresponsive (2a) is skipped while another replica is not.
//  2a. A call that ends without an answer from its node (the rpc layer
//     timed out after sending, or could not send) marks the node
//     unresponsive for avoid_unresponsive_ms (router/unresponsive_nodes.h)
//     and forgets it as the partition's cached leader; any answer from the
//     node clears the mark. So after one timeout against a paused or cut
//     off leader, later operations go to the other replicas, which name the
//     new leader once one is elected, instead of each waiting rpc_timeout_ms.
//  3. NotLeader with a hint: retried at once on the hinted node (the cache
//     learns the hint). NotLeader without a hint, or naming an avoided node:
//     the next replica is tried after a (leader-search) backoff; without a
//     hint the cache entry is also invalidated. StaleEpoch, NotFound (the
//     node does not host the group): invalidated, retried.
//  3a. WrongPartition (the group split and no longer owns the key; the
//     node proposed and read nothing): the route is invalidated and the
//     operation resent at once, the first time with no backoff; later ones
//     (meta's map does not show the split yet) after a leader-search
//     backoff. It never reaches the caller: running out of attempts on it
//     gives Unavailable.
//  4. ThroughputExceeded (the table's capacity, docs/admission.md) is an
//     answer (from a node, or from this router's GAC share, set_gac): returned to the caller at once, never retried here nor sent
//     to another replica (a refused write was not applied).
//     Gets and scans are retried on every transient failure (Throttled,
//     Aborted, Unavailable, Timeout). Writes are retried only when the
//     failure proves the write did not take effect (WriteMayHaveBeenApplied
//     is false): the channel never sent the request, or the node answered
//     NotLeader, StaleEpoch, NotFound, WrongPartition, Throttled or
//     Aborted. A write whose
//     outcome is unknown (a timeout, a connection lost or a channel closed
//     after sending, a node answering Unavailable or Timeout) fails with
//     Timeout ("write outcome unknown"). The decision reads the status's
//     code and SendOutcome only: rewording a message never changes it.
//  5. Backoff between attempts: initial backoff_initial_ms, doubled per
//     retry, times a random factor in [0.5, 1). It grows up to
//     backoff_max_ms after a sign of load (Throttled, Aborted, Timeout, a
//     failed route lookup), but only up to leader_search_backoff_max_ms
//     while the leader is being looked for (NotLeader without a hint,
//     StaleEpoch, NotFound, an unreachable node): replicas answer those
//     probes at once, and a leader elected meanwhile is then found within
//     one short poll instead of one long backoff after the election. The
//     operation ends by request_deadline_ms or attempts_max attempts at the
//     latest; running out while no leader answered gives Unavailable
//     "partition has no leader / no quorum". A write is not retried when
//     less than a quarter of rpc_timeout_ms would remain for the attempt
//     (it could only time out, an unknown outcome, where the answer is
//     known: not written).
//
// Metrics: tessera_router_requests_total{op,code},
// tessera_router_request_latency_seconds{op}, tessera_router_retries_total{op}.
//
// Thread safety: every method may be called from any thread. The router
// must outlive its operations (their callbacks capture it): destroy it after
// the io threads are joined.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/metrics.h"
#include "common/result.h"
#include "gac/gac_client.h"
#include "router/route_resolver.h"
#include "router/unresponsive_nodes.h"
#include "rpc/channel_pool.h"
#include "tessera/kv.pb.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace tessera::router {

struct KvRouterOptions {
  uint32_t request_deadline_ms = 5'000;  // whole operation, all attempts
  uint32_t rpc_timeout_ms = 2'000;       // one attempt
  uint32_t backoff_initial_ms = 10;
  uint32_t backoff_max_ms = 500;
  uint32_t leader_search_backoff_max_ms = 50;  // <= backoff_max_ms
  // Redirects count as attempts: a leader search polls at most every
  // leader_search_backoff_max_ms / 2 with two attempts per poll (a replica,
  // then the node it names), so 256 cover more than 3 s of an election.
  uint32_t attempts_max = 256;
  // How long a node that left a call unanswered is looked past (2a); 0: never.
  uint32_t avoid_unresponsive_ms = 3'000;
  uint64_t jitter_seed = 0;  // 0: from the clock
};

// InvalidArgument for options out of limits::kRouter* bounds.
Status ValidateKvRouterOptions(const KvRouterOptions& options);

// One page of a range scan.
struct ScanPage {
  std::vector<pb::KvItem> items;  // in key order
  std::optional<std::string> next;  // where the next page starts; none: done
};

// Whether a write that failed with `status` may have been applied, so
// that sending it again could apply it twice (contract 4). False only when
// the rpc layer proved the request never left this process
// (SendOutcome::kNotSent) or the node answered with a refusal (any code but
// Unavailable and Timeout); a status that does not state its send outcome
// may have been sent. Reads the code and send outcome, never the message.
bool WriteMayHaveBeenApplied(const Status& status);

class KvRouter {
 public:
  template <typename T>
  using Callback = std::function<void(Result<T>)>;

  KvRouter(boost::asio::io_context& io, rpc::ChannelPool& nodes, RouteResolver& routes,
           metrics::Registry& metrics, KvRouterOptions options);
  ~KvRouter();
  KvRouter(const KvRouter&) = delete;
  KvRouter& operator=(const KvRouter&) = delete;

  void Get(const std::string& table, const std::string& key, pb::Consistency consistency,
           Callback<pb::KvGetResponse> done);

  // `batch` must touch only `key` (the routing key): one partition applies
  // it atomically. op_name labels the metrics ("put", "delete").
  void Write(const std::string& table, const std::string& key, pb::KvBatch batch,
             const char* op_name, Callback<pb::KvApplyResult> done);

  // Any partition method (the S3 front's "kv.write" with an S3 op, "kv.get",
  // "s3.list", ...): `build` makes the request for the partition that
  // holds `key` as resolved; `done` gets the reply payload and that
  // partition. Routing, redirects and retries as above; `idempotent` says
  // whether a failure after sending may be retried (reads) or not (writes).
  // op_name labels the metrics: "s3_read", "s3_write" or "s3_list".
  using PartitionRequest = std::function<std::string(const pb::PartitionDescriptor&)>;
  using PartitionReply = std::function<void(Result<std::string>, const pb::PartitionDescriptor&)>;
  void Call(const std::string& table, const std::string& key, const char* method, bool idempotent,
            const char* op_name, PartitionRequest build, PartitionReply done);

  // Keys in [start_key, end_key) (empty end: to the end of the table), at
  // most `limit` (1..kRouterScanItemsMax), walking partitions in key order.
  void Scan(const std::string& table, const std::string& start_key, const std::string& end_key,
            uint32_t limit, pb::Consistency consistency, Callback<ScanPage> done);

  // Global admission control (docs/admission.md): Get, Write and Scan are
  // charged to the table's share on this router first, and refused with
  // ThroughputExceeded when it is spent; null (the default): not charged
  // here. Set before the first operation; `gac` outlives the router.
  void set_gac(gac::GacClient* gac) { gac_ = gac; }

 private:
  class Operation;
  class ScanWalk;
  struct OpMetrics;

  OpMetrics& MetricsFor(const char* op_name);
  // A factor in [0.5, 1) for backoff jitter.
  double JitterFactor();

  boost::asio::io_context& io_;
  rpc::ChannelPool& nodes_;
  RouteResolver& routes_;
  metrics::Registry& metrics_;
  const KvRouterOptions options_;
  UnresponsiveNodes unresponsive_;
  std::vector<std::unique_ptr<OpMetrics>> op_metrics_;  // fixed after construction
  std::atomic<uint64_t> jitter_state_;
  gac::GacClient* gac_ = nullptr;
};

}  // namespace tessera::router
