// `tessera sim`: runs seeds S..S+N-1 of the deterministic simulator and
// reports every failing seed with the one-line command that replays it.
//
//   tessera sim [--host production] [--replicas 3|5|7|9] --seed-start S --seeds N
//               [--trace] [--bug NAME] [--replica-loss] [--s3] [--duration SECONDS]
//
// runs the production host (host_sim_command.h: RunHostSimCommand). This
// header holds what the command's parts share: its arguments and the seed
// loop. Output (deterministic; no wall-clock figures): one line per
// failing seed, a summary line, and on any failure the replay command of
// the first one. With --trace every seed's event trace precedes its result.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

namespace tessera::sim {

struct SimCommandArgs {
  uint32_t replicas = 3;  // 3, 5, 7 or 9
  uint64_t seed_start = 1;
  uint64_t seeds = 1;
  bool trace = false;
  std::string bug = "none";  // SimBugName; "list" prints the names
  // When positive, stop starting new seeds once this many wall-clock
  // seconds have passed (for soak runs); `seeds` stays the upper bound.
  double duration_s = 0;
  // Every seed loses a voter for good
  // (HostSeedConfig::replica_loss_every_seed).
  bool replica_loss = false;
  // Every seed runs S3 clients (HostSeedConfig::s3_every_seed).
  bool s3 = false;
  // The only host: "production" (the production GroupHost,
  // PartitionStateMachine and NodeStore; host_seed.h). The flag stays so
  // that replay lines keep their meaning.
  std::string host = "production";
};

// The seed loop of `tessera sim`. `run_seed` runs one seed (writing its
// trace when args.trace) and returns its line: a failure's ("FAIL seed
// ..."), or with args.trace a pass's ("ok seed ..."); `ok` says which.
struct SeedLine {
  bool ok = true;
  std::string line;  // printed when not empty
};
struct CampaignResult {
  uint64_t passed = 0;
  uint64_t failed = 0;
  std::optional<uint64_t> first_failure;
  uint64_t ran() const { return passed + failed; }
  // "S..E" of the seeds that ran (S..S when none did).
  std::string SeedRange(uint64_t seed_start) const;
};
// Runs seeds args.seed_start.. until args.seeds ran or, when
// args.duration_s is positive, that many wall-clock seconds passed.
CampaignResult RunSeedCampaign(const SimCommandArgs& args, std::ostream& out,
                               const std::function<SeedLine(uint64_t seed)>& run_seed);

}  // namespace tessera::sim
