// Goal: a bad experiment file is refused before anything runs, with a
// message naming the file and the offending field.
#include "experiment/experiment_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "experiment/experiment_test_util.h"

namespace tessera::experiment {
namespace {

class ExperimentFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("experiment_file_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "layout.textproto") << kTestLayoutText;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& text) {
    const std::string path = (dir_ / "e.textproto").string();
    std::ofstream(path, std::ios::trunc) << text;
    return path;
  }
  // The load error of `body` after a valid head; empty when it loads.
  std::string ErrorOf(const std::string& text) {
    auto loaded = LoadExperiment(Write(text));
    return loaded.ok() ? "" : loaded.status().message();
  }

  std::filesystem::path dir_;
};

constexpr char kHead[] = R"(
name: "ok" layout: "layout.textproto" duration_s: 30
checkers { linearizable {} }
)";
constexpr char kWorkload[] = "workloads { kv_register { clients: 2 rate_per_s: 10 keys: 3 } }\n";

TEST_F(ExperimentFileTest, AValidFileLoadsWithItsLayout) {
  auto loaded = LoadExperiment(Write(std::string(kHead) + kWorkload +
                                     "nemesis { fixed { steps { kind: FAULT_PARTITION_AZ "
                                     "target { az: \"az3\" } at_s: 5 duration_s: 10 } } }"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->layout.nodes_size(), 3);
  EXPECT_EQ(loaded->spec.nemesis().fixed().steps_size(), 1);
}

TEST_F(ExperimentFileTest, MissingFileIsNotFound) {
  auto loaded = LoadExperiment((dir_ / "absent.textproto").string());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kNotFound);
}

TEST_F(ExperimentFileTest, SyntaxErrorsNameTheLine) {
  EXPECT_NE(ErrorOf("name: \"x\"\nduration_s: \"soon\"\n").find("line 2"), std::string::npos);
  EXPECT_NE(ErrorOf("nme: \"x\"").find("not a valid experiment"), std::string::npos);
}

TEST_F(ExperimentFileTest, BadFieldsAreNamed) {
  const std::string head = kHead;
  struct Case {
    std::string text;
    std::string expected;
  } cases[] = {
      {"name: \"Bad Name\" layout: \"layout.textproto\" duration_s: 5 checkers { linearizable {} } " +
           std::string(kWorkload),
       "name 'Bad Name'"},
      {"name: \"x\" duration_s: 5", "layout: missing"},
      {"name: \"x\" layout: \"nope.textproto\" duration_s: 5", "layout 'nope.textproto'"},
      {head, "workloads: 1..8 needed, 0 given"},
      {head + "workloads { kv_register { clients: 0 rate_per_s: 10 keys: 3 } }",
       "workloads[0].kv_register.clients = 0"},
      {head + "workloads { kv_register { clients: 1 rate_per_s: 10 keys: 3 strong_read_percent: 80 "
              "cas_percent: 30 } }",
       "more than 100"},
      {head + kWorkload + "nemesis { fixed { steps { kind: FAULT_KILL target { process: \"az9-n1\" } "
                          "at_s: 1 duration_s: 1 } } }",
       "nemesis.fixed.steps[0].target.process 'az9-n1'"},
      {head + kWorkload + "nemesis { fixed { steps { kind: FAULT_KILL target { az: \"az1\" } "
                          "at_s: 25 duration_s: 10 } } }",
       "past the experiment's duration of 30 s"},
      {head + kWorkload + "nemesis { fixed { steps { target { az: \"az1\" } duration_s: 1 } } }",
       "nemesis.fixed.steps[0].kind: missing"},
      {head + kWorkload + "nemesis { fixed { steps { kind: FAULT_SLOW_DISK target { az: \"az1\" } "
                          "duration_s: 1 } } }",
       "slow_ms = 0"},
      {head + kWorkload + "nemesis { random { } }", "nemesis.random.kinds: at least one"},
      {head + kWorkload + "nemesis { fixed { steps { kind: FAULT_PARTITION_ONE_WAY target { az: "
                          "\"az1\" } peer_az: \"az7\" duration_s: 1 } } }",
       "nemesis.fixed.steps[0].peer_az 'az7': not an AZ of the layout"},
      {head + kWorkload + "nemesis { fixed { steps { kind: FAULT_PARTITION_ONE_WAY target { az: "
                          "\"az1\" } peer_az: \"az1\" duration_s: 1 } } }",
       "peer_az 'az1': the target's own AZ"},
      {head + kWorkload + "nemesis { random { kinds { kind: FAULT_PARTITION_AZ target { az: "
                          "\"az1\" } peer_az: \"az2\" duration_s: 1 } } }",
       "nemesis.random.kinds[0].peer_az: only for FAULT_PARTITION_ONE_WAY"},
      {"name: \"x\" layout: \"layout.textproto\" duration_s: 0 checkers { linearizable {} } " +
           std::string(kWorkload),
       "duration_s = 0"},
      {head + kWorkload + "checkers { availability { min_ok_share_outside_faults: 1.5 } }",
       ".availability.min_ok_share_outside_faults: must be in 0..1"},
      {head + kWorkload + "checkers { availability { min_ok_share_after_first_s: -0.1 } }",
       ".availability.min_ok_share_after_first_s: must be in 0..1"},
      {head + kWorkload + "checkers { availability { max_p99_over_steady: -2 } }",
       ".availability.max_p99_over_steady: must be >= 0"},
  };
  for (const Case& c : cases) {
    const std::string error = ErrorOf(c.text);
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << "file:\n" << c.text << "\nerror: " << error << "\nexpected: " << c.expected;
    EXPECT_NE(error.find("e.textproto"), std::string::npos) << error;
  }
}

TEST_F(ExperimentFileTest, NewFaultKindsLoad) {
  auto loaded = LoadExperiment(Write(std::string(kHead) + kWorkload + R"(nemesis { fixed {
    steps { kind: FAULT_PARTITION_ONE_WAY target { kv_leader: true } peer_az: "az2" at_s: 1 duration_s: 2 }
    steps { kind: FAULT_MAJORITY_RING target { az: "az2" } at_s: 4 duration_s: 2 }
    steps { kind: FAULT_LOST_NODE target { random_node: true } at_s: 7 duration_s: 2 }
    steps { kind: FAULT_FULL_DISK target { process: "az1-n1" } at_s: 10 duration_s: 2 }
  } })"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->spec.nemesis().fixed().steps_size(), 4);
}

TEST_F(ExperimentFileTest, ClockFaultsNeedTheirKnobAndAProcessThatTakesRules) {
  const auto step = [&](const std::string& body) {
    return ErrorOf(std::string(kHead) + kWorkload + "nemesis { fixed { steps { " + body +
                   " at_s: 5 duration_s: 5 } } }");
  };
  EXPECT_EQ(step("kind: FAULT_CLOCK_JUMP target { kv_leader: true } offset_ms: -3600000"), "");
  EXPECT_EQ(step("kind: FAULT_CLOCK_SKEW target { az: \"az1\" } skew_ppm: 9000"), "");
  EXPECT_EQ(step("kind: FAULT_CLOCK_JUMP target { process: \"meta-az2\" } offset_ms: 1"), "");
  EXPECT_NE(step("kind: FAULT_CLOCK_JUMP target { kv_leader: true }").find("offset_ms"),
            std::string::npos);
  EXPECT_NE(step("kind: FAULT_CLOCK_JUMP target { kv_leader: true } offset_ms: 2592000001")
                .find("offset_ms: 2592000001"),
            std::string::npos);
  EXPECT_NE(step("kind: FAULT_CLOCK_SKEW target { kv_leader: true } skew_ppm: 500001").find("skew_ppm"),
            std::string::npos);
  EXPECT_NE(step("kind: FAULT_CLOCK_SKEW target { kv_leader: true } offset_ms: 5 skew_ppm: 1")
                .find("offset_ms: only for FAULT_CLOCK_JUMP"),
            std::string::npos);
  EXPECT_NE(step("kind: FAULT_KILL target { kv_leader: true } skew_ppm: 5")
                .find("skew_ppm: only for FAULT_CLOCK_SKEW"),
            std::string::npos);
  const std::string router =
      step("kind: FAULT_CLOCK_JUMP target { process: \"router-1\" } offset_ms: 1000");
  EXPECT_NE(router.find("router-1"), std::string::npos) << router;
  EXPECT_NE(router.find("storage node or meta replica"), std::string::npos) << router;
}

TEST_F(ExperimentFileTest, DrainsNeedStorageNodesAndAnAutoadmin) {
  const auto step = [&](const std::string& layout, const std::string& target) {
    return ErrorOf("name: \"ok\" layout: \"" + layout + "\" duration_s: 30\n" +
                   "checkers { linearizable {} }\n" + kWorkload +
                   "nemesis { fixed { steps { kind: FAULT_DRAIN target { " + target +
                   " } at_s: 5 duration_s: 5 } } }");
  };
  std::ofstream(dir_ / "with-autoadmin.textproto")
      << kTestLayoutText
      << "autoadmin { name: \"autoadmin-1\" az: \"az1\" host: \"127.0.0.1\" http_port: 19 }\n";
  EXPECT_EQ(step("with-autoadmin.textproto", "process: \"az1-n1\""), "");
  EXPECT_EQ(step("with-autoadmin.textproto", "kv_leader: true"), "");
  EXPECT_EQ(step("with-autoadmin.textproto", "random_node: true"), "");
  EXPECT_NE(step("with-autoadmin.textproto", "az: \"az1\"").find("not an AZ"), std::string::npos);
  EXPECT_NE(step("with-autoadmin.textproto", "random_az: true").find("not an AZ"), std::string::npos);
  EXPECT_NE(step("with-autoadmin.textproto", "process: \"router-1\"").find("needs a storage node"),
            std::string::npos);
  EXPECT_NE(step("layout.textproto", "process: \"az1-n1\"").find("needs an autoadmin"),
            std::string::npos);
}

TEST_F(ExperimentFileTest, DurationOverrideIsChecked) {
  const pb::Experiment e = ParseExperiment("duration_s: 30");
  EXPECT_EQ(*EffectiveDuration(e, 0), 30u);
  EXPECT_EQ(*EffectiveDuration(e, 7), 7u);
  auto bad = EffectiveDuration(e, 100000);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--duration"), std::string::npos);
}

TEST_F(ExperimentFileTest, BankAndS3WorkloadsAreChecked) {
  const std::string head = R"(name: "ok" layout: "layout.textproto" duration_s: 30
checkers { availability {} }
)";
  const std::string bank =
      "workloads { kv_bank { clients: 2 rate_per_s: 10 accounts: 8 initial_balance: 100 "
      "max_transfer: 20 read_percent: 30 } }\n";
  const std::string s3 =
      "workloads { s3_objects { clients: 2 rate_per_s: 10 keys: 4 get_percent: 30 "
      "list_percent: 10 max_bytes: 40000 } }\n";
  EXPECT_EQ(ErrorOf(head + bank + s3 + "checkers { bank {} } checkers { s3 {} }"), "");
  EXPECT_NE(ErrorOf(head + "workloads { kv_bank { clients: 2 rate_per_s: 10 accounts: 1 "
                           "initial_balance: 100 max_transfer: 20 } }")
                .find("workloads[0].kv_bank.accounts = 1: must be in 2..64"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + "workloads { kv_bank { clients: 2 rate_per_s: 10 accounts: 4 "
                           "initial_balance: 100 max_transfer: 101 } }")
                .find("kv_bank.max_transfer = 101: must be in 1..100"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + "workloads { s3_objects { clients: 2 rate_per_s: 10 keys: 4 "
                           "get_percent: 60 list_percent: 50 } }")
                .find("more than 100"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + "workloads { s3_objects { clients: 2 rate_per_s: 10 keys: 4 "
                           "get_percent: 60 version_percent: 41 } }")
                .find("list_percent + version_percent = 101, more than 100"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + "workloads { s3_objects { clients: 2 rate_per_s: 10 keys: 4 "
                           "multipart_percent: 70 copy_percent: 31 } }")
                .find("multipart_percent + copy_percent = 101, more than 100"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + "workloads { s3_objects { clients: 2 rate_per_s: 10 keys: 4 "
                           "min_bytes: 5000 max_bytes: 4000 } }")
                .find("s3_objects.min_bytes = 5000: must be in 1..4000"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + "workloads { }").find("workloads[0]: no workload kind"),
            std::string::npos);
  // A checker needs the workload it checks.
  EXPECT_NE(ErrorOf(head + bank + "checkers { s3 {} }").find("checkers[1].s3: no s3_objects"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + s3 + "checkers { bank {} }").find("checkers[1].bank: no kv_bank"),
            std::string::npos);
}

// Several parts per upload need parts the cluster accepts; the experiment's
// settings reach the layout it runs and are held to the knobs' bounds.
TEST_F(ExperimentFileTest, MultipartPartsAndSettingsAreChecked) {
  const std::string head = R"(name: "ok" layout: "layout.textproto" duration_s: 30
checkers { s3 {} }
)";
  const std::string parts =
      "workloads { s3_objects { clients: 2 rate_per_s: 10 keys: 4 multipart_percent: 50 "
      "multipart_parts: 3 min_bytes: 3072 max_bytes: 40000 } }\n";
  EXPECT_NE(ErrorOf(head + parts).find("workloads[0].s3_objects.multipart_parts: 3 parts of a "
                                       "3072-byte body are smaller than the cluster's "
                                       "s3_min_part_bytes (5242880)"),
            std::string::npos);
  auto loaded = LoadExperiment(
      Write(head + parts + "router_settings { s3_min_part_bytes: 1024 } "
                           "node_settings { gc_interval_ms: 700 }"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->layout.router_settings().s3_min_part_bytes(), 1024u);
  EXPECT_EQ(loaded->layout.node_settings().gc_interval_ms(), 700u);
  EXPECT_NE(ErrorOf(head + parts + "router_settings { s3_min_part_bytes: 1025 }")
                .find("multipart_parts"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + parts + "router_settings { s3_min_part_bytes: 1024 } "
                                   "node_settings { gc_interval_ms: 4000000 }")
                .find("router_settings/node_settings:"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + "workloads { s3_objects { clients: 2 rate_per_s: 10 keys: 4 "
                           "multipart_parts: 17 } }")
                .find("s3_objects.multipart_parts = 17: must be in 0..16"),
            std::string::npos);
}

// The --netns network block: loads when in range, names the field otherwise.
TEST_F(ExperimentFileTest, NetnsBlockIsChecked) {
  const std::string base = std::string(kHead) + kWorkload;
  EXPECT_EQ(ErrorOf(base + "netns { delay_ms: 2 jitter_ms: 0.5 loss_percent: 1 }"), "");
  EXPECT_NE(ErrorOf(base + "netns { delay_ms: 2000 }").find("netns.delay_ms"), std::string::npos);
  EXPECT_NE(ErrorOf(base + "netns { delay_ms: 1 jitter_ms: 2 }").find("netns.jitter_ms"),
            std::string::npos);
  EXPECT_NE(ErrorOf(base + "netns { loss_percent: 150 }").find("netns.loss_percent"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::experiment
