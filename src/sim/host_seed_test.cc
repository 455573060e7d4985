// Goal: seeds of the simulator on the production host pass their checkers
// (durability, agreement, liveness) under drawn crashes, partitions, disk
// errors and install faults, replay to the same trace, and the checkers
// catch a known violation.
#include "sim/host_seed.h"

#include "sim/host_sim_command.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace tessera::sim {
namespace {

TEST(HostSeedTest, SeedsPassTheirCheckersAndReplayExactly) {
  HostSeedStats total;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    HostSeedConfig config;
    config.seed = seed;
    const HostSeedResult result = RunHostSeed(config);
    ASSERT_TRUE(result.ok) << "seed " << seed << ": " << result.violation
                           << "\nreplay: " << HostReplayCommand(seed);
    total.writes_acked += result.stats.writes_acked;
    total.crashes += result.stats.crashes;
    total.partitions += result.stats.partitions;
    total.disk_faults += result.stats.disk_faults;
    total.install_faults += result.stats.install_faults;
  }
  EXPECT_GT(total.writes_acked, 8u * 10);
  EXPECT_GT(total.crashes, 0u);
  EXPECT_GT(total.partitions, 0u);
  RecordProperty("crashes", std::to_string(total.crashes));
  RecordProperty("partitions", std::to_string(total.partitions));
  RecordProperty("disk_faults", std::to_string(total.disk_faults));
  RecordProperty("install_faults", std::to_string(total.install_faults));

  HostSeedConfig config;
  config.seed = 3;
  const HostSeedResult first = RunHostSeed(config);
  const HostSeedResult again = RunHostSeed(config);
  EXPECT_EQ(first.trace_hash, again.trace_hash);
  EXPECT_EQ(first.stats.messages_sent, again.stats.messages_sent);
  EXPECT_EQ(first.stats.virtual_time_us, again.stats.virtual_time_us);
}

// The command: deterministic output, a failing seed's replay line, and
// arguments this host does not support refused with exit 2.
TEST(HostSeedTest, CommandSummarizesAndRefusesWhatItCannotRun) {
  SimCommandArgs args;
  args.host = "production";
  args.seed_start = 11;
  args.seeds = 2;
  std::ostringstream first;
  std::ostringstream again;
  EXPECT_EQ(RunHostSimCommand(args, first), 0) << first.str();
  EXPECT_EQ(RunHostSimCommand(args, again), 0);
  EXPECT_EQ(first.str(), again.str());
  EXPECT_NE(first.str().find("seeds 11..12: 2 passed, 0 failed"), std::string::npos)
      << first.str();
  EXPECT_EQ(HostReplayCommand(12),
            "tessera sim --host production --seed-start 12 --seeds 1 --trace");
  std::ostringstream refused;
  args.replicas = 5;
  EXPECT_EQ(RunHostSimCommand(args, refused), 2);
  EXPECT_NE(refused.str().find("--replicas 3"), std::string::npos);
}

TEST(HostSeedTest, CheckersCatchKnownViolations) {
  const std::map<std::string, std::string> acked{{"a", "1"}, {"b", "2"}};
  std::map<uint32_t, std::map<std::string, std::optional<std::string>>> held{
      {1, {{"a", "1"}, {"b", "2"}}}, {2, {{"a", "1"}, {"b", "2"}}}};
  EXPECT_EQ(CheckAcknowledgedWrites(acked, held), "");
  held[2]["b"] = std::nullopt;
  EXPECT_EQ(CheckAcknowledgedWrites(acked, held),
            "durability: replica 2 lost acknowledged key b");
  held[2]["b"] = "3";
  EXPECT_NE(CheckAcknowledgedWrites(acked, held).find("holds '3'"), std::string::npos);

  EXPECT_EQ(CheckDigestsEqual({{1, "x"}, {2, "x"}, {3, "x"}}), "");
  EXPECT_NE(CheckDigestsEqual({{1, "x"}, {2, "x"}, {3, "y"}}).find("agreement: replica 3"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::sim
