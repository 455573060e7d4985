// Goal: the same experiment and seed always give the same schedule, other
// seeds give others, and every fault lies inside the duration.
#include "experiment/schedule.h"

#include <gtest/gtest.h>

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

TEST(ScheduleTest, NoNemesisNoFaults) {
  auto s = BuildSchedule(ParseExperiment(R"(name: "n" layout: "x" duration_s: 10)"), TestLayout(), 3, 10);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->empty());
}

}  // namespace
}  // namespace tessera::experiment
