#include "rpc/rpc_metrics.h"

namespace tessera::rpc {
namespace {

metrics::Labels Side(std::string_view side) { return {{"side", std::string(side)}}; }

metrics::Labels SideAnd(std::string_view side, std::string_view key, std::string_view value) {
  return {{"side", std::string(side)}, {std::string(key), std::string(value)}};
}

}  // namespace

RpcMetrics::RpcMetrics(metrics::Registry& r, std::string_view side)
    : frames_sent(r.GetCounter("tessera_rpc_frames_sent_total", "RPC frames written to sockets.",
                               Side(side))),
      frames_received(r.GetCounter("tessera_rpc_frames_received_total",
                                   "Verified RPC frames read from sockets.", Side(side))),
      bytes_sent(r.GetCounter("tessera_rpc_bytes_sent_total",
                              "Bytes written to RPC sockets, headers included.", Side(side))),
      bytes_received(r.GetCounter("tessera_rpc_bytes_received_total",
                                  "Bytes read from RPC sockets.", Side(side))),
      writes(r.GetCounter("tessera_rpc_writes_total",
                          "Gather writes to RPC sockets; frames_sent/writes is the batching.",
                          Side(side))),
      connections_opened(r.GetCounter("tessera_rpc_connections_opened_total",
                                      "RPC connections that completed the handshake.",
                                      Side(side))),
      connections(r.GetGauge("tessera_rpc_connections", "Open authenticated RPC connections.",
                             Side(side))),
      connect_failures(r.GetCounter("tessera_rpc_connect_failures_total",
                                    "Outbound RPC connects or handshakes that failed.",
                                    Side(side))),
      throttled(r.GetCounter("tessera_rpc_throttled_total",
                             "RPC messages refused because a queue or window was full.",
                             Side(side))),
      discarded_frames(r.GetCounter("tessera_rpc_discarded_frames_total",
                                    "Queued RPC frames lost when their connection failed.",
                                    Side(side))),
      slow_peer_closes(r.GetCounter("tessera_rpc_slow_peer_closes_total",
                                    "Connections closed because the peer left too many response bytes unread.",
                                    Side(side))),
      fault_dropped_frames(r.GetCounter("tessera_rpc_fault_dropped_frames_total",
                                        "RPC frames dropped by fault injection.", Side(side))),
      fault_delayed_frames(r.GetCounter("tessera_rpc_fault_delayed_frames_total",
                                        "RPC frames delayed by fault injection.", Side(side))),
      unknown_method(r.GetCounter("tessera_rpc_unknown_method_total",
                                  "RPC requests for a method with no handler.", Side(side))),
      late_responses(r.GetCounter("tessera_rpc_late_responses_total",
                                  "RPC responses that arrived after their call completed.",
                                  Side(side))),
      call_latency_seconds(r.GetHistogram("tessera_rpc_call_latency_seconds",
                                          "Time from Call to its response.",
                                          metrics::LatencyBucketsSeconds(), Side(side))),
      registry_(r),
      side_(side) {}

metrics::Counter& RpcMetrics::auth_failures(std::string_view reason) const {
  return registry_.GetCounter("tessera_rpc_auth_failures_total",
                              "RPC handshakes refused, by reason.",
                              SideAnd(side_, "reason", reason));
}

metrics::Counter& RpcMetrics::malformed_frames(std::string_view reason) const {
  return registry_.GetCounter("tessera_rpc_malformed_frames_total",
                              "Malformed RPC frames (connection closed), by reason.",
                              SideAnd(side_, "reason", reason));
}

metrics::Counter& RpcMetrics::calls(StatusCode code) const {
  return registry_.GetCounter("tessera_rpc_calls_total", "RPC calls completed, by status code.",
                              SideAnd(side_, "code", StatusCodeName(code)));
}

metrics::Counter& RpcMetrics::permission_denied(std::string_view method) const {
  return registry_.GetCounter("tessera_rpc_permission_denied_total",
                              "RPC requests refused by the access policy, by method.",
                              SideAnd(side_, "method", method));
}

}  // namespace tessera::rpc
