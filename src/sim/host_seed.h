// RunHostSeed: one seed of the simulator on the production host
// (HostCluster): a plan drawn from the seed (network loss, duplication and
// delays; crashes with torn tails, in the middle of group commits and
// apply batches; partitions; a disk returning errors; a process dying in
// the middle of a snapshot install; a log compacted early enough that
// lagging replicas need snapshots), a stream of writes through the leader,
// a heal, and the checkers:
//   durability  every acknowledged write is on every replica at the end;
//   agreement   the replicas' state digests are equal at the end;
//   liveness    after the heal a write is acknowledged within a bound.
// The same seed gives the same trace (trace_hash) and the same result.
//
// Thread safety: none; each call owns its cluster.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tessera::sim {

struct HostSeedConfig {
  uint64_t seed = 1;
  uint32_t rounds = 30;  // writes attempted before the heal
  std::ostream* trace = nullptr;  // every trace line, when set
};

struct HostSeedStats {
  uint64_t writes_acked = 0;
  uint64_t crashes = 0;
  uint64_t partitions = 0;
  uint64_t disk_faults = 0;
  uint64_t install_faults = 0;
  uint64_t messages_sent = 0;
  uint64_t virtual_time_us = 0;
};

struct HostSeedResult {
  bool ok = true;
  std::string violation;  // the first checker that failed, and why
  uint64_t trace_hash = 0;
  HostSeedStats stats;
};

HostSeedResult RunHostSeed(const HostSeedConfig& config);

// The durability checker, on the values each replica holds for the
// acknowledged keys: empty when every replica holds every acknowledged
// value, else the first missing or different one.
std::string CheckAcknowledgedWrites(
    const std::map<std::string, std::string>& acked,
    const std::map<uint32_t, std::map<std::string, std::optional<std::string>>>& held);
// The agreement checker: empty when every digest equals the first.
std::string CheckDigestsEqual(const std::map<uint32_t, std::string>& digests);

}  // namespace tessera::sim
