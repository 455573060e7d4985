#include "node/fault_rules.h"

#include <spdlog/spdlog.h>

#include "common/fault_clock.h"
#include "common/limits.h"
#include "common/result.h"

namespace tessera::node {

Status ApplyFaultRules(const pb::FaultRules& rules, rpc::FaultInjector& faults,
                       storage::StorageFaults& disk) {
  for (const pb::PeerFault& p : rules.peers()) {
    if (p.peer_id() == 0 || !(p.drop_probability() >= 0 && p.drop_probability() <= 1) ||
        p.delay_ms() > limits::kRpcFaultDelayMsMax) {
      return Status::InvalidArgument("bad fault rule for peer " + std::to_string(p.peer_id()));
    }
  }
  if (rules.fsync_delay_ms() > limits::kStorageFaultDelayMsMax) {
    return Status::InvalidArgument("fsync_delay_ms above its limit");
  }
  if (rules.clock_offset_ms() < -fault_clock::kOffsetMsMax ||
      rules.clock_offset_ms() > fault_clock::kOffsetMsMax) {
    return Status::InvalidArgument("clock_offset_ms beyond +-" +
                                   std::to_string(fault_clock::kOffsetMsMax));
  }
  if (rules.clock_skew_ppm() < -fault_clock::kSkewPpmMax ||
      rules.clock_skew_ppm() > fault_clock::kSkewPpmMax) {
    return Status::InvalidArgument("clock_skew_ppm beyond +-" +
                                   std::to_string(fault_clock::kSkewPpmMax));
  }
  if (rules.replace()) faults.ClearAll();
  for (const pb::PeerFault& p : rules.peers()) {
    if (p.drop_probability() == 0 && p.delay_ms() == 0) {
      faults.ClearRule(p.peer_id());
      continue;
    }
    TESSERA_RETURN_IF_ERROR(
        faults.SetRule(p.peer_id(), rpc::FaultRule{p.drop_probability(), p.delay_ms()}));
  }
  disk.fsync_delay_ms = rules.fsync_delay_ms();
  disk.fail_writes = rules.fail_writes();
  fault_clock::SetWallOffsetMs(rules.clock_offset_ms());
  fault_clock::SetMonotonicSkewPpm(rules.clock_skew_ppm());
  spdlog::warn("faults.set peers={} fsync_delay_ms={} fail_writes={} clock_offset_ms={} "
               "clock_skew_ppm={} replace={}",
               rules.peers_size(), rules.fsync_delay_ms(), rules.fail_writes(),
               rules.clock_offset_ms(), rules.clock_skew_ppm(), rules.replace());
  return Status::Ok();
}

pb::FaultRules FaultRulesInForce(const std::vector<uint32_t>& peers,
                                 const rpc::FaultInjector& faults,
                                 const storage::StorageFaults& disk) {
  pb::FaultRules in_force;
  for (uint32_t peer : peers) {
    const std::optional<rpc::FaultRule> rule = faults.GetRule(peer);
    if (!rule) continue;
    pb::PeerFault* p = in_force.add_peers();
    p->set_peer_id(peer);
    p->set_drop_probability(rule->drop_probability);
    p->set_delay_ms(rule->delay_ms);
  }
  in_force.set_fsync_delay_ms(disk.fsync_delay_ms.load());
  in_force.set_fail_writes(disk.fail_writes.load());
  in_force.set_clock_offset_ms(fault_clock::WallOffsetMs());
  in_force.set_clock_skew_ppm(fault_clock::MonotonicSkewPpm());
  return in_force;
}

}  // namespace tessera::node
