// Goal: the production host in simulation replays exactly: three GroupHosts
// on stepped NodeStores over CrashFileSystems and the SimTransport, with a
// lossy network and the leader crashing in the middle of a group commit,
// give the same trace and the same state digests for the same seed (and a
// different trace for another seed); every acknowledged write survives and
// the replicas end with equal digests.
#include "sim/host_cluster.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "node/group_host_test_util.h"

namespace tessera::sim {
namespace {

HostClusterOptions OptionsFor(uint64_t seed) {
  HostClusterOptions o;
  o.seed = seed;
  o.group_id = 21;
  // The node tests' timings; HostCluster sets self, group and seed per replica.
  o.consensus = node::testing::FastOptions(0, o.group_id, seed);
  o.network.loss_ppm = 20'000;
  o.network.duplicate_ppm = 10'000;
  o.network.delay_min_us = 300;
  o.network.delay_jitter_us = 2'000;
  return o;
}

pb::KvBatch Batch(const std::string& key, const std::string& value) {
  pb::KvBatch batch;
  auto* w = batch.add_writes();
  w->set_key(key);
  w->set_value(value);
  return batch;
}

// Writes through the leader until one attempt is acknowledged.
bool Put(HostCluster& cluster, const std::string& key, const std::string& value) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (!cluster.RunUntil([&] { return cluster.Leader() != 0; }, 10'000'000)) return false;
    auto result = std::make_shared<std::optional<Result<pb::KvApplyResult>>>();
    cluster.Write(cluster.Leader(), Batch(key, value), result);
    if (!cluster.RunUntil([&] { return result->has_value(); }, 5'000'000)) return false;
    if ((*result)->ok()) return true;
  }
  return false;
}

struct Outcome {
  std::vector<std::string> trace;
  std::vector<std::string> digests;
  uint64_t unsynced_lost = 0;
};

Outcome RunScenario(uint64_t seed) {
  Outcome out;
  HostCluster cluster(OptionsFor(seed));
  const Status started = cluster.Start();
  EXPECT_TRUE(started.ok()) << started.ToString();
  if (!started.ok()) return out;
  std::map<std::string, std::string> acked;
  for (int i = 0; i < 8; ++i) {
    const std::string key = "k" + std::to_string(i);
    EXPECT_TRUE(Put(cluster, key, "v")) << key;
    acked[key] = "v";
  }
  // A burst is proposed and its log writes queued, not yet group-committed,
  // when the leader's process dies.
  const ReplicaId leader = cluster.Leader();
  EXPECT_NE(leader, 0u);
  if (leader == 0) return out;
  std::vector<std::shared_ptr<std::optional<Result<pb::KvApplyResult>>>> burst;
  for (int i = 0; i < 6; ++i) {
    burst.push_back(std::make_shared<std::optional<Result<pb::KvApplyResult>>>());
    cluster.Write(leader, Batch("b" + std::to_string(i), "x"), burst.back());
  }
  cluster.loop().RunReady();
  out.unsynced_lost = cluster.Crash(leader);
  for (size_t i = 0; i < burst.size(); ++i) {
    if (burst[i]->has_value() && (*burst[i])->ok()) acked["b" + std::to_string(i)] = "x";
  }
  EXPECT_TRUE(cluster.Restart(leader).ok());
  EXPECT_TRUE(Put(cluster, "after", "crash"));
  acked["after"] = "crash";
  EXPECT_TRUE(cluster.RunUntil([&] { return cluster.CaughtUp(); }, 20'000'000));
  for (ReplicaId id = 1; id <= 3; ++id) {
    for (const auto& [key, value] : acked) {
      EXPECT_EQ(cluster.ValueAt(id, key), value) << "replica " << id << " key " << key;
    }
    Result<std::string> digest = cluster.Digest(id);
    EXPECT_TRUE(digest.ok()) << digest.status().ToString();
    out.digests.push_back(digest.ok() ? *digest : "");
  }
  out.trace = cluster.trace();
  if (std::getenv("TESSERA_SIM_TRACE") != nullptr) {
    for (const std::string& line : out.trace) std::printf("%s\n", line.c_str());
  }
  return out;
}

TEST(HostClusterTest, SameSeedSameTraceAndEqualDigestsAfterALeaderCrash) {
  const Outcome first = RunScenario(5);
  ASSERT_FALSE(first.trace.empty());
  EXPECT_EQ(first.digests[0], first.digests[1]);
  EXPECT_EQ(first.digests[0], first.digests[2]);
  const Outcome again = RunScenario(5);
  ASSERT_EQ(again.trace.size(), first.trace.size());
  for (size_t i = 0; i < first.trace.size(); ++i) {
    ASSERT_EQ(again.trace[i], first.trace[i]) << "first difference at trace line " << i;
  }
  EXPECT_EQ(again.digests, first.digests);
  EXPECT_EQ(again.unsynced_lost, first.unsynced_lost);
  EXPECT_NE(RunScenario(6).trace, first.trace);
  RecordProperty("trace_lines", std::to_string(first.trace.size()));
}

// Seeded crash campaign: while writes go on, replicas crash at instants the
// seed draws (in the middle of group commits and apply batches, torn tails
// included) and restart; at the end every acknowledged write is on every
// replica and the digests are equal. A failure names its seed.
TEST(HostClusterTest, SeededCrashesLoseNoAcknowledgedWrite) {
  for (uint64_t seed = 100; seed < 103; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    HostCluster cluster(OptionsFor(seed));
    ASSERT_TRUE(cluster.Start().ok());
    Prng prng(seed);
    std::map<std::string, std::string> acked;
    std::vector<std::pair<std::string, std::shared_ptr<std::optional<Result<pb::KvApplyResult>>>>>
        pending;
    for (int round = 0; round < 12; ++round) {
      const ReplicaId leader = cluster.Leader();
      if (leader != 0) {
        const std::string key = "r" + std::to_string(round);
        pending.emplace_back(key, std::make_shared<std::optional<Result<pb::KvApplyResult>>>());
        cluster.Write(leader, Batch(key, "v" + std::to_string(round)), pending.back().second);
      }
      cluster.RunFor(prng.Range(1'000, 60'000));
      if (prng.Chance(30)) {
        const ReplicaId victim = static_cast<ReplicaId>(prng.Range(1, 3));
        if (cluster.up(victim)) {
          cluster.Crash(victim);
          cluster.RunFor(prng.Range(0, 300'000));
          ASSERT_TRUE(cluster.Restart(victim).ok());
        }
      }
    }
    ASSERT_TRUE(cluster.RunUntil([&] { return cluster.CaughtUp(); }, 30'000'000));
    for (const auto& [key, result] : pending) {
      if (result->has_value() && (*result)->ok()) acked[key] = "v" + key.substr(1);
    }
    ASSERT_TRUE(Put(cluster, "final", "1"));
    acked["final"] = "1";
    ASSERT_TRUE(cluster.RunUntil([&] { return cluster.CaughtUp(); }, 10'000'000));
    std::string digest;
    for (ReplicaId id = 1; id <= 3; ++id) {
      for (const auto& [key, value] : acked) EXPECT_EQ(cluster.ValueAt(id, key), value) << id;
      Result<std::string> d = cluster.Digest(id);
      ASSERT_TRUE(d.ok()) << d.status().ToString();
      if (id == 1) digest = *d;
      EXPECT_EQ(*d, digest) << "replica " << id;
    }
  }
}

// A follower's disk returns errors: its group stops on it (fail-stop) and
// the others go on; restarted on a healed disk, it catches up.
TEST(HostClusterTest, FailingDiskStopsTheReplicaAndTheOthersGoOn) {
  HostCluster cluster(OptionsFor(9));
  ASSERT_TRUE(cluster.Start().ok());
  ASSERT_TRUE(Put(cluster, "before", "1"));
  const ReplicaId leader = cluster.Leader();
  const ReplicaId follower = leader == 1 ? 2 : 1;
  cluster.SetDiskFailing(follower, true);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Put(cluster, "during" + std::to_string(i), "2"));
  ASSERT_TRUE(cluster.RunUntil([&] { return cluster.StatusOf(follower)->stopped; }, 5'000'000));
  cluster.SetDiskFailing(follower, false);
  cluster.Crash(follower, /*torn=*/false);
  ASSERT_TRUE(cluster.Restart(follower).ok());
  ASSERT_TRUE(cluster.RunUntil([&] { return cluster.CaughtUp(); }, 20'000'000));
  EXPECT_EQ(cluster.ValueAt(follower, "during3"), "2");
  Result<std::string> restarted = cluster.Digest(follower);
  Result<std::string> led = cluster.Digest(leader);
  ASSERT_TRUE(restarted.ok() && led.ok());
  EXPECT_EQ(*restarted, *led);
}

// A follower cut off while the leader compacted past it gets a snapshot; its
// disk fails as the chunks arrive. RocksDB then refuses the store's every
// later write, so the group must fail-stop (not refuse chunk after chunk
// while it looks healthy); restarted on a healed disk, it catches up.
TEST(HostClusterTest, DiskErrorWhileStagingASnapshotStopsTheReplica) {
  HostClusterOptions options = OptionsFor(31);
  options.network = NetworkParams{};
  options.compaction_trigger_slots = 20;
  options.compaction_keep_slots = 2;
  options.snapshot_chunk_bytes = 1 << 10;
  HostCluster cluster(options);
  ASSERT_TRUE(cluster.Start().ok());
  ASSERT_TRUE(Put(cluster, "first", "1"));
  const ReplicaId leader = cluster.Leader();
  const ReplicaId follower = leader == 3 ? 2 : 3;
  // Nothing left to apply on the follower: only the staging can fail.
  ASSERT_TRUE(cluster.RunUntil([&] { return cluster.CaughtUp(); }, 5'000'000));
  cluster.Isolate(follower, true);
  const std::string value(100, 'v');
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(Put(cluster, "key" + std::to_string(i), value)) << i;
  ASSERT_GT(cluster.LogStart(leader), 2u) << "the leader compacted past the follower";
  cluster.SetDiskFailing(follower, true);
  cluster.Isolate(follower, false);
  ASSERT_TRUE(cluster.RunUntil([&] { return cluster.StatusOf(follower)->stopped; }, 5'000'000))
      << "the group stopped on its failed disk";
  cluster.SetDiskFailing(follower, false);
  cluster.Crash(follower, /*torn=*/false);
  ASSERT_TRUE(cluster.Restart(follower).ok());
  ASSERT_TRUE(cluster.RunUntil([&] { return cluster.CaughtUp(); }, 20'000'000));
  Result<std::string> restarted = cluster.Digest(follower);
  Result<std::string> led = cluster.Digest(leader);
  ASSERT_TRUE(restarted.ok() && led.ok());
  EXPECT_EQ(*restarted, *led);
}

// A follower that missed more than the leader keeps of its log catches up by
// a streamed snapshot; its process dies in the middle of the install (after
// the durable marker and one copy batch); restarted, its store finishes the
// install and the replica ends with the leader's digest.
TEST(HostClusterTest, CrashInTheMiddleOfASnapshotInstallResumesAtRestart) {
  HostClusterOptions options = OptionsFor(31);
  options.network = NetworkParams{};
  options.compaction_trigger_slots = 20;
  options.compaction_keep_slots = 2;
  options.snapshot_chunk_bytes = 1 << 10;
  options.snapshot_install_batch_bytes = 512;
  HostCluster cluster(options);
  ASSERT_TRUE(cluster.Start().ok());
  ASSERT_TRUE(Put(cluster, "first", "1"));
  const ReplicaId leader = cluster.Leader();
  const ReplicaId follower = leader == 3 ? 2 : 3;
  cluster.Crash(follower, /*torn=*/false);
  const std::string value(100, 'v');
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(Put(cluster, "key" + std::to_string(i), value)) << i;
  ASSERT_GT(cluster.LogStart(leader), 2u) << "the leader compacted past the follower";

  RestartFaults faults;
  faults.die_in_install_after_batches = 1;
  ASSERT_TRUE(cluster.Restart(follower, faults).ok());
  ASSERT_TRUE(cluster.RunUntil([&] { return cluster.StatusOf(follower)->stopped; }, 10'000'000))
      << "the install stopped half-way";
  EXPECT_TRUE(cluster.InstallPending(follower));
  cluster.Crash(follower);
  ASSERT_TRUE(cluster.Restart(follower).ok());
  EXPECT_FALSE(cluster.InstallPending(follower)) << "finished when the store opened";
  ASSERT_TRUE(Put(cluster, "last", "1"));
  ASSERT_TRUE(cluster.RunUntil([&] { return cluster.CaughtUp(); }, 20'000'000));
  EXPECT_EQ(cluster.ValueAt(follower, "key39"), value);
  Result<std::string> installed = cluster.Digest(follower);
  Result<std::string> led = cluster.Digest(leader);
  ASSERT_TRUE(installed.ok() && led.ok());
  EXPECT_EQ(*installed, *led);
}

}  // namespace
}  // namespace tessera::sim
