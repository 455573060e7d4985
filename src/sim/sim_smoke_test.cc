// Goal: a short seed sweep (also under sanitizers) passes, every seed's
// Options validate, and a seed replays to a byte-identical trace.
#include <gtest/gtest.h>

#include <sstream>

#include "sim/sim_command.h"
#include "sim/simulator.h"

namespace tessera::sim {
namespace {

TEST(SimSmokeTest, OptionsValidateForEverySeed) {
  for (uint64_t seed = 0; seed < 2'000; ++seed) {
    const consensus::Options options = SimOptions(seed, 3, 1);
    ASSERT_EQ(options.Validate(), "") << "seed " << seed;
    EXPECT_LE(options.check_quorum_timeout_us, options.election_timeout_min_us);
  }
}

TEST(SimSmokeTest, ShortSweepPasses) {
  for (uint32_t replicas : {3u, 5u}) {
    for (uint64_t seed = 900'001; seed <= 900'010; ++seed) {
      SimConfig config;
      config.replicas = replicas;
      config.seed = seed;
      const SimResult result = RunSimulation(config);
      EXPECT_TRUE(result.ok) << "seed " << seed << ": " << result.violation << "\n  replay: "
                             << ReplayCommand(replicas, seed, "none");
      EXPECT_GT(result.stats.commits, 0u);
    }
  }
}

TEST(SimSmokeTest, SameSeedSameTrace) {
  SimConfig config;
  config.seed = 4242;
  std::ostringstream first;
  std::ostringstream second;
  config.trace = &first;
  const SimResult a = RunSimulation(config);
  config.trace = &second;
  const SimResult b = RunSimulation(config);
  EXPECT_EQ(a.trace_hash, b.trace_hash);
  EXPECT_EQ(first.str(), second.str());
  EXPECT_GT(first.str().size(), 1000u);
  config.trace = nullptr;
  EXPECT_EQ(RunSimulation(config).trace_hash, a.trace_hash) << "tracing must not change the run";
}

TEST(SimSmokeTest, CommandReportsReplayLineOnFailure) {
  std::ostringstream out;
  SimCommandArgs args;
  args.bug = "no-such-bug";
  EXPECT_EQ(RunSimCommand(args, out), 2);
  out.str("");
  args.bug = "none";
  args.seed_start = 7;
  args.seeds = 2;
  EXPECT_EQ(RunSimCommand(args, out), 0) << out.str();
  EXPECT_NE(out.str().find("2 passed, 0 failed"), std::string::npos) << out.str();
  EXPECT_EQ(ReplayCommand(5, 1234, "skip-fsync"),
            "tessera sim --host core --replicas 5 --seed-start 1234 --seeds 1 --trace --bug skip-fsync");
}

}  // namespace
}  // namespace tessera::sim
