// Goal: a short sweep of the production host (GroupHost,
// PartitionStateMachine, NodeStore on simulated disks, SimTransport) passes
// every checker, also under ASan/UBSan, in groups of 3 and 5 and with a
// voter lost and replaced by the autoadmin's planner, with S3 clients, and
// a seed replays to a byte-identical trace.
#include <gtest/gtest.h>

#include <sstream>

#include <spdlog/spdlog.h>

#include "sim/host_seed.h"
#include "sim/host_sim_command.h"

namespace tessera::sim {
namespace {

class HostSmokeTest : public ::testing::Test {
 protected:
  // The hosts' info lines would flood a sanitized run's output.
  void SetUp() override { spdlog::set_level(spdlog::level::warn); }
  void TearDown() override { spdlog::set_level(spdlog::level::info); }
};

TEST_F(HostSmokeTest, ShortSweepPasses) {
  for (uint32_t replicas : {3u, 5u}) {
    for (uint64_t seed = 900'001; seed <= 900'002; ++seed) {
      for (bool loss : {false, true}) {
        HostSeedConfig config;
        config.replicas = replicas;
        config.seed = seed;
        config.replica_loss_every_seed = loss;
        const HostSeedResult result = RunHostSeed(config);
        EXPECT_TRUE(result.ok) << "seed " << seed << ": " << result.violation << "\n  replay: "
                               << HostReplayCommand(seed, "none", replicas, loss);
        EXPECT_GT(result.stats.writes_acked, 0u);
        EXPECT_GT(result.stats.log_slots_checked, 0u);
        if (loss) {
          EXPECT_EQ(result.stats.replicas_replaced, 1u);
        }
      }
    }
  }
}

// S3 clients through the partition state machine's S3 model, the S3
// invariants checked on every replica.
TEST_F(HostSmokeTest, S3SeedPasses) {
  HostSeedConfig config;
  config.seed = 900'003;
  config.s3_every_seed = true;
  const HostSeedResult result = RunHostSeed(config);
  EXPECT_TRUE(result.ok) << result.violation << "\n  replay: "
                         << HostReplayCommand(config.seed, "none", 3, false, true);
  EXPECT_GT(result.stats.s3_acked, 0u);
}

TEST_F(HostSmokeTest, SameSeedSameTrace) {
  HostSeedConfig config;
  config.seed = 4242;
  config.replica_loss_every_seed = true;
  std::ostringstream first;
  config.trace = &first;
  const HostSeedResult a = RunHostSeed(config);
  EXPECT_TRUE(a.ok) << a.violation;
  EXPECT_GT(first.str().size(), 1000u);
  // The trace hash covers every trace line: the same hash is the same
  // trace, and tracing must not change the run.
  config.trace = nullptr;
  EXPECT_EQ(RunHostSeed(config).trace_hash, a.trace_hash);
}

}  // namespace
}  // namespace tessera::sim
