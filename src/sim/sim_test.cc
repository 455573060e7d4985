// Goal: hundreds of seeds of 3- and 5-replica groups and dozens of 7 and
// 9 on the production host (GroupHost, PartitionStateMachine, NodeStore)
// pass every checker, lost voters are replaced as the autoadmin's planner
// decides, and runs are reproducible. (The injected bugs are caught in
// host_seed_test.cc.)
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <set>
#include <sstream>

#include "sim/host_seed.h"
#include "sim/host_sim_command.h"

namespace tessera::sim {
namespace {

// Seeds per production-host sweep, by group size (about 80 and 140 ms a
// seed on a loaded 2-core machine).
constexpr uint64_t kHostSweepSeeds3 = 400;
constexpr uint64_t kHostSweepSeeds5 = 200;
// Groups of 7 and 9 (about 4 and 6 times a 3-replica seed's cost).
constexpr uint64_t kHostSweepSeedsLarge = 30;
// Seeds of 3 and 5 replicas that lose a voter for good in the replica-loss
// sweep (7 replicas: a quarter of it).
constexpr uint64_t kHostLossSeeds = 40;

void HostSweep(uint32_t replicas, uint64_t seeds) {
  const auto started = std::chrono::steady_clock::now();
  uint64_t failures = 0;
  HostSeedStats t;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    HostSeedConfig config;
    config.seed = seed;
    config.replicas = replicas;
    const HostSeedResult result = RunHostSeed(config);
    const HostSeedStats& s = result.stats;
    t.writes_acked += s.writes_acked;
    t.crashes += s.crashes;
    t.power_losses += s.power_losses;
    t.partitions += s.partitions;
    t.splits += s.splits;
    t.pauses += s.pauses;
    t.transfers += s.transfers;
    t.campaigns += s.campaigns;
    t.strong_reads += s.strong_reads;
    t.replicas_lost += s.replicas_lost;
    t.replicas_retired += s.replicas_retired;
    t.replicas_replaced += s.replicas_replaced;
    t.membership_changes += s.membership_changes;
    t.s3_ops += s.s3_ops;
    t.s3_acked += s.s3_acked;
    if (!result.ok && ++failures <= 20) {
      ADD_FAILURE() << "seed " << seed << ": " << result.violation
                    << "\n  replay: " << HostReplayCommand(seed, "none", replicas);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(failures, 0u);
  // Each sweep must exercise what it claims to.
  EXPECT_GT(t.writes_acked, seeds * 5);
  EXPECT_GT(t.crashes, seeds / 4);
  EXPECT_GT(t.power_losses, 0u);
  EXPECT_GT(t.splits, 0u);
  EXPECT_GT(t.pauses, 0u);
  if (seeds >= 100) {  // rarer faults, in the long sweeps
    EXPECT_GT(t.transfers, 0u);
    EXPECT_GT(t.campaigns, 0u);
  }
  EXPECT_GT(t.strong_reads, seeds * 5);
  if (seeds >= 100) {
    EXPECT_GT(t.replicas_lost, 0u);
    EXPECT_GT(t.replicas_retired, 0u);
  } else if (replicas < 9) {  // a group of 9 has no room for a spare
    EXPECT_GT(t.replicas_lost + t.replicas_retired, 0u);
  }
  EXPECT_EQ(t.replicas_replaced, t.replicas_lost + t.replicas_retired);
  EXPECT_GT(t.s3_acked, 0u);  // a fourth of the seeds run S3 clients
  std::printf("[ sweep    ] production host, %u replicas: %llu seeds in %.1f s; %llu writes "
              "acknowledged, %llu crashes (%llu power losses), %llu partitions (%llu splits), "
              "%llu lease reads, %llu lost and %llu retired voters replaced, %llu S3 operations "
              "(%llu answered)\n",
              replicas, static_cast<unsigned long long>(seeds), seconds,
              static_cast<unsigned long long>(t.writes_acked),
              static_cast<unsigned long long>(t.crashes),
              static_cast<unsigned long long>(t.power_losses),
              static_cast<unsigned long long>(t.partitions),
              static_cast<unsigned long long>(t.splits),
              static_cast<unsigned long long>(t.strong_reads),
              static_cast<unsigned long long>(t.replicas_lost),
              static_cast<unsigned long long>(t.replicas_retired),
              static_cast<unsigned long long>(t.s3_ops),
              static_cast<unsigned long long>(t.s3_acked));
}

TEST(SimTest, ThreeReplicaSweep) { HostSweep(3, kHostSweepSeeds3); }
TEST(SimTest, FiveReplicaSweep) { HostSweep(5, kHostSweepSeeds5); }
TEST(SimTest, SevenReplicaSweep) { HostSweep(7, kHostSweepSeedsLarge); }
TEST(SimTest, NineReplicaSweep) { HostSweep(9, kHostSweepSeedsLarge); }

// Every seed loses a voter for good; the autoadmin's planner brings the
// group back to its size in three AZs, a log replica standing in first, through the
// production membership path, with nothing lost (the seed ends only then,
// or fails the liveness check).
TEST(HostSeedTest, ReplicaLossSweep) {
  for (uint32_t replicas : {3u, 5u, 7u}) {
    const uint64_t seeds = replicas == 7 ? kHostLossSeeds / 4 : kHostLossSeeds;
    uint64_t lost = 0, retired = 0, replaced = 0, log_replicas = 0, actions = 0, failures = 0;
    for (uint64_t seed = 1; seed <= seeds; ++seed) {
      HostSeedConfig config;
      config.replicas = replicas;
      config.seed = seed;
      config.replica_loss_every_seed = true;
      const HostSeedResult result = RunHostSeed(config);
      lost += result.stats.replicas_lost;
      retired += result.stats.replicas_retired;
      replaced += result.stats.replicas_replaced;
      log_replicas += result.stats.log_replicas;
      actions += result.stats.autoadmin_actions;
      if (!result.ok && ++failures <= 10) {
        ADD_FAILURE() << "seed " << seed << ": " << result.violation
                      << "\n  replay: " << HostReplayCommand(seed, "none", replicas, true);
      }
    }
    EXPECT_EQ(failures, 0u);
    EXPECT_EQ(lost, seeds) << "every seed loses a voter";
    EXPECT_EQ(retired, 0u);
    EXPECT_EQ(replaced, lost + retired);
    EXPECT_GE(log_replicas, lost) << "a log replica stands in for each lost voter";
    std::printf("[ loss     ] production host, %u replicas: %llu seeds, %llu voters lost for "
                "good, all replaced; %llu log replicas, %llu planned actions\n",
                replicas, static_cast<unsigned long long>(seeds),
                static_cast<unsigned long long>(lost),
                static_cast<unsigned long long>(log_replicas),
                static_cast<unsigned long long>(actions));
  }
}

TEST(SimTest, Deterministic) {
  for (uint32_t replicas : {3u, 5u}) {
    for (uint64_t seed : {17u, 99u, 123'456u}) {
      HostSeedConfig config;
      config.replicas = replicas;
      config.seed = seed;
      const HostSeedResult a = RunHostSeed(config);
      const HostSeedResult b = RunHostSeed(config);
      EXPECT_EQ(a.trace_hash, b.trace_hash) << "seed " << seed;
      EXPECT_EQ(a.stats.messages_sent, b.stats.messages_sent);
      config.seed = seed + 1;
      EXPECT_NE(RunHostSeed(config).trace_hash, a.trace_hash);
    }
  }
}

}  // namespace
}  // namespace tessera::sim
