// The RPC transport's metrics, looked up once per server or channel. Every
// series carries side="server" (accepting side) or side="client"
// (connecting side, i.e. channels).
//
//   tessera_rpc_frames_sent_total, tessera_rpc_frames_received_total
//   tessera_rpc_bytes_sent_total, tessera_rpc_bytes_received_total
//   tessera_rpc_writes_total                 gather writes (frames/writes = batching)
//   tessera_rpc_connections_opened_total     handshakes completed
//   tessera_rpc_connections                  gauge: open, authenticated connections
//   tessera_rpc_connect_failures_total       client: connect or handshake failed
//   tessera_rpc_auth_failures_total{reason}  handshake refused (docs/formats/rpc.md)
//   tessera_rpc_malformed_frames_total{reason}
//   tessera_rpc_throttled_total              refused: queue, pending calls or in-flight bound
//   tessera_rpc_discarded_frames_total       queued frames lost with their connection
//   tessera_rpc_slow_peer_closes_total       server: closed, peer left queue_bytes_max unread
//   tessera_rpc_fault_dropped_frames_total, tessera_rpc_fault_delayed_frames_total
//   tessera_rpc_unknown_method_total         server: request for no registered handler
//   tessera_rpc_permission_denied_total{method}  server: refused by the access policy
//   tessera_rpc_late_responses_total         client: response after timeout or failure
//   tessera_rpc_calls_total{code}            client: calls completed, by StatusCode name
//   tessera_rpc_call_latency_seconds         client: Call() to callback, answered calls
//
// Thread safety: as metrics::Registry; the object itself is immutable.
#pragma once

#include <string>
#include <string_view>

#include "common/metrics.h"
#include "common/status.h"

namespace tessera::rpc {

class RpcMetrics {
 public:
  // `side`: "server" or "client". `registry` must outlive this object.
  RpcMetrics(metrics::Registry& registry, std::string_view side);

  std::string_view side() const { return side_; }

  metrics::Counter& frames_sent;
  metrics::Counter& frames_received;
  metrics::Counter& bytes_sent;
  metrics::Counter& bytes_received;
  metrics::Counter& writes;
  metrics::Counter& connections_opened;
  metrics::Gauge& connections;
  metrics::Counter& connect_failures;
  metrics::Counter& throttled;
  metrics::Counter& discarded_frames;
  metrics::Counter& slow_peer_closes;
  metrics::Counter& fault_dropped_frames;
  metrics::Counter& fault_delayed_frames;
  metrics::Counter& unknown_method;
  metrics::Counter& late_responses;
  metrics::Histogram& call_latency_seconds;

  // Labelled counters of rare events, looked up when they happen.
  metrics::Counter& auth_failures(std::string_view reason) const;
  metrics::Counter& malformed_frames(std::string_view reason) const;
  metrics::Counter& calls(StatusCode code) const;
  // `method`: a registered one (so the label set stays bounded).
  metrics::Counter& permission_denied(std::string_view method) const;

 private:
  metrics::Registry& registry_;
  std::string side_;
};

}  // namespace tessera::rpc
