// Goal: the same experiment and seed always give the same schedule, other
// seeds give others, and every fault lies inside the duration.
#include "experiment/schedule.h"

#include <gtest/gtest.h>

#include <set>

#include "experiment/experiment_test_util.h"

namespace tessera::experiment {
namespace {

constexpr char kRandom[] = R"(
name: "r" layout: "x" duration_s: 120
workloads { kv_register { clients: 1 rate_per_s: 1 keys: 1 } }
checkers { linearizable {} }
nemesis { random {
  quiet_s: 5 gap_s: 3
  kinds { kind: FAULT_KILL target { random_node: true } duration_s: 4 }
  kinds { kind: FAULT_PARTITION_AZ target { random_az: true } duration_s: 7 }
  kinds { kind: FAULT_SLOW_DISK target { kv_leader: true } duration_s: 5 slow_ms: 200 }
} }
)";

TEST(ScheduleTest, SameSeedSameSchedule) {
  const pb::Experiment e = ParseExperiment(kRandom);
  auto a = BuildSchedule(e, TestLayout(), 42, 120);
  auto b = BuildSchedule(e, TestLayout(), 42, 120);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_GT(a->size(), 5u);
  EXPECT_EQ(*a, *b);
}

TEST(ScheduleTest, OtherSeedOtherSchedule) {
  const pb::Experiment e = ParseExperiment(kRandom);
  auto a = BuildSchedule(e, TestLayout(), 1, 120);
  auto b = BuildSchedule(e, TestLayout(), 2, 120);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
}

TEST(ScheduleTest, RandomFaultsStayInsideTheDurationWithGaps) {
  auto s = BuildSchedule(ParseExperiment(kRandom), TestLayout(), 7, 60);
  ASSERT_TRUE(s.ok());
  uint64_t prev_end_ms = 0;
  for (const ScheduledFault& f : *s) {
    EXPECT_GE(f.start_ms, prev_end_ms == 0 ? 5000 : prev_end_ms + 3000) << Describe(f);
    EXPECT_LT(f.start_ms, f.end_ms);
    EXPECT_LE(f.end_ms, 60'000u);
    // Random targets are resolved; kv_leader waits for the running cluster.
    EXPECT_FALSE(f.target.has_random_node() || f.target.has_random_az());
    prev_end_ms = f.end_ms;
  }
}

TEST(ScheduleTest, FixedStepsAreSortedAndCutAtAShorterDuration) {
  const pb::Experiment e = ParseExperiment(R"(
    name: "f" layout: "x" duration_s: 60
    workloads { kv_register { clients: 1 rate_per_s: 1 keys: 1 } }
    checkers { linearizable {} }
    nemesis { fixed {
      steps { kind: FAULT_PAUSE target { process: "az2-n1" } at_s: 20 duration_s: 30 }
      steps { kind: FAULT_KILL target { az: "az1" } at_s: 5 duration_s: 5 }
      steps { kind: FAULT_KILL target { az: "az3" } at_s: 40 duration_s: 5 }
    } })");
  auto s = BuildSchedule(e, TestLayout(), 0, 30);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ(Describe((*s)[0]), "kill az1 [5 s, 10 s)");
  EXPECT_EQ(Describe((*s)[1]), "pause az2-n1 [20 s, 30 s)");
}

TEST(ScheduleTest, NewKindsKeepTheirFieldsAndDescribeThemselves) {
  const pb::Experiment e = ParseExperiment(R"(
    name: "f" layout: "x" duration_s: 60
    workloads { kv_register { clients: 1 rate_per_s: 1 keys: 1 } }
    checkers { linearizable {} }
    nemesis { fixed {
      steps { kind: FAULT_PARTITION_ONE_WAY target { kv_leader: true } peer_az: "az3" at_s: 1 duration_s: 5 }
      steps { kind: FAULT_PARTITION_ONE_WAY target { az: "az1" } at_s: 7 duration_s: 5 }
      steps { kind: FAULT_MAJORITY_RING target { az: "az2" } at_s: 13 duration_s: 5 }
      steps { kind: FAULT_LOST_NODE target { process: "az1-n1" } at_s: 19 duration_s: 5 }
      steps { kind: FAULT_FULL_DISK target { kv_leader: true } at_s: 25 duration_s: 5 }
    } })");
  auto s = BuildSchedule(e, TestLayout(), 0, 60);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 5u);
  EXPECT_EQ((*s)[0].peer_az, "az3");
  EXPECT_EQ(Describe((*s)[0]), "partition-one-way kv-leader -> az3 [1 s, 6 s)");
  EXPECT_EQ(Describe((*s)[1]), "partition-one-way az1 -> all [7 s, 12 s)");
  EXPECT_EQ(Describe((*s)[2]), "majority-ring az2 [13 s, 18 s)");
  EXPECT_EQ(Describe((*s)[3]), "lost-node az1-n1 [19 s, 24 s)");
  EXPECT_EQ(Describe((*s)[4]), "full-disk kv-leader [25 s, 30 s)");
  for (const ScheduledFault& f : *s) {
    EXPECT_EQ(IsRuleFault(f.kind), f.kind != pb::FAULT_LOST_NODE) << Describe(f);
  }
}

TEST(ScheduleTest, RandomSchedulesDrawTheNewKindsToo) {
  const pb::Experiment e = ParseExperiment(R"(
    name: "r" layout: "x" duration_s: 300
    workloads { kv_register { clients: 1 rate_per_s: 1 keys: 1 } }
    checkers { linearizable {} }
    nemesis { random {
      gap_s: 1
      kinds { kind: FAULT_PARTITION_ONE_WAY target { random_az: true } duration_s: 2 }
      kinds { kind: FAULT_MAJORITY_RING target { random_az: true } duration_s: 2 }
      kinds { kind: FAULT_LOST_NODE target { random_node: true } duration_s: 2 }
      kinds { kind: FAULT_FULL_DISK target { random_node: true } duration_s: 2 }
    } })");
  auto s = BuildSchedule(e, TestLayout(), 9, 300);
  ASSERT_TRUE(s.ok());
  std::set<pb::FaultKind> kinds;
  for (const ScheduledFault& f : *s) {
    kinds.insert(f.kind);
    EXPECT_TRUE(f.target.has_az() || f.target.has_process()) << Describe(f);
  }
  EXPECT_EQ(kinds.size(), 4u);
}

TEST(ScheduleTest, ClockFaultsKeepTheirOffsetAndSkew) {
  const pb::Experiment e = ParseExperiment(R"(
    name: "c" layout: "x" duration_s: 60
    workloads { kv_register { clients: 1 rate_per_s: 1 keys: 1 } }
    checkers { linearizable {} }
    nemesis { fixed {
      steps { kind: FAULT_CLOCK_SKEW target { process: "az2-n1" } at_s: 20 duration_s: 10
              skew_ppm: -9000 }
      steps { kind: FAULT_CLOCK_JUMP target { kv_leader: true } at_s: 5 duration_s: 10
              offset_ms: 7200000 }
    } }
  )");
  auto s = BuildSchedule(e, TestLayout(), 7, 60);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].kind, pb::FAULT_CLOCK_JUMP);
  EXPECT_EQ((*s)[0].offset_ms, 7'200'000);
  EXPECT_EQ(Describe((*s)[0]), "clock-jump kv-leader +7200000ms [5 s, 15 s)");
  EXPECT_EQ((*s)[1].skew_ppm, -9000);
  EXPECT_EQ(Describe((*s)[1]), "clock-skew az2-n1 -9000ppm [20 s, 30 s)");
  EXPECT_TRUE(IsRuleFault(pb::FAULT_CLOCK_JUMP) && IsRuleFault(pb::FAULT_CLOCK_SKEW));
  EXPECT_TRUE(IsClockFault(pb::FAULT_CLOCK_SKEW) && !IsClockFault(pb::FAULT_SLOW_DISK));
  EXPECT_FALSE(IsAzFault(pb::FAULT_CLOCK_JUMP));
  // The knobs are part of a fault's identity: another offset, another schedule.
  ScheduledFault other = (*s)[0];
  other.offset_ms = -1;
  EXPECT_FALSE(other == (*s)[0]);
}

TEST(AzCutsTest, PartitionCutsTheAzFromEveryOtherBothWays) {
  const std::vector<std::string> azs = {"az1", "az2", "az3"};
  EXPECT_EQ(AzCuts(pb::FAULT_PARTITION_AZ, azs, "az2", ""),
            (std::vector<AzCut>{{"az2", "az1", false}, {"az2", "az3", false}}));
}

TEST(AzCutsTest, OneWayCutsOnlyTheAzsSendingSide) {
  const std::vector<std::string> azs = {"az1", "az2", "az3"};
  EXPECT_EQ(AzCuts(pb::FAULT_PARTITION_ONE_WAY, azs, "az1", "az3"),
            (std::vector<AzCut>{{"az1", "az3", true}}));
  EXPECT_EQ(AzCuts(pb::FAULT_PARTITION_ONE_WAY, azs, "az1", ""),
            (std::vector<AzCut>{{"az1", "az2", true}, {"az1", "az3", true}}));
}

TEST(AzCutsTest, MajorityRingKeepsTheBridgeAndCutsTheHalves) {
  // Three AZs, az2 the bridge: only az1-az3 is cut, so az1 sees {az1, az2},
  // az3 sees {az2, az3}, az2 sees all three.
  EXPECT_EQ(AzCuts(pb::FAULT_MAJORITY_RING, {"az1", "az2", "az3"}, "az2", ""),
            (std::vector<AzCut>{{"az1", "az3", false}}));
  EXPECT_EQ(AzCuts(pb::FAULT_MAJORITY_RING, {"az1", "az2", "az3"}, "az1", ""),
            (std::vector<AzCut>{{"az2", "az3", false}}));
  // Five AZs, az3 the bridge: {az1, az2} and {az4, az5} cannot reach each
  // other; each half with the bridge is 3 of 5.
  EXPECT_EQ(AzCuts(pb::FAULT_MAJORITY_RING, {"az1", "az2", "az3", "az4", "az5"}, "az3", ""),
            (std::vector<AzCut>{{"az1", "az4", false},
                                {"az1", "az5", false},
                                {"az2", "az4", false},
                                {"az2", "az5", false}}));
  EXPECT_TRUE(AzCuts(pb::FAULT_MAJORITY_RING, {"az1", "az2"}, "az1", "").empty());
  EXPECT_TRUE(AzCuts(pb::FAULT_FULL_DISK, {"az1", "az2", "az3"}, "az1", "").empty());
}

TEST(ScheduleTest, NoNemesisNoFaults) {
  auto s = BuildSchedule(ParseExperiment(R"(name: "n" layout: "x" duration_s: 10)"), TestLayout(), 3, 10);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->empty());
}

}  // namespace
}  // namespace tessera::experiment
