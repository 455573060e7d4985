// Goal: hundreds of seeds of 3- and 5-replica groups on the production
// host (GroupHost, PartitionStateMachine, NodeStore) pass every checker,
// runs are reproducible, and the consensus core under the simulator's own
// host (`--host core`, kept until it is deleted) still passes a short
// sweep and catches each injected bug within a bounded number of seeds.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <set>
#include <sstream>

#include "sim/host_seed.h"
#include "sim/host_sim_command.h"
#include "sim/sim_command.h"
#include "sim/simulator.h"

namespace tessera::sim {
namespace {

// Seeds per production-host sweep, by group size (about 40 and 80 ms a
// seed: together about the time the core's 1'000-seed sweeps took).
constexpr uint64_t kHostSweepSeeds3 = 400;
constexpr uint64_t kHostSweepSeeds5 = 200;
// Groups of 7 and 9 (about 4 and 6 times a 3-replica seed's cost).
constexpr uint64_t kHostSweepSeedsLarge = 30;
// Seeds of 3 and 5 replicas that lose a voter for good in the replica-loss
// sweep (7 replicas: a quarter of it).
constexpr uint64_t kHostLossSeeds = 40;
constexpr uint64_t kSweepSeeds = 100;  // of the core's own host
// Bugs must be detected within this many seeds.
constexpr uint64_t kBugDetectionSeedsMax = 200;

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
  std::printf("[ sweep    ] production host, %u replicas: %llu seeds in %.1f s; %llu writes "
              "acknowledged, %llu crashes (%llu power losses), %llu partitions (%llu splits), "
              "%llu lease reads, %llu lost and %llu retired voters replaced\n",
              replicas, static_cast<unsigned long long>(seeds), seconds,
              static_cast<unsigned long long>(t.writes_acked),
              static_cast<unsigned long long>(t.crashes),
              static_cast<unsigned long long>(t.power_losses),
              static_cast<unsigned long long>(t.partitions),
              static_cast<unsigned long long>(t.splits),
              static_cast<unsigned long long>(t.strong_reads),
              static_cast<unsigned long long>(t.replicas_lost),
              static_cast<unsigned long long>(t.replicas_retired));
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

// --- the consensus core under the simulator's own host (--host core) -----

void Sweep(uint32_t replicas, uint64_t seed_start) {
  const auto started = std::chrono::steady_clock::now();
  uint64_t failures = 0;
  uint64_t commits = 0;
  uint64_t elections = 0;
  uint64_t crashes = 0;
  uint64_t lease_reads = 0;
  uint64_t snapshots = 0;
  uint64_t replaced = 0;
  for (uint64_t seed = seed_start; seed < seed_start + kSweepSeeds; ++seed) {
    SimConfig config;
    config.replicas = replicas;
    config.seed = seed;
    const SimResult result = RunSimulation(config);
    commits += result.stats.commits;
    elections += result.stats.elections;
    crashes += result.stats.crashes;
    lease_reads += result.stats.lease_reads;
    snapshots += result.stats.snapshots_installed;
    replaced += result.stats.replicas_replaced;
    if (!result.ok && ++failures <= 20) {
      ADD_FAILURE() << "seed " << seed << " [" << result.stats.faults << "]: " << result.violation
                    << "\n  replay: " << ReplayCommand(replicas, seed, "none");
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(failures, 0u);
  // Each sweep must exercise what it claims to.
  EXPECT_GT(elections, kSweepSeeds);
  EXPECT_GT(crashes, kSweepSeeds / 4);
  EXPECT_GT(lease_reads, kSweepSeeds * 10);
  EXPECT_GT(snapshots, 0u);
  EXPECT_GT(replaced, kSweepSeeds / 10) << "voters lost for good are replaced";
  std::printf("[ sweep    ] %u replicas: %llu seeds in %.1f s (%.0f seeds/s); %llu commits, %llu "
              "elections, %llu crashes, %llu lease reads, %llu snapshots installed\n",
              replicas, static_cast<unsigned long long>(kSweepSeeds), seconds,
              static_cast<double>(kSweepSeeds) / seconds, static_cast<unsigned long long>(commits),
              static_cast<unsigned long long>(elections), static_cast<unsigned long long>(crashes),
              static_cast<unsigned long long>(lease_reads),
              static_cast<unsigned long long>(snapshots));
}

TEST(SimCoreTest, ThreeReplicaSweep) { Sweep(3, 1); }
TEST(SimCoreTest, FiveReplicaSweep) { Sweep(5, 1); }

// Every seed loses one or two voters for good; the autoadmin's planner must
// bring the group back to `replicas` voters in three AZs with nothing lost
// (the seed ends only then, or fails the liveness check).
TEST(SimCoreTest, ReplicaLossSweep) {
  constexpr uint64_t kLossSeeds = 100;
  for (uint32_t replicas : {3u, 5u}) {
    uint64_t lost = 0, replaced = 0, log_replicas = 0, failures = 0;
    for (uint64_t seed = 1; seed <= kLossSeeds; ++seed) {
      SimConfig config;
      config.replicas = replicas;
      config.seed = seed;
      config.replica_loss_every_seed = true;
      const SimResult result = RunSimulation(config);
      lost += result.stats.replicas_lost;
      replaced += result.stats.replicas_replaced;
      log_replicas += result.stats.log_replicas;
      if (!result.ok && ++failures <= 10) {
        ADD_FAILURE() << "seed " << seed << " [" << result.stats.faults << "]: " << result.violation
                      << "\n  replay: " << ReplayCommand(replicas, seed, "none") << " --replica-loss";
      }
    }
    EXPECT_EQ(failures, 0u);
    EXPECT_GT(lost, kLossSeeds);
    // A replacement may itself be lost later: the final voters from spares
    // number at least one per seed.
    EXPECT_GE(replaced, kLossSeeds) << "lost voters were replaced";
    // The first loss of a seed is stood in for by a log replica (a spare
    // remains for the full replacement).
    EXPECT_GE(log_replicas, kLossSeeds) << "log replicas stood in";
    std::printf("[ loss     ] %u replicas: %llu seeds, %llu voters lost for good, %llu replaced, "
                "%llu log replicas\n",
                replicas, static_cast<unsigned long long>(kLossSeeds),
                static_cast<unsigned long long>(lost),
                static_cast<unsigned long long>(replaced),
                static_cast<unsigned long long>(log_replicas));
  }
}

TEST(SimCoreTest, Deterministic) {
  for (uint32_t replicas : {3u, 5u}) {
    for (uint64_t seed : {17u, 99u, 123'456u}) {
      SimConfig config;
      config.replicas = replicas;
      config.seed = seed;
      const SimResult a = RunSimulation(config);
      const SimResult b = RunSimulation(config);
      EXPECT_EQ(a.trace_hash, b.trace_hash) << "seed " << seed;
      EXPECT_EQ(a.stats.events, b.stats.events);
      config.seed = seed + 1;
      EXPECT_NE(RunSimulation(config).trace_hash, a.trace_hash);
    }
  }
}

struct BugCase {
  SimBug bug;
  std::set<Invariant> catchers;  // the invariants allowed to catch it
};

class SimBugTest : public ::testing::TestWithParam<BugCase> {};

TEST_P(SimBugTest, DetectedWithinBoundedSeeds) {
  const BugCase& bug_case = GetParam();
  for (uint32_t replicas : {3u, 5u}) {
    std::optional<SimResult> caught;
    uint64_t seed = 1;
    for (; seed <= kBugDetectionSeedsMax && !caught; ++seed) {
      SimResult result = RunSimulation(MakeSimConfig(replicas, seed, bug_case.bug));
      if (!result.ok) caught = std::move(result);
    }
    ASSERT_TRUE(caught.has_value())
        << SimBugName(bug_case.bug) << " not detected in " << kBugDetectionSeedsMax << " seeds";
    EXPECT_TRUE(bug_case.catchers.count(caught->invariant))
        << SimBugName(bug_case.bug) << " caught by unexpected invariant: " << caught->violation;
    std::printf("[ bug      ] %-18s %u replicas: seed %llu, %s\n", SimBugName(bug_case.bug),
                replicas, static_cast<unsigned long long>(seed - 1),
                caught->violation.substr(0, 160).c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Bugs, SimBugTest,
    ::testing::Values(
        BugCase{SimBug::kAckBeforeQuorum, {Invariant::kDurability, Invariant::kLinearizability}},
        BugCase{SimBug::kSkipFsync,
                {Invariant::kAgreement, Invariant::kDurability, Invariant::kLinearizability}},
        BugCase{SimBug::kLeaseIgnoreDrift, {Invariant::kLeaseSafety}},
        BugCase{SimBug::kStaleRead, {Invariant::kLinearizability}}),
    [](const ::testing::TestParamInfo<BugCase>& param_info) {
      std::string name = SimBugName(param_info.param.bug);
      for (char& c : name) {
        if (c == '-') c = '_';
      }
      return name;
    });

}  // namespace
}  // namespace tessera::sim
