#include "sim/host_seed.h"

#include <memory>
#include <utility>

#include "sim/host_cluster.h"
#include "sim/prng.h"

namespace tessera::sim {
namespace {

// Random streams of a seed, apart from HostCluster's own.
enum HostSeedStream : uint64_t {
  kStreamHostPlan = 201,
  kStreamHostFaults,
};

constexpr ReplicaId kSeedReplicas = 3;
constexpr TimeUs kCatchUpBudgetUs = 30'000'000;
constexpr TimeUs kWriteBudgetUs = 5'000'000;

uint64_t TraceHash(const std::vector<std::string>& lines) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a, one '\n' after each line
  for (const std::string& line : lines) {
    for (unsigned char c : line + "\n") hash = (hash ^ c) * 0x100000001b3ULL;
  }
  return hash;
}

// Timings about ten times faster than production, as the node tests use.
HostClusterOptions PlanOptions(uint64_t seed, Prng& plan) {
  HostClusterOptions o;
  o.seed = seed;
  o.replicas = kSeedReplicas;
  o.group_id = 1 + plan.Below(1'000);
  o.consensus.tick_interval_us = 2'000;
  o.consensus.heartbeat_interval_us = 20'000;
  o.consensus.lease_duration_us = 200'000;
  o.consensus.election_timeout_min_us = 250'000;
  o.consensus.election_timeout_max_us = 500'000;
  o.consensus.check_quorum_timeout_us = 250'000;
  o.network.loss_ppm = static_cast<uint32_t>(plan.Below(30'001));
  o.network.duplicate_ppm = static_cast<uint32_t>(plan.Below(20'001));
  o.network.delay_min_us = 200 + plan.Below(800);
  o.network.delay_jitter_us = plan.Below(5'001);
  o.disk_delay_min_us = 100 + plan.Below(900);
  o.disk_delay_jitter_us = plan.Below(5'001);
  if (plan.Chance(50)) {  // lagging replicas catch up by snapshot
    o.compaction_trigger_slots = 10 + plan.Below(20);
    o.compaction_keep_slots = plan.Below(5);
    o.snapshot_chunk_bytes = 1 << 10;
    o.snapshot_install_batch_bytes = 256 + plan.Below(1'024);
  }
  return o;
}

using PendingResult = std::shared_ptr<std::optional<Result<pb::KvApplyResult>>>;

class SeedRun {
 public:
  SeedRun(const HostSeedConfig& config, HostClusterOptions options)
      : config_(config),
        cluster_(std::move(options)),
        faults_(DeriveSeed(config.seed, kStreamHostFaults)) {}

  HostSeedResult Run() {
    const uint64_t start_us = cluster_.loop().now_us();
    const Status started = cluster_.Start();
    if (!started.ok()) return Fail("start: " + started.ToString());
    for (uint32_t round = 0; round < config_.rounds; ++round) Round(round);
    Heal();
    HostSeedResult result = Check();
    result.stats = stats_;
    result.stats.messages_sent = cluster_.transport_stats().sent;
    result.stats.virtual_time_us = cluster_.loop().now_us() - start_us;
    result.trace_hash = TraceHash(cluster_.trace());
    if (config_.trace != nullptr) {
      for (const std::string& line : cluster_.trace()) *config_.trace << line << '\n';
    }
    return result;
  }

 private:
  HostSeedResult Fail(std::string violation) {
    HostSeedResult result;
    result.ok = false;
    result.violation = std::move(violation);
    return result;
  }

  void Round(uint32_t round) {
    Recover(/*all=*/false);
    if (const ReplicaId leader = cluster_.Leader(); leader != 0) {
      const std::string key = "k" + std::to_string(round);
      pending_.push_back({key, std::make_shared<std::optional<Result<pb::KvApplyResult>>>()});
      cluster_.Write(leader, Batch(key, ValueOf(key)), pending_.back().second);
    }
    cluster_.RunFor(faults_.Range(1'000, 40'000));
    if (impaired_ != 0) return;  // one replica impaired at a time: a quorum stays
    const uint64_t draw = faults_.Below(100);
    const ReplicaId victim = static_cast<ReplicaId>(faults_.Range(1, kSeedReplicas));
    const TimeUs now_us = cluster_.loop().now_us();
    if (draw < 12) {
      cluster_.Crash(victim);
      ++stats_.crashes;
      impaired_ = victim;
      until_us_ = now_us + faults_.Range(0, 500'000);
      down_ = true;
      die_in_install_ = faults_.Chance(25);
    } else if (draw < 20) {
      cluster_.Isolate(victim, true);
      ++stats_.partitions;
      impaired_ = victim;
      until_us_ = now_us + faults_.Range(50'000, 800'000);
      isolated_ = true;
    } else if (draw < 24) {
      cluster_.SetDiskFailing(victim, true);
      ++stats_.disk_faults;
      impaired_ = victim;
      until_us_ = now_us + faults_.Range(50'000, 500'000);
      disk_failing_ = true;
    }
  }

  // Ends the current impairment once its time came (or at once, `all`),
  // then restarts the replicas whose group fail-stopped.
  void Recover(bool all) {
    if (impaired_ != 0 && (all || cluster_.loop().now_us() >= until_us_)) {
      const ReplicaId id = impaired_;
      impaired_ = 0;
      if (down_) {
        RestartFaults faults;
        if (die_in_install_ && !all) {
          faults.die_in_install_after_batches = faults_.Below(3);
          ++stats_.install_faults;
        }
        Restart(id, faults);
      }
      if (isolated_) cluster_.Isolate(id, false);
      if (disk_failing_) cluster_.SetDiskFailing(id, false);
      down_ = isolated_ = disk_failing_ = die_in_install_ = false;
    }
    RestartStopped();
  }

  // A group that fail-stopped (a failed disk write, or a snapshot install
  // that stopped half-way: the process died there) restarts from its disk,
  // once the disk works again.
  void RestartStopped() {
    for (ReplicaId id = 1; id <= kSeedReplicas; ++id) {
      if (!cluster_.up(id) || (disk_failing_ && id == impaired_)) continue;
      const auto status = cluster_.StatusOf(id);
      if (status && status->stopped) {
        cluster_.Crash(id);
        ++stats_.crashes;
        Restart(id, {});
      }
    }
  }

  void Restart(ReplicaId id, const RestartFaults& faults) {
    const Status restarted = cluster_.Restart(id, faults);
    if (!restarted.ok() && restart_error_.empty()) {
      restart_error_ = "restart of replica " + std::to_string(id) + ": " + restarted.ToString();
    }
  }

  void Heal() {
    Recover(/*all=*/true);
    cluster_.network().HealLinks();
    cluster_.network().set_params(NetworkParams{});
  }

  HostSeedResult Check() {
    if (!restart_error_.empty()) return Fail(restart_error_);
    if (!CatchUp()) return Fail("liveness: no catch-up within 30 s after the heal");
    for (const auto& [key, result] : pending_) {
      if (result->has_value() && (*result)->ok()) acked_[key] = ValueOf(key);
    }
    if (!WriteAfterHeal()) return Fail("liveness: no write acknowledged after the heal");
    acked_["final"] = ValueOf("final");
    stats_.writes_acked = acked_.size();
    if (!CatchUp()) return Fail("liveness: the write after the heal not applied everywhere");
    std::map<uint32_t, std::map<std::string, std::optional<std::string>>> held;
    std::map<uint32_t, std::string> digests;
    for (ReplicaId id = 1; id <= kSeedReplicas; ++id) {
      for (const auto& [key, value] : acked_) held[id][key] = cluster_.ValueAt(id, key);
      Result<std::string> digest = cluster_.Digest(id);
      if (!digest.ok()) return Fail("digest of replica " + std::to_string(id) + ": " +
                                    digest.status().ToString());
      digests[id] = *digest;
    }
    std::string violation = CheckAcknowledgedWrites(acked_, held);
    if (violation.empty()) violation = CheckDigestsEqual(digests);
    if (!violation.empty()) return Fail(violation);
    return HostSeedResult{};
  }

  // A fault injected before the heal may still fail-stop a replica after
  // it (an install that was in flight): that process dies and restarts too.
  bool CatchUp() {
    return cluster_.RunUntil(
        [&] {
          RestartStopped();
          return cluster_.CaughtUp();
        },
        kCatchUpBudgetUs);
  }

  bool WriteAfterHeal() {
    for (int attempt = 0; attempt < 5; ++attempt) {
      if (!cluster_.RunUntil([&] { return cluster_.Leader() != 0; }, kWriteBudgetUs)) return false;
      auto result = std::make_shared<std::optional<Result<pb::KvApplyResult>>>();
      cluster_.Write(cluster_.Leader(), Batch("final", ValueOf("final")), result);
      if (!cluster_.RunUntil([&] { return result->has_value(); }, kWriteBudgetUs)) return false;
      if ((*result)->ok()) return true;
    }
    return false;
  }

  static std::string ValueOf(const std::string& key) { return "value of " + key; }
  static pb::KvBatch Batch(const std::string& key, const std::string& value) {
    pb::KvBatch batch;
    auto* w = batch.add_writes();
    w->set_key(key);
    w->set_value(value);
    return batch;
  }

  const HostSeedConfig config_;
  HostCluster cluster_;
  Prng faults_;
  HostSeedStats stats_;
  std::vector<std::pair<std::string, PendingResult>> pending_;
  std::map<std::string, std::string> acked_;
  std::string restart_error_;
  // The one impaired replica (0: none), until when, and how.
  ReplicaId impaired_ = 0;
  TimeUs until_us_ = 0;
  bool down_ = false;
  bool isolated_ = false;
  bool disk_failing_ = false;
  bool die_in_install_ = false;  // restart it with a snapshot-install fault
};

}  // namespace

HostSeedResult RunHostSeed(const HostSeedConfig& config) {
  Prng plan(DeriveSeed(config.seed, kStreamHostPlan));
  SeedRun run(config, PlanOptions(config.seed, plan));
  return run.Run();
}

std::string CheckAcknowledgedWrites(
    const std::map<std::string, std::string>& acked,
    const std::map<uint32_t, std::map<std::string, std::optional<std::string>>>& held) {
  for (const auto& [replica, values] : held) {
    for (const auto& [key, value] : acked) {
      auto it = values.find(key);
      if (it == values.end() || !it->second) {
        return "durability: replica " + std::to_string(replica) + " lost acknowledged key " + key;
      }
      if (*it->second != value) {
        return "durability: replica " + std::to_string(replica) + " holds '" + *it->second +
               "' for acknowledged key " + key + ", not '" + value + "'";
      }
    }
  }
  return "";
}

std::string CheckDigestsEqual(const std::map<uint32_t, std::string>& digests) {
  if (digests.empty()) return "";
  const auto& [first_replica, first] = *digests.begin();
  for (const auto& [replica, digest] : digests) {
    if (digest != first) {
      return "agreement: replica " + std::to_string(replica) + " digest {" + digest +
             "} differs from replica " + std::to_string(first_replica) + " {" + first + "}";
    }
  }
  return "";
}

}  // namespace tessera::sim
