// Goal: seeds of the simulator on the production host pass their checkers
// (durability, agreement, liveness, linearizability, lease safety) under
// drawn crashes, partitions, disk errors, install faults and clock drift,
// replay to the same trace, and the checkers catch known violations and
// injected bugs.
#include "sim/host_seed.h"

#include "sim/host_autoadmin.h"
#include "sim/host_sim_command.h"
#include "sim/log_agreement.h"
#include "sim/ready_contract.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace tessera::sim {
namespace {

// An injected bug must be caught within this many seeds.
constexpr uint64_t kBugDetectionSeedsMax = 60;

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
    total.client_ops += result.stats.client_ops;
    total.strong_reads += result.stats.strong_reads;
    total.clock_changes += result.stats.clock_changes;
    total.pauses += result.stats.pauses;
    total.replicas_lost += result.stats.replicas_lost;
    total.replicas_replaced += result.stats.replicas_replaced;
    total.replicas_retired += result.stats.replicas_retired;
    total.splits += result.stats.splits;
    total.power_losses += result.stats.power_losses;
  }
  EXPECT_GT(total.writes_acked, 8u * 4);
  EXPECT_GT(total.client_ops, 8u * 20);
  EXPECT_GT(total.strong_reads, 8u * 5);
  EXPECT_GT(total.clock_changes, 0u);
  EXPECT_GT(total.pauses, 0u);
  EXPECT_GT(total.replicas_lost, 0u);
  EXPECT_EQ(total.replicas_replaced, total.replicas_lost + total.replicas_retired);
  EXPECT_GT(total.crashes, 0u);
  EXPECT_GT(total.splits, 0u);
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

// Seeds with S3 clients pass the S3 invariants on every replica, their
// operations answered, some resent after proven refusals, and replay to
// the same trace.
TEST(HostSeedTest, S3SeedsPassTheS3Invariants) {
  HostSeedStats total;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    HostSeedConfig config;
    config.seed = seed;
    config.s3_every_seed = true;
    ASSERT_TRUE(HostSeedRunsS3(config));
    const HostSeedResult result = RunHostSeed(config);
    ASSERT_TRUE(result.ok) << "seed " << seed << ": " << result.violation
                           << "\nreplay: " << HostReplayCommand(seed, "none", 3, false, true);
    total.s3_ops += result.stats.s3_ops;
    total.s3_acked += result.stats.s3_acked;
    total.s3_unknown += result.stats.s3_unknown;
    total.s3_resent += result.stats.s3_resent;
    total.s3_completed += result.stats.s3_completed;
  }
  std::printf("[ s3       ] %llu operations, %llu answered, %llu unknown, %llu resent, "
              "%llu uploads completed\n",
              static_cast<unsigned long long>(total.s3_ops),
              static_cast<unsigned long long>(total.s3_acked),
              static_cast<unsigned long long>(total.s3_unknown),
              static_cast<unsigned long long>(total.s3_resent),
              static_cast<unsigned long long>(total.s3_completed));
  EXPECT_GT(total.s3_ops, 4u * 10);
  EXPECT_GT(total.s3_acked, total.s3_ops / 2);
  EXPECT_GT(total.s3_completed, 0u);
  // A fourth of the seeds run S3 clients without the flag, drawn per seed.
  uint64_t s3_seeds = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    HostSeedConfig config;
    config.seed = seed;
    s3_seeds += HostSeedRunsS3(config) ? 1 : 0;
  }
  EXPECT_GT(s3_seeds, 60u);
  EXPECT_LT(s3_seeds, 140u);

  HostSeedConfig config;
  config.seed = 2;
  config.s3_every_seed = true;
  const HostSeedResult first = RunHostSeed(config);
  const HostSeedResult again = RunHostSeed(config);
  EXPECT_EQ(first.trace_hash, again.trace_hash);
  EXPECT_EQ(HostReplayCommand(2, "none", 3, false, true),
            "tessera sim --host production --seed-start 2 --seeds 1 --trace --s3");
}

// Five voters (and a sixth id for the spare of a lost one) pass too.
TEST(HostSeedTest, FiveReplicaSeedsPass) {
  uint64_t lost = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    HostSeedConfig config;
    config.seed = seed;
    config.replicas = 5;
    const HostSeedResult result = RunHostSeed(config);
    ASSERT_TRUE(result.ok) << "seed " << seed << ": " << result.violation
                           << "\nreplay: " << HostReplayCommand(seed, "none", 5);
    lost += result.stats.replicas_lost;
    EXPECT_EQ(result.stats.replicas_replaced,
              result.stats.replicas_lost + result.stats.replicas_retired);
  }
  EXPECT_GT(lost, 0u);
  // Seed 200131: a deposed leader's pending puts end when the new leader's
  // entries take their slots; with request-id stamps equal across replicas
  // (all started at one instant) it acknowledged a put it never made, and
  // the final read showed the older value (D99). Tied to the
  // seed's draws.
  HostSeedConfig config;
  config.seed = 200131;
  config.replicas = 5;
  const HostSeedResult result = RunHostSeed(config);
  EXPECT_TRUE(result.ok) << result.violation;
  // The same seed with every replica's request ids equal: the hosts tell
  // their own proposals by proposer, so nothing is acknowledged that was
  // not made.
  config.equal_restart_stamps = true;
  const HostSeedResult equal_ids = RunHostSeed(config);
  EXPECT_TRUE(equal_ids.ok) << equal_ids.violation;
  EXPECT_EQ(HostReplayCommand(4, "none", 5),
            "tessera sim --host production --replicas 5 --seed-start 4 --seeds 1 --trace");
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
  EXPECT_EQ(HostReplayCommand(12, "stale-read"),
            "tessera sim --host production --seed-start 12 --seeds 1 --trace --bug stale-read");
  std::ostringstream refused;
  args.replicas = 4;
  EXPECT_EQ(RunHostSimCommand(args, refused), 2);
  EXPECT_NE(refused.str().find("--replicas 3, 5, 7 or 9"), std::string::npos);
  std::ostringstream no_spares;
  args.replicas = 9;
  args.replica_loss = true;
  EXPECT_EQ(RunHostSimCommand(args, no_spares), 2);
  EXPECT_NE(no_spares.str().find("--replica-loss needs room"), std::string::npos);
  args.replica_loss = false;
  EXPECT_EQ(HostReplayCommand(3, "none", 7, true),
            "tessera sim --host production --replicas 7 --seed-start 3 --seeds 1 --trace "
            "--replica-loss");
  std::ostringstream listed;
  args.replicas = 3;
  args.bug = "list";
  EXPECT_EQ(RunHostSimCommand(args, listed), 0);
  EXPECT_EQ(listed.str(),
            "bugs: ack-before-quorum skip-fsync lease-ignore-drift stale-read s3-retry-unknown\n");
  // With --s3 every seed runs S3 clients, and the summary counts their
  // operations.
  std::ostringstream s3;
  args.bug = "none";
  args.s3 = true;
  EXPECT_EQ(RunHostSimCommand(args, s3), 0) << s3.str();
  EXPECT_NE(s3.str().find("S3 clients in every seed: 2 passed, 0 failed"), std::string::npos)
      << s3.str();
  EXPECT_EQ(s3.str().find(" 0 S3 operations"), std::string::npos) << s3.str();
  args.s3 = false;
  std::ostringstream unknown_bug;
  args.bug = "no-such-bug";
  EXPECT_EQ(RunHostSimCommand(args, unknown_bug), 2);
  EXPECT_NE(unknown_bug.str().find("unknown --bug 'no-such-bug'"), std::string::npos)
      << unknown_bug.str();
}

// Each bug the production host can inject is caught by a checker meant
// for it within a few seeds, in groups of 3 and 5: stale reads by
// linearizability, clocks outside the drift bound by lease safety, writes
// acknowledged before a quorum and skipped fsyncs by durability,
// agreement or linearizability, S3 operations resent without proof that
// they were never proposed by exactly-once.
TEST(HostSeedTest, InjectedBugsAreCaught) {
  const std::vector<std::string> lost_writes{"durability: ", "agreement: ", "linearizability: "};
  const std::map<SimBug, std::vector<std::string>> caught_by{
      {SimBug::kAckBeforeQuorum, lost_writes},
      {SimBug::kSkipFsync, lost_writes},
      {SimBug::kStaleRead, {"linearizability: "}},
      {SimBug::kLeaseIgnoreDrift, {"lease safety: "}},
      {SimBug::kS3RetryUnknown, {"exactly-once: "}}};
  for (SimBug bug : HostSeedBugs()) {
    ASSERT_EQ(caught_by.count(bug), 1u) << SimBugName(bug);
    for (uint32_t replicas : {3u, 5u}) {
      std::string violation;
      uint64_t seed = 1;
      for (; seed <= kBugDetectionSeedsMax && violation.empty(); ++seed) {
        HostSeedConfig config;
        config.seed = seed;
        config.replicas = replicas;
        config.bug = bug;
        violation = RunHostSeed(config).violation;
      }
      const auto& prefixes = caught_by.at(bug);
      EXPECT_TRUE(std::any_of(prefixes.begin(), prefixes.end(),
                              [&](const std::string& p) { return violation.rfind(p, 0) == 0; }))
          << SimBugName(bug) << " " << replicas << " replicas: '" << violation << "'";
      std::printf("[ bug      ] %-18s %u replicas: seed %llu, %s\n", SimBugName(bug), replicas,
                  static_cast<unsigned long long>(seed - 1), violation.substr(0, 120).c_str());
    }
  }
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

  EXPECT_EQ(CheckLeaseHolders({}, 5), "");
  EXPECT_EQ(CheckLeaseHolders({2}, 5), "");
  EXPECT_EQ(CheckLeaseHolders({1, 3}, 5), "lease safety: replicas 1 and 3 hold a lease at 5 us");

  EXPECT_EQ(CheckDigestsEqual({{1, "x"}, {2, "x"}, {3, "x"}}), "");
  EXPECT_NE(CheckDigestsEqual({{1, "x"}, {2, "x"}, {3, "y"}}).find("agreement: replica 3"),
            std::string::npos);
}

// A voter lost for good is replaced as the autoadmin's planner decides: a
// log replica stands in first, then a full replica, each created from
// meta's descriptor and added through the host's membership path; the
// seed ends only once the group is whole (or fails liveness).
TEST(HostSeedTest, LostVoterReplacedByThePlanner) {
  HostSeedStats total;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    HostSeedConfig config;
    config.seed = seed;
    config.replica_loss_every_seed = true;
    const HostSeedResult result = RunHostSeed(config);
    ASSERT_TRUE(result.ok) << "seed " << seed << ": " << result.violation
                           << "\nreplay: " << HostReplayCommand(seed, "none", 3, true);
    total.replicas_lost += result.stats.replicas_lost;
    total.replicas_retired += result.stats.replicas_retired;
    total.replicas_replaced += result.stats.replicas_replaced;
    total.log_replicas += result.stats.log_replicas;
    total.autoadmin_actions += result.stats.autoadmin_actions;
    total.log_slots_checked += result.stats.log_slots_checked;
  }
  EXPECT_GT(total.replicas_lost, 0u);
  EXPECT_EQ(total.replicas_replaced, total.replicas_lost + total.replicas_retired);
  EXPECT_GE(total.log_replicas, total.replicas_lost) << "a log replica stands in first";
  EXPECT_GT(total.autoadmin_actions, total.replicas_lost * 8);
  EXPECT_GT(total.log_slots_checked, 6u * 10);
}

TEST(HostSeedTest, LogAgreementCatchesKnownViolations) {
  auto entry = [](uint64_t slot, uint64_t round, std::string command, uint32_t proposer,
                  uint64_t request_id) {
    pb::Entry e;
    e.set_slot(slot);
    e.mutable_ballot()->set_round(round);
    e.set_type(pb::ENTRY_COMMAND);
    e.set_command(std::move(command));
    e.set_proposer(proposer);
    e.set_request_id(request_id);
    return e;
  };
  consensus::RecoveredState a;
  a.entries = {entry(1, 1, "x", 1, 10), entry(2, 1, "y", 1, 11), entry(3, 1, "z", 1, 12)};
  a.applied_index = 2;  // slot 3 is not applied: not compared
  consensus::RecoveredState b;
  b.entries = {entry(2, 3, "y", 1, 11), entry(3, 3, "w", 2, 12)};  // re-proposed under round 3
  b.applied_index = 3;
  LogAgreement agreement;
  EXPECT_EQ(agreement.Observe(1, a), "");
  EXPECT_EQ(agreement.Observe(2, b), "") << "the same proposal under another ballot agrees";
  EXPECT_EQ(agreement.slots(), 3u);

  consensus::RecoveredState c = b;
  c.entries[1].set_command("v");  // slot 3 applied with another command
  EXPECT_NE(agreement.Observe(3, c).find("agreement: slot 3 applied with different entries on "
                                         "replicas 2 and 3"),
            std::string::npos)
      << agreement.violation();

  LogAgreement twice;
  consensus::RecoveredState d;
  d.entries = {entry(1, 1, "x", 1, 10), entry(2, 1, "x", 1, 10)};  // one request, two slots
  d.applied_index = 2;
  EXPECT_EQ(twice.Observe(1, d), "agreement: request 10 of proposer 1 applied at slots 1 and 2");
}

TEST(HostSeedTest, ReadyContractCatchesKnownViolations) {
  auto entry = [](uint64_t slot) {
    pb::Entry e;
    e.set_slot(slot);
    return e;
  };
  consensus::Ready persist;
  persist.entries = {entry(5), entry(6)};
  persist.persist_seq = 1;
  persist.committed = {entry(3), entry(4)};
  ReadyContract ok(1);
  EXPECT_EQ(ok.Check(persist), "");
  consensus::Ready next;
  next.committed = {entry(5)};
  next.snapshot_to_install.emplace();
  next.snapshot_to_install->mutable_meta()->set_last_slot(9);
  EXPECT_EQ(ok.Check(next), "");
  consensus::Ready after_install;
  after_install.committed = {entry(10)};
  EXPECT_EQ(ok.Check(after_install), "") << "committed slots follow the snapshot's last slot";

  ReadyContract gap(2);
  EXPECT_EQ(gap.Check(persist), "");
  consensus::Ready skipped;
  skipped.committed = {entry(6)};
  EXPECT_EQ(gap.Check(skipped), "contract: replica 2 Ready 2: committed slot 6 after 4");

  ReadyContract behind(3);
  EXPECT_EQ(behind.Check(persist), "");
  consensus::Ready old_snapshot;
  old_snapshot.snapshot_to_install.emplace();
  old_snapshot.snapshot_to_install->mutable_meta()->set_last_slot(2);
  EXPECT_NE(behind.Check(old_snapshot).find("snapshot to install at slot 2 behind committed slot 4"),
            std::string::npos);

  ReadyContract unsequenced(1);
  consensus::Ready no_seq = persist;
  no_seq.persist_seq = 0;
  EXPECT_NE(unsequenced.Check(no_seq).find("a write without a persist_seq"), std::string::npos);

  ReadyContract backwards(1);
  consensus::Ready promise;
  promise.hard_state.emplace();
  promise.hard_state->mutable_promised()->set_round(4);
  promise.persist_seq = 1;
  EXPECT_EQ(backwards.Check(promise), "");
  promise.hard_state->mutable_promised()->set_round(3);
  promise.persist_seq = 2;
  EXPECT_NE(backwards.Check(promise).find("promised ballot 3.0 below 4.0"), std::string::npos);

  ReadyContract to_self(1);
  consensus::Ready message;
  message.messages.emplace_back();
  message.messages.back().set_to(1);
  EXPECT_EQ(to_self.Check(message), "contract: replica 1 Ready 1: a message addressed to 1");
}

TEST(HostSeedTest, ReplacementNotConvergedSaysWhatIsMissing) {
  const std::set<ReplicaId> gone{2};
  pb::PartitionDescriptor descriptor = HostInitialDescriptor(7, 3);
  pb::Membership m;
  for (uint32_t v : {1, 2, 3}) m.add_voters(v);
  EXPECT_EQ(ReplacementNotConverged(m, descriptor, 3, 6, gone), "lost voter 2");
  m.set_voters(1, 5);  // node 5 is in az2, as node 2 was
  m.add_log_only(5);
  EXPECT_EQ(ReplacementNotConverged(m, descriptor, 3, 6, gone), "a log replica remains");
  m.clear_log_only();
  m.add_learners(4);
  EXPECT_EQ(ReplacementNotConverged(m, descriptor, 3, 6, gone), "a learner remains");
  m.clear_learners();
  EXPECT_EQ(ReplacementNotConverged(m, descriptor, 3, 6, gone),
            "meta's descriptor lags the membership");
  descriptor.mutable_replicas(1)->set_node_id(5);
  EXPECT_EQ(ReplacementNotConverged(m, descriptor, 3, 6, gone), "");
  m.set_voters(1, 4);  // node 4 is in az1 with node 1: two AZs only
  descriptor.mutable_replicas(1)->set_node_id(4);
  EXPECT_EQ(ReplacementNotConverged(m, descriptor, 3, 6, gone), "voters in 2 AZs");
  m.add_voters(6);
  EXPECT_EQ(ReplacementNotConverged(m, descriptor, 3, 6, gone), "4 voters");
  EXPECT_EQ(HostAzOf(1), "az1");
  EXPECT_EQ(HostAzOf(6), "az3");
}

}  // namespace
}  // namespace tessera::sim
