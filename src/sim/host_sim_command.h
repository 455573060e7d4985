// `tessera sim --host production`: runs seeds S..S+N-1 of the simulator on
// the production host (host_seed.h: GroupHost, PartitionStateMachine and
// NodeStore with only time, disk and network simulated) and reports every
// failing seed, a summary line and, on any failure, the one-line command
// that replays the first one with its trace. Output is deterministic (no
// wall-clock figures; the hosts' log lines are off while it runs).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "sim/sim_command.h"

namespace tessera::sim {

// Returns 0 when every seed passed, 1 when one failed a checker, 2 on
// arguments this host does not support (3, 5, 7 or 9 replicas; --bug only
// those of HostSeedBugs; --replica-loss not with 9), explained on `out`.
int RunHostSimCommand(const SimCommandArgs& args, std::ostream& out);

// "tessera sim --host production [--replicas 5] --seed-start 1234 --seeds 1
// --trace [--bug NAME] [--replica-loss] [--s3]"
std::string HostReplayCommand(uint64_t seed, const std::string& bug = "none",
                              uint32_t replicas = 3, bool replica_loss = false,
                              bool s3 = false);

}  // namespace tessera::sim
