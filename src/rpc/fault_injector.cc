#include "rpc/fault_injector.h"

#include <spdlog/spdlog.h>

#include "common/limits.h"
#include "common/splitmix64.h"

namespace tessera::rpc {
namespace {

}  // namespace

FaultInjector::FaultInjector(uint64_t seed) : prng_state_(seed) {}

Status FaultInjector::SetRule(uint32_t destination_peer_id, FaultRule rule) {
  if (!(rule.drop_probability >= 0 && rule.drop_probability <= 1)) {
    return Status::InvalidArgument("fault rule: drop probability must be within [0, 1]");
  }
  if (rule.delay_ms > limits::kRpcFaultDelayMsMax) {
    return Status::InvalidArgument("fault rule: delay_ms above " +
                                   std::to_string(limits::kRpcFaultDelayMsMax));
  }
  {
    std::lock_guard lock(mu_);
    if (!rules_.contains(destination_peer_id) && rules_.size() >= limits::kRpcFaultRulesMax) {
      return Status::InvalidArgument("fault rule: too many rules");
    }
    rules_[destination_peer_id] = rule;
    has_rules_.store(true, std::memory_order_release);
  }
  spdlog::warn("rpc.fault_rule_set dest_peer_id={} drop_probability={} delay_ms={}",
               destination_peer_id, rule.drop_probability, rule.delay_ms);
  return Status::Ok();
}

void FaultInjector::ClearRule(uint32_t destination_peer_id) {
  std::lock_guard lock(mu_);
  if (rules_.erase(destination_peer_id) > 0) {
    spdlog::warn("rpc.fault_rule_cleared dest_peer_id={}", destination_peer_id);
  }
  has_rules_.store(!rules_.empty(), std::memory_order_release);
}

void FaultInjector::ClearAll() {
  std::lock_guard lock(mu_);
  if (!rules_.empty()) spdlog::warn("rpc.fault_rules_cleared count={}", rules_.size());
  rules_.clear();
  has_rules_.store(false, std::memory_order_release);
}

std::optional<FaultRule> FaultInjector::GetRule(uint32_t destination_peer_id) const {
  std::lock_guard lock(mu_);
  const auto it = rules_.find(destination_peer_id);
  if (it == rules_.end()) return std::nullopt;
  return it->second;
}

FaultDecision FaultInjector::Decide(uint32_t destination_peer_id) {
  if (!has_rules_.load(std::memory_order_acquire)) return {};
  std::lock_guard lock(mu_);
  const auto it = rules_.find(destination_peer_id);
  if (it == rules_.end()) return {};
  const FaultRule& rule = it->second;
  FaultDecision decision;
  decision.delay_ms = rule.delay_ms;
  if (rule.drop_probability > 0) {
    decision.drop = UnitInterval(SplitMix64Next(prng_state_)) < rule.drop_probability;
  }
  return decision;
}

}  // namespace tessera::rpc
