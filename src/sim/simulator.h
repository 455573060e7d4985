// The deterministic simulator: runs one 3- or 5-replica Multi-Paxos group
// (consensus::Replica, unchanged) on a virtual clock with simulated network,
// disks and clocks, a small key-value state machine and a few clients, and
// checks safety and liveness invariants. Everything derives from one seed:
// the same SimConfig yields a byte-identical trace.
//
// One run: a FAULT phase (a random subset of the enabled faults, with random
// parameters), then a HEAL phase (every fault ends, crashed replicas restart)
// that must elect a leader, commit client writes and bring every replica up
// to date within a bound derived from Options (simulator.cc, LivenessBoundUs).
//
// The host drives each Replica exactly as ready.h says: writes go to a
// simulated disk as pending until a simulated fsync; only then go
// messages_after_persist and OnPersisted; committed entries are applied at
// once, the applied state and its index written as one unit; snapshots are
// built from and installed into the applied state; the log is compacted
// below the applied index. Clients send get (as a lease read), put and
// compare-and-set to the replica they believe leads.
//
// Invariants checked (the first violation ends the run):
//  * agreement: no slot is chosen with two values; replicas that applied the
//    same slot hold the same key-value data (also after a snapshot install);
//  * durability: every write acknowledged to a client stays at its slot with
//    its request id on every replica, across crashes;
//  * linearizability of the client history (chaos::CheckKvHistory);
//  * lease safety: at no event instant do two replicas hold a lease;
//  * liveness: after heal, a client write commits within the bound and every
//    member of the chosen membership catches up;
//  * contract: the core keeps ready.h's promises (committed entries in slot
//    order, recoverable durable state, snapshots not behind the applied state).
//
// Thread safety: RunSimulation is reentrant; runs share nothing.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "consensus/options.h"

namespace tessera::sim {

// Host-side bugs the simulator can inject to show that its checkers fail.
enum class SimBug {
  kNone,
  // The host acknowledges a write to the client once the leader's own copy is
  // durable, without waiting for the Replica to commit it.
  kAckBeforeQuorum,
  // The host calls OnPersisted (and sends messages_after_persist) before the
  // write is durable, so a crash loses promised or accepted state.
  kSkipFsync,
  // The host feeds one replica a clock running far outside
  // Options::max_clock_drift_ppm.
  kLeaseIgnoreDrift,
  // The host serves gets from the local state of whichever replica a client
  // asks, without a lease.
  kStaleRead,
};
const char* SimBugName(SimBug bug);  // "none", "ack-before-quorum", ...
std::optional<SimBug> SimBugFromName(std::string_view name);
std::vector<SimBug> AllSimBugs();  // every bug except kNone

enum class Invariant {
  kNone,
  kAgreement,
  kDurability,
  kLinearizability,
  kLinearizabilityInconclusive,
  kLeaseSafety,
  kLiveness,
  kContract,
  kConfig,  // the simulated Options failed Validate()
};
const char* InvariantName(Invariant invariant);

// Faults a run MAY inject; each seed enables a random subset of these.
struct SimFaults {
  bool loss = true;
  bool duplication = true;
  bool reordering = true;
  bool delay_spikes = true;
  bool partitions = true;             // symmetric splits and isolating a replica
  bool asymmetric_partitions = true;  // one direction of some links only
  bool gray_failures = true;          // one replica's links to one peer flaky
  bool crashes = true;                // lose unsynced writes, restart later
  bool pauses = true;                 // a process stops handling anything for a while
  bool clock_drift = true;            // rates within max_clock_drift_ppm
  bool compaction = true;             // CompactLog so laggards need snapshots
  bool membership = true;             // replace voters: add learner, promote, remove
  bool campaigns = true;              // a random replica campaigns, skipping pre-vote,
                                      // or the leader hands over to a random voter
  bool large_values = true;           // some writes carry 16..256 KiB values
  // Voters die for good (crash, disk gone, never back); the autoadmin's
  // planner (src/autoadmin/planner.h) replaces them. Replaces the random
  // membership actor in the seeds that run it.
  bool replica_loss = true;

  // No fault at all (a test then switches on the ones it wants).
  static SimFaults None() {
    SimFaults none;
    for (bool SimFaults::*fault : kAll) none.*fault = false;
    return none;
  }
  static constexpr bool SimFaults::*kAll[] = {
      &SimFaults::loss,          &SimFaults::duplication,
      &SimFaults::reordering,    &SimFaults::delay_spikes,
      &SimFaults::partitions,    &SimFaults::asymmetric_partitions,
      &SimFaults::gray_failures, &SimFaults::crashes,
      &SimFaults::pauses,        &SimFaults::clock_drift,
      &SimFaults::compaction,    &SimFaults::membership,
      &SimFaults::campaigns,     &SimFaults::large_values,
      &SimFaults::replica_loss};
};
static_assert(sizeof(SimFaults) == sizeof(SimFaults::kAll) / sizeof(SimFaults::kAll[0]),
              "SimFaults::kAll must list every fault");

struct SimConfig {
  uint32_t replicas = 3;  // voters at the start (3 or 5); ids 1..replicas
  uint64_t seed = 1;
  SimFaults faults;
  // Each allowed fault runs in a seed with this probability.
  uint32_t fault_percent = 60;
  SimBug bug = SimBug::kNone;
  consensus::TimeUs fault_phase_min_us = 4'000'000;
  consensus::TimeUs fault_phase_max_us = 10'000'000;
  uint32_t clients_max = 6;  // each seed runs 2..clients_max clients
  uint32_t keys_max = 3;     // on 1..keys_max keys
  // Every seed runs replica_loss (when allowed), not fault_percent of them.
  bool replica_loss_every_seed = false;
  // When set, a readable event trace (virtual time, replica, event) is
  // written here as the run goes.
  std::ostream* trace = nullptr;
};

struct SimStats {
  consensus::TimeUs virtual_time_us = 0;
  consensus::TimeUs heal_at_us = 0;
  consensus::TimeUs recovered_after_heal_us = 0;  // heal -> first post-heal write
  uint64_t events = 0;
  uint64_t messages_sent = 0;
  uint64_t messages_delivered = 0;
  uint64_t messages_lost = 0;
  uint64_t messages_duplicated = 0;
  uint64_t commits = 0;  // distinct slots chosen
  uint64_t elections = 0;
  uint64_t crashes = 0;
  uint64_t fsyncs = 0;
  uint64_t snapshots_sent = 0;
  uint64_t snapshots_installed = 0;
  uint64_t replicas_lost = 0;      // voters that died for good
  uint64_t replicas_replaced = 0;  // final voters that started as spares
  uint64_t log_replicas = 0;       // spares provisioned as log replicas
  uint64_t compactions = 0;
  uint64_t writes_ok = 0;
  uint64_t writes_unknown = 0;
  uint64_t lease_reads = 0;
  uint64_t history_ops = 0;
  std::string faults;  // the faults this seed ran, e.g. "loss,crash,gray"
};

struct SimResult {
  bool ok = true;
  Invariant invariant = Invariant::kNone;
  std::string violation;  // one line; empty when ok
  consensus::TimeUs violation_at_us = 0;
  SimStats stats;
  // Digest of every traced event (also when no trace is written): equal
  // for runs of the same config.
  uint64_t trace_hash = 0;
};

SimResult RunSimulation(const SimConfig& config);

// The config `tessera sim` runs for one seed: the default fault mix, or, with
// a bug injected, every fault that exposes that bug in every seed (so that a
// bug shows within a few dozen seeds).
SimConfig MakeSimConfig(uint32_t replicas, uint64_t seed, SimBug bug);

// The Options a seed's replicas run with (shortened timings, randomised per
// seed); exposed for tests. Validate() holds for every seed.
consensus::Options SimOptions(uint64_t seed, uint32_t replicas, consensus::ReplicaId self);

// The liveness bound after heal for these Options (see simulator.cc).
consensus::TimeUs LivenessBoundUs(const consensus::Options& options);

}  // namespace tessera::sim
