// The nemesis: starts and ends the faults of a schedule on a local cluster
// through the cluster-control library (cli/cluster_lifecycle.h,
// cli/cluster_status.h), the same calls `tessera cluster kill/stop/resume/
// partition/heal/slow-disk` make, and heals everything at the end.
//
// Faults and how they end:
//   kill          SIGKILL to the target's processes; launched again at the end
//                 (a relaunched process starts without fault rules: the rule
//                 faults in force are applied again by Tick once it answers)
//   pause         SIGSTOP; SIGCONT at the end
//   partition-az  the AZ's processes drop everything to and from the other
//                 AZs' (admin.faults drop rules); the rules are cleared at
//                 the end and the rule faults still in force applied again
//   slow-disk     fsync delay on the target's processes; cleared likewise
//   partition-one-way, majority-ring
//                 AZ cuts (schedule.h AzCuts) as drop rules; like partition-az
//   (with an AzCutter, i.e. `experiment run --netns`, the AZ cuts are made
//   by it, in the kernel, instead of by drop rules; cleared likewise)
//   lost-node     SIGKILL, then (once the process is gone) its data
//                 directory DIR/data/NAME deleted; launched again, empty, at
//                 the end, like kill
//   full-disk     synced writes of the target's processes fail (admin.faults
//                 fail_writes); cleared like slow-disk
//   clock-jump, clock-skew
//                 the target's wall clock offset / consensus clock rate
//                 skewed (admin.faults clock_offset_ms / clock_skew_ppm,
//                 common/fault_clock.h); cleared like slow-disk
// A kv_leader target is the storage node whose replica holds the lease of
// the partition of `leader.table` holding `leader.key` when the fault
// starts.
//
// Thread safety: none; one thread drives the nemesis (it owns the session).
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "cli/cluster_session.h"
#include "experiment/az_cutter.h"
#include "experiment/schedule.h"

namespace tessera::experiment {

// The key whose partition's leader a kv_leader target hits.
struct LeaderKey {
  std::string table;
  std::string key;
};

class Nemesis {
 public:
  // `log` receives one line per process touched. `kernel_cuts`, when not
  // null, makes the AZ cuts (it outlives the nemesis).
  Nemesis(cli::ClusterSession& session, LeaderKey leader, std::ostream& log,
          AzCutter* kernel_cuts = nullptr)
      : session_(session), leader_(std::move(leader)), log_(log), kernel_cuts_(kernel_cuts) {}

  // Injects `fault`; fills `targets` with the process names (or the AZ)
  // it hit. The error names the first process that could not be reached.
  Status Start(size_t id, const ScheduledFault& fault, std::vector<std::string>& targets);
  // Ends the fault started as `id` (a fault that failed to start is a no-op).
  Status End(size_t id);
  // Resumes every paused process, launches every process that is not
  // running, undrains the nodes drains are in force on, and clears every
  // fault rule. Safe to call at any time.
  Status HealEverything();
  // Called often by the driver: applies the rule faults in force again
  // after a killed process came back, until that works.
  void Tick();

 private:
  struct Active {
    size_t id = 0;
    ScheduledFault fault;
    std::vector<std::string> processes;  // kill, pause, lost-node, disk, clock and drain faults
    std::string az;                      // AZ faults (IsAzFault)
  };

  Result<std::vector<std::string>> ResolveProcesses(const pb::FaultTarget& target);
  Result<std::string> ResolveAz(const pb::FaultTarget& target);
  Result<std::string> LeaderNode();
  Status ApplyRules(const Active& a);
  // Clock jump: the offset; clock skew: the skew; on each target process
  // that takes fault rules (an AZ's routers are skipped).
  Status ApplyClock(const Active& a);
  // kill -9, wait until the process is gone, delete its data directory.
  Status LoseProcess(const std::string& name);
  // FAULT_DRAIN: asks meta to drain (or undrain) every target storage node.
  Status SetDrains(const Active& a, bool drain);

  cli::ClusterSession& session_;
  const LeaderKey leader_;
  std::ostream& log_;
  AzCutter* const kernel_cuts_;
  std::vector<Active> active_;
  bool rules_to_reapply_ = false;  // a process came back while rule faults are in force
  std::chrono::steady_clock::time_point next_reapply_;
};

}  // namespace tessera::experiment
