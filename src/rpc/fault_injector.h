// FaultInjector: per-destination rules that drop or delay a process's
// outbound RPC frames (requests, one-way messages and responses; never the
// handshake), changed at runtime without code changes. One injector is
// shared by every server and channel of a process, so a rule for peer P
// affects everything this process sends to P and nothing P sends here: a
// rule on each side cuts a link both ways, rules for every node of an AZ
// cut the AZ off.
//
// Contract:
//  1. Decide(P) with no rule for P returns {drop=false, delay_ms=0} and
//     draws nothing from the PRNG.
//  2. With a rule, drop is true with probability drop_probability, drawn
//     from a SplitMix64 stream seeded at construction: the same seed and the
//     same sequence of Decide calls give the same decisions. Probability 1
//     drops everything, 0 nothing.
//  3. A dropped frame is never written (a call whose request is dropped
//     times out). A delayed frame is written no earlier than delay_ms after
//     it was queued and keeps its place in the FIFO (delays never reorder;
//     frames behind it wait too, like a slow link).
//
// Thread safety: every method may be called from any thread. Decide takes
// no lock while the injector has no rule (an atomic flag); mu_ guards the
// rules and the PRNG.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "common/status.h"

namespace tessera::rpc {

struct FaultRule {
  double drop_probability = 0;  // 0..1
  uint32_t delay_ms = 0;        // 0..limits::kRpcFaultDelayMsMax
};

struct FaultDecision {
  bool drop = false;
  uint32_t delay_ms = 0;
};

class FaultInjector {
 public:
  explicit FaultInjector(uint64_t seed = 0);
  FaultInjector(const FaultInjector&) = delete;
  FaultInjector& operator=(const FaultInjector&) = delete;

  // Sets (replaces) the rule for frames sent to `destination_peer_id`.
  // InvalidArgument for a probability outside [0, 1], a delay above the
  // limit, or more than limits::kRpcFaultRulesMax rules.
  Status SetRule(uint32_t destination_peer_id, FaultRule rule);
  void ClearRule(uint32_t destination_peer_id);
  void ClearAll();
  std::optional<FaultRule> GetRule(uint32_t destination_peer_id) const;

  // The fate of one frame about to be queued for `destination_peer_id`.
  FaultDecision Decide(uint32_t destination_peer_id);

 private:
  std::atomic<bool> has_rules_{false};
  mutable std::mutex mu_;  // guards rules_ and prng_state_
  std::unordered_map<uint32_t, FaultRule> rules_;
  uint64_t prng_state_;
};

}  // namespace tessera::rpc
