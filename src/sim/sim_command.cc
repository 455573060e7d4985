#include "sim/sim_command.h"

#include <chrono>

#include <ostream>
#include <sstream>

#include "common/limits.h"
#include "sim/simulator.h"

namespace tessera::sim {

namespace {

struct Totals {
  uint64_t commits = 0;
  uint64_t elections = 0;
  uint64_t crashes = 0;
  uint64_t messages = 0;
  uint64_t lease_reads = 0;
  uint64_t snapshots = 0;
  uint64_t lost = 0;
  uint64_t replaced = 0;
  uint64_t virtual_us = 0;
};

void Accumulate(const SimResult& result, Totals& totals) {
  totals.commits += result.stats.commits;
  totals.elections += result.stats.elections;
  totals.crashes += result.stats.crashes;
  totals.messages += result.stats.messages_sent;
  totals.lease_reads += result.stats.lease_reads;
  totals.snapshots += result.stats.snapshots_installed;
  totals.lost += result.stats.replicas_lost;
  totals.replaced += result.stats.replicas_replaced;
  totals.virtual_us += result.stats.virtual_time_us;
}

void PrintBugs(std::ostream& out) {
  out << "bugs:";
  for (SimBug bug : AllSimBugs()) out << ' ' << SimBugName(bug);
  out << '\n';
}

}  // namespace

std::string ReplayCommand(uint32_t replicas, uint64_t seed, const std::string& bug) {
  std::string command = "tessera sim --host core --replicas " + std::to_string(replicas) +
                        " --seed-start " + std::to_string(seed) + " --seeds 1 --trace";
  if (!bug.empty() && bug != "none") command += " --bug " + bug;
  return command;
}

std::string CampaignResult::SeedRange(uint64_t seed_start) const {
  return std::to_string(seed_start) + ".." +
         std::to_string(seed_start + ran() - (ran() > 0 ? 1 : 0));
}

CampaignResult RunSeedCampaign(const SimCommandArgs& args, std::ostream& out,
                               const std::function<SeedLine(uint64_t seed)>& run_seed) {
  CampaignResult campaign;
  const auto started = std::chrono::steady_clock::now();
  auto out_of_time = [&] {
    return args.duration_s > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() >=
               args.duration_s;
  };
  for (uint64_t i = 0; i < args.seeds && !out_of_time(); ++i) {
    const uint64_t seed = args.seed_start + i;
    const SeedLine result = run_seed(seed);
    (result.ok ? campaign.passed : campaign.failed) += 1;
    if (!result.ok && !campaign.first_failure) campaign.first_failure = seed;
    if (!result.line.empty()) out << result.line << '\n';
  }
  return campaign;
}

int RunSimCommand(const SimCommandArgs& args, std::ostream& out) {
  if (args.bug == "list") {
    PrintBugs(out);
    return 0;
  }
  const std::optional<SimBug> bug = SimBugFromName(args.bug);
  if (!bug) {
    out << "sim: unknown --bug '" << args.bug << "'; ";
    PrintBugs(out);
    return 2;
  }
  if (args.replicas < 3 || args.replicas > limits::kGroupReplicasMax) {
    out << "sim: --replicas must be in [3, " << limits::kGroupReplicasMax << "]\n";
    return 2;
  }
  Totals totals;
  const CampaignResult campaign = RunSeedCampaign(args, out, [&](uint64_t seed) {
    SimConfig config = MakeSimConfig(args.replicas, seed, *bug);
    config.trace = args.trace ? &out : nullptr;
    config.replica_loss_every_seed = args.replica_loss;
    const SimResult result = RunSimulation(config);
    Accumulate(result, totals);
    std::ostringstream line;
    if (!result.ok) {
      line << "FAIL seed " << seed << " (" << args.replicas << " replicas, faults "
           << result.stats.faults << "): " << result.violation;
    } else if (args.trace) {
      line << "ok seed " << seed << ": commits " << result.stats.commits << ", elections "
           << result.stats.elections << ", trace hash " << std::hex << result.trace_hash;
    }
    return SeedLine{result.ok, line.str()};
  });
  out << "sim: " << args.replicas << " replicas, seeds " << campaign.SeedRange(args.seed_start)
      << ", bug " << args.bug << ": " << campaign.passed << " passed, " << campaign.failed
      << " failed; " << totals.commits
      << " commits, " << totals.elections << " elections, " << totals.crashes << " crashes, "
      << totals.messages << " messages, " << totals.lease_reads << " lease reads, "
      << totals.snapshots << " snapshots installed, " << totals.lost << " replicas lost for good, "
      << totals.replaced << " replaced, " << totals.virtual_us / 1'000'000
      << " s simulated\n";
  if (campaign.first_failure) {
    out << "replay: " << ReplayCommand(args.replicas, *campaign.first_failure, args.bug)
        << (args.replica_loss ? " --replica-loss" : "") << '\n';
    return 1;
  }
  return 0;
}

}  // namespace tessera::sim
