#include "experiment/schedule.h"

#include <algorithm>

#include "cluster/process_table.h"
#include "experiment/experiment_limits.h"
#include "sim/prng.h"

namespace tessera::experiment {
namespace {

// Stream labels of the seed (sim::DeriveSeed): one per kind of choice, so
// adding a choice of one kind leaves the others' streams unchanged.
constexpr uint64_t kStreamFaultKinds = 1;
constexpr uint64_t kStreamTargets = 2;

// Resolves random_node / random_az with `prng`; other targets unchanged.
Result<pb::FaultTarget> ResolveTarget(const pb::FaultTarget& target,
                                      const pb::ClusterLayout& layout, sim::Prng& prng) {
  pb::FaultTarget out = target;
  if (target.has_random_node()) {
    const auto nodes = cluster::ProcessTable(layout).OfRole(cluster::ProcessRole::kNode);
    if (nodes.empty()) return Status::InvalidArgument("random_node: the layout has no storage node");
    out.set_process(nodes[prng.Below(nodes.size())].name);
  } else if (target.has_random_az()) {
    if (layout.azs_size() == 0) return Status::InvalidArgument("random_az: the layout has no AZ");
    out.set_az(layout.azs(static_cast<int>(prng.Below(layout.azs_size()))));
  }
  return out;
}

ScheduledFault FromStep(const pb::FaultStep& step, uint64_t start_ms, uint64_t end_ms) {
  ScheduledFault f;
  f.kind = step.kind();
  f.target = step.target();
  f.start_ms = start_ms;
  f.end_ms = end_ms;
  f.slow_ms = step.slow_ms();
  f.peer_az = step.peer_az();
  f.offset_ms = step.offset_ms();
  f.skew_ppm = step.skew_ppm();
  return f;
}

Result<std::vector<ScheduledFault>> FixedSchedule(const pb::FixedNemesis& fixed,
                                                  const pb::ClusterLayout& layout,
                                                  sim::Prng& targets, uint64_t duration_ms) {
  std::vector<ScheduledFault> out;
  for (const pb::FaultStep& step : fixed.steps()) {
    const uint64_t start_ms = uint64_t{step.at_s()} * 1000;
    if (start_ms >= duration_ms) continue;
    const uint64_t end_ms = std::min(start_ms + uint64_t{step.duration_s()} * 1000, duration_ms);
    ScheduledFault f = FromStep(step, start_ms, end_ms);
    auto target = ResolveTarget(step.target(), layout, targets);
    if (!target.ok()) return target.status();
    f.target = *target;
    out.push_back(std::move(f));
  }
  return out;
}

Result<std::vector<ScheduledFault>> RandomSchedule(const pb::RandomNemesis& random,
                                                   const pb::ClusterLayout& layout, uint64_t seed,
                                                   uint64_t duration_ms) {
  sim::Prng kinds(sim::DeriveSeed(seed, kStreamFaultKinds));
  sim::Prng targets(sim::DeriveSeed(seed, kStreamTargets));
  const uint64_t gap_ms = uint64_t{random.gap_s() == 0 ? kRandomGapSDefault : random.gap_s()} * 1000;
  std::vector<ScheduledFault> out;
  uint64_t t_ms = uint64_t{random.quiet_s()} * 1000;
  while (out.size() < kFaultsMax) {
    const pb::FaultStep& step = random.kinds(static_cast<int>(kinds.Below(random.kinds_size())));
    const uint64_t end_ms = t_ms + uint64_t{step.duration_s()} * 1000;
    if (end_ms > duration_ms) break;
    ScheduledFault f = FromStep(step, t_ms, end_ms);
    auto target = ResolveTarget(step.target(), layout, targets);
    if (!target.ok()) return target.status();
    f.target = *target;
    out.push_back(std::move(f));
    t_ms = end_ms + gap_ms;
  }
  return out;
}

}  // namespace

bool ScheduledFault::operator==(const ScheduledFault& o) const {
  return kind == o.kind && target.SerializeAsString() == o.target.SerializeAsString() &&
         start_ms == o.start_ms && end_ms == o.end_ms && slow_ms == o.slow_ms && peer_az == o.peer_az &&
         offset_ms == o.offset_ms && skew_ppm == o.skew_ppm;
}

Result<std::vector<ScheduledFault>> BuildSchedule(const pb::Experiment& spec,
                                                  const pb::ClusterLayout& layout, uint64_t seed,
                                                  uint32_t duration_s) {
  const uint64_t duration_ms = uint64_t{duration_s} * 1000;
  Result<std::vector<ScheduledFault>> faults = std::vector<ScheduledFault>();
  if (spec.nemesis().has_fixed()) {
    sim::Prng targets(sim::DeriveSeed(seed, kStreamTargets));
    faults = FixedSchedule(spec.nemesis().fixed(), layout, targets, duration_ms);
  } else if (spec.nemesis().has_random()) {
    faults = RandomSchedule(spec.nemesis().random(), layout, seed, duration_ms);
  }
  if (!faults.ok()) return faults.status();
  std::stable_sort(faults->begin(), faults->end(),
                   [](const ScheduledFault& a, const ScheduledFault& b) {
                     return a.start_ms < b.start_ms;
                   });
  if (faults->size() > kFaultsMax) faults->resize(kFaultsMax);
  return faults;
}

std::vector<AzCut> AzCuts(pb::FaultKind kind, const std::vector<std::string>& azs,
                          const std::string& az, const std::string& peer_az) {
  std::vector<AzCut> cuts;
  std::vector<std::string> others;
  for (const std::string& other : azs) {
    if (other != az) others.push_back(other);
  }
  switch (kind) {
    case pb::FAULT_PARTITION_AZ:
      for (const std::string& other : others) cuts.push_back({az, other, false});
      break;
    case pb::FAULT_PARTITION_ONE_WAY:
      for (const std::string& other : others) {
        if (peer_az.empty() || other == peer_az) cuts.push_back({az, other, true});
      }
      break;
    case pb::FAULT_MAJORITY_RING: {
      if (others.size() < 2) break;
      const size_t first_half = (others.size() + 1) / 2;
      for (size_t i = 0; i < first_half; ++i) {
        for (size_t j = first_half; j < others.size(); ++j) {
          cuts.push_back({others[i], others[j], false});
        }
      }
      break;
    }
    default:
      break;
  }
  return cuts;
}

bool IsAzFault(pb::FaultKind kind) {
  return kind == pb::FAULT_PARTITION_AZ || kind == pb::FAULT_PARTITION_ONE_WAY ||
         kind == pb::FAULT_MAJORITY_RING;
}

bool IsClockFault(pb::FaultKind kind) {
  return kind == pb::FAULT_CLOCK_JUMP || kind == pb::FAULT_CLOCK_SKEW;
}

bool IsRuleFault(pb::FaultKind kind) {
  return IsAzFault(kind) || kind == pb::FAULT_SLOW_DISK || kind == pb::FAULT_FULL_DISK ||
         IsClockFault(kind);
}

std::string FaultKindName(pb::FaultKind kind) {
  switch (kind) {
    case pb::FAULT_KILL: return "kill";
    case pb::FAULT_PAUSE: return "pause";
    case pb::FAULT_PARTITION_AZ: return "partition-az";
    case pb::FAULT_SLOW_DISK: return "slow-disk";
    case pb::FAULT_PARTITION_ONE_WAY: return "partition-one-way";
    case pb::FAULT_MAJORITY_RING: return "majority-ring";
    case pb::FAULT_LOST_NODE: return "lost-node";
    case pb::FAULT_FULL_DISK: return "full-disk";
    case pb::FAULT_CLOCK_JUMP: return "clock-jump";
    case pb::FAULT_CLOCK_SKEW: return "clock-skew";
    case pb::FAULT_DRAIN: return "drain";
    default: return "unspecified";
  }
}

std::string TargetName(const pb::FaultTarget& target) {
  switch (target.kind_case()) {
    case pb::FaultTarget::kProcess: return target.process();
    case pb::FaultTarget::kAz: return target.az();
    case pb::FaultTarget::kKvLeader: return "kv-leader";
    case pb::FaultTarget::kRandomNode: return "random-node";
    case pb::FaultTarget::kRandomAz: return "random-az";
    default: return "none";
  }
}

std::string Describe(const ScheduledFault& f) {
  auto seconds = [](uint64_t ms) {
    std::string s = std::to_string(ms / 1000);
    if (ms % 1000 != 0) s += "." + std::to_string(ms % 1000 / 100);
    return s;
  };
  std::string d = FaultKindName(f.kind) + " " + TargetName(f.target);
  if (f.kind == pb::FAULT_SLOW_DISK) d += " +" + std::to_string(f.slow_ms) + "ms";
  if (f.kind == pb::FAULT_PARTITION_ONE_WAY) d += " -> " + (f.peer_az.empty() ? "all" : f.peer_az);
  if (f.kind == pb::FAULT_CLOCK_JUMP) {
    d += (f.offset_ms > 0 ? " +" : " ") + std::to_string(f.offset_ms) + "ms";
  }
  if (f.kind == pb::FAULT_CLOCK_SKEW) {
    d += (f.skew_ppm > 0 ? " +" : " ") + std::to_string(f.skew_ppm) + "ppm";
  }
  return d + " [" + seconds(f.start_ms) + " s, " + seconds(f.end_ms) + " s)";
}

}  // namespace tessera::experiment
