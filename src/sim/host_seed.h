// RunHostSeed: one seed of the simulator on the production host
// (HostCluster): a plan drawn from the seed (network loss, duplication,
// delays and delay spikes; one-way and gray links; process pauses;
// leadership transfers and campaigns without pre-vote;
// large values; crashes with torn tails, in the middle of group commits and
// apply batches, and of every member at once (a power loss); partitions
// isolating a replica or splitting the group into a minority and a
// majority; a disk returning errors; a process dying in
// the middle of a snapshot install; a log compacted early enough that
// lagging replicas need snapshots; clocks drifting within the bound the
// leases assume; in a third of the seeds (every seed with
// replica_loss_every_seed) a voter lost for good, replaced as the
// autoadmin's planner decides (autoadmin::Plan: a log replica standing in
// first, AZ placement, meta's descriptor; host_autoadmin.h), or a live
// voter retired (the leader, half the time) and replaced by a spare
// through the host's membership changes: add learner, promote, remove), a
// stream of writes through the leader, clients putting and lease-reading
// a few keys through whichever replica they believe leads, a heal, and
// the checkers:
//   durability  every acknowledged write is on every member at the end;
//   contract    every Ready batch of every replica's consensus core keeps
//               ready.h's promises (ReadyContract, HostCluster);
//   agreement   the replicas' durable logs agree per applied slot and
//               apply each request id once (LogAgreement: every replica's
//               log before each of its crashes and at the end), and their
//               state digests are equal at the end;
//   liveness    after the heal the replacement finishes and a write is
//               acknowledged within a bound;
//   linearizability  the clients' history (chaos::CheckKvHistory), with
//               a final strong read of every key;
//   lease safety  at no instant between two steps do two replicas hold a
//               lease, each on its own clock;
//   S3 invariants  in seeds with S3 clients (s3_clients.h): on every
//               replica's applied state, each S3 operation in effect at
//               most once and every acknowledged one in effect, no ghost
//               records, usage counters exact, the listing complete
//               (s3_invariants.h).
// The same seed gives the same trace (trace_hash) and the same result.
//
// Thread safety: none; each call owns its cluster.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/sim_bug.h"

namespace tessera::sim {

struct HostSeedConfig {
  uint64_t seed = 1;
  uint32_t replicas = 3;  // voters at the start: 3, 5, 7 or 9 (9: no spare, so no loss)
  uint32_t rounds = 30;  // writes attempted before the heal
  std::ostream* trace = nullptr;  // every trace line, when set
  // A bug to inject, to show that the checkers catch it (HostSeedBugs):
  // kStaleRead: clients' gets are the asked replica's applied state
  // (EVENTUAL), recorded as linearizable reads; kLeaseIgnoreDrift: clocks
  // run at half, true or double speed, far outside max_clock_drift_ppm;
  // kAckBeforeQuorum: hosts acknowledge writes once their own log write
  // is durable (GroupHostTestingOptions), and faults cut the leader off;
  // kSkipFsync: syncs of the write-ahead log make nothing durable
  // (CrashFileSystem::SetSkipLogSync), and faults are power losses.
  SimBug bug = SimBug::kNone;
  bool equal_restart_stamps = false;  // HostClusterOptions::equal_restart_stamps
  // Every seed loses a voter for good (never retires one), replaced as
  // the autoadmin's planner decides: `tessera sim --replica-loss` and the
  // replica-loss sweep.
  bool replica_loss_every_seed = false;
  // Every seed runs S3 clients against one bucket (S3Clients; the S3
  // invariants checked at the end): `tessera sim --s3`. Without it a
  // fourth of the seeds do (drawn from their own stream), and every seed
  // with the bug kS3RetryUnknown.
  bool s3_every_seed = false;
};

// The bugs RunHostSeed can inject: every SimBug.
std::vector<SimBug> HostSeedBugs();

struct HostSeedStats {
  uint64_t writes_acked = 0;
  uint64_t crashes = 0;
  uint64_t partitions = 0;
  uint64_t disk_faults = 0;
  uint64_t install_faults = 0;
  uint64_t gray_failures = 0;
  uint64_t pauses = 0;         // processes that stopped handling anything
  uint64_t transfers = 0;      // leadership handed to another voter
  uint64_t campaigns = 0;      // elections started at once, without pre-vote
  uint64_t splits = 0;         // of the partitions, splits into two sides
  uint64_t power_losses = 0;   // of the crashes, every member at once
  uint64_t large_values = 0;   // writes of 16..256 KiB
  uint64_t clock_changes = 0;
  uint64_t replicas_lost = 0;       // voters lost for good
  uint64_t replicas_retired = 0;    // live voters the membership actor replaces
  uint64_t replicas_replaced = 0;   // lost or retired, by a spare, through membership changes
  uint64_t membership_changes = 0;  // proposed (add learner, promote, remove)
  uint64_t log_replicas = 0;        // created by the planner to stand in for a lost voter
  uint64_t autoadmin_actions = 0;   // planned by autoadmin::Plan and carried out
  uint64_t log_slots_checked = 0;   // applied slots compared across the durable logs
  uint64_t client_ops = 0;    // clients' operations recorded in the history
  uint64_t strong_reads = 0;  // of them, gets answered by a lease read
  uint64_t unknown_puts = 0;  // of them, puts whose outcome stayed unknown
  uint64_t s3_ops = 0;       // S3 operations sent (0: a seed without S3 clients)
  uint64_t s3_acked = 0;     // of them, answered
  uint64_t s3_unknown = 0;   // of them, outcome unknown
  uint64_t s3_resent = 0;    // resends after a proven refusal
  uint64_t s3_completed = 0;  // multipart uploads completed
  uint64_t messages_sent = 0;
  uint64_t virtual_time_us = 0;
};

struct HostSeedResult {
  bool ok = true;
  std::string violation;  // the first checker that failed, and why
  uint64_t trace_hash = 0;
  HostSeedStats stats;
};

HostSeedResult RunHostSeed(const HostSeedConfig& config);
// Whether the seed runs S3 clients (HostSeedConfig::s3_every_seed).
bool HostSeedRunsS3(const HostSeedConfig& config);

// The durability checker, on the values each replica holds for the
// acknowledged keys: empty when every replica holds every acknowledged
// value, else the first missing or different one.
std::string CheckAcknowledgedWrites(
    const std::map<std::string, std::string>& acked,
    const std::map<uint32_t, std::map<std::string, std::optional<std::string>>>& held);
// The agreement checker: empty when every digest equals the first.
std::string CheckDigestsEqual(const std::map<uint32_t, std::string>& digests);
// The lease-safety checker at one instant: empty when at most one replica
// holds a lease.
std::string CheckLeaseHolders(const std::vector<uint32_t>& holders, uint64_t at_us);

}  // namespace tessera::sim
