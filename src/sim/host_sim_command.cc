#include "sim/host_sim_command.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <vector>

#include <spdlog/spdlog.h>

#include "sim/host_seed.h"

namespace tessera::sim {
namespace {

void Accumulate(const HostSeedStats& s, HostSeedStats& totals) {
  totals.writes_acked += s.writes_acked;
  totals.crashes += s.crashes;
  totals.partitions += s.partitions;
  totals.disk_faults += s.disk_faults;
  totals.install_faults += s.install_faults;
  totals.clock_changes += s.clock_changes;
  totals.gray_failures += s.gray_failures;
  totals.pauses += s.pauses;
  totals.transfers += s.transfers;
  totals.campaigns += s.campaigns;
  totals.splits += s.splits;
  totals.power_losses += s.power_losses;
  totals.large_values += s.large_values;
  totals.replicas_lost += s.replicas_lost;
  totals.replicas_replaced += s.replicas_replaced;
  totals.replicas_retired += s.replicas_retired;
  totals.membership_changes += s.membership_changes;
  totals.log_replicas += s.log_replicas;
  totals.autoadmin_actions += s.autoadmin_actions;
  totals.log_slots_checked += s.log_slots_checked;
  totals.client_ops += s.client_ops;
  totals.strong_reads += s.strong_reads;
  totals.s3_ops += s.s3_ops;
  totals.s3_acked += s.s3_acked;
  totals.s3_unknown += s.s3_unknown;
  totals.s3_resent += s.s3_resent;
  totals.s3_completed += s.s3_completed;
  totals.messages_sent += s.messages_sent;
  totals.virtual_time_us += s.virtual_time_us;
}

}  // namespace

std::string HostReplayCommand(uint64_t seed, const std::string& bug, uint32_t replicas,
                              bool replica_loss, bool s3) {
  std::string command = "tessera sim --host production";
  if (replicas != 3) command += " --replicas " + std::to_string(replicas);
  command += " --seed-start " + std::to_string(seed) + " --seeds 1 --trace";
  if (!bug.empty() && bug != "none") command += " --bug " + bug;
  if (replica_loss) command += " --replica-loss";
  if (s3) command += " --s3";
  return command;
}

int RunHostSimCommand(const SimCommandArgs& args, std::ostream& out) {
  if (args.replicas != 3 && args.replicas != 5 && args.replicas != 7 && args.replicas != 9) {
    out << "sim: --host production runs groups of 3, 5, 7 or 9 replicas (--replicas 3, 5, 7 "
           "or 9)\n";
    return 2;
  }
  if (args.replica_loss && args.replicas == 9) {
    out << "sim: --replica-loss needs room for spares: --replicas 3, 5 or 7\n";
    return 2;
  }
  const std::vector<SimBug> bugs = HostSeedBugs();
  if (args.bug == "list") {
    out << "bugs:";
    for (SimBug b : bugs) out << ' ' << SimBugName(b);
    out << '\n';
    return 0;
  }
  const std::optional<SimBug> bug = SimBugFromName(args.bug);
  if (!bug || (*bug != SimBug::kNone && std::find(bugs.begin(), bugs.end(), *bug) == bugs.end())) {
    out << "sim: unknown --bug '" << args.bug << "'; the production host injects";
    for (SimBug b : bugs) out << ' ' << SimBugName(b);
    out << " (or none)\n";
    return 2;
  }
  // The hosts' log lines carry wall-clock stamps and would make the output
  // differ between runs of the same seeds; the trace says what happened.
  const spdlog::level::level_enum log_level = spdlog::get_level();
  spdlog::set_level(spdlog::level::off);
  HostSeedStats totals;
  const CampaignResult campaign = RunSeedCampaign(args, out, [&](uint64_t seed) {
    HostSeedConfig config;
    config.seed = seed;
    config.replicas = args.replicas;
    config.trace = args.trace ? &out : nullptr;
    config.bug = *bug;
    config.replica_loss_every_seed = args.replica_loss;
    config.s3_every_seed = args.s3;
    const HostSeedResult result = RunHostSeed(config);
    Accumulate(result.stats, totals);
    std::ostringstream line;
    if (!result.ok) {
      // The first line; the trace (--trace) carries the whole explanation.
      const std::string violation =
          args.trace ? result.violation : result.violation.substr(0, result.violation.find('\n'));
      line << "FAIL seed " << seed << " (production host): " << violation;
    } else if (args.trace) {
      line << "ok seed " << seed << ": " << result.stats.writes_acked
           << " writes acknowledged, trace hash " << std::hex << result.trace_hash;
    }
    return SeedLine{result.ok, line.str()};
  });
  spdlog::set_level(log_level);
  out << "sim: production host, " << args.replicas << " replicas, seeds "
      << campaign.SeedRange(args.seed_start);
  if (*bug != SimBug::kNone) out << ", bug " << args.bug;
  if (args.replica_loss) out << ", a voter lost in every seed";
  if (args.s3) out << ", S3 clients in every seed";
  out << ": " << campaign.passed << " passed, " << campaign.failed << " failed; "
      << totals.writes_acked
      << " writes acknowledged, " << totals.client_ops << " client operations ("
      << totals.strong_reads << " lease reads), " << totals.crashes
      << " crashes (" << totals.power_losses << " power losses), " << totals.partitions
      << " partitions (" << totals.splits << " splits), " << totals.disk_faults
      << " failing disks, " << totals.install_faults << " install faults, "
      << totals.gray_failures << " gray links, " << totals.pauses << " pauses, "
      << totals.transfers << " transfers, " << totals.campaigns << " campaigns, "
      << totals.large_values << " large values, " << totals.clock_changes
      << " clock rate changes, " << totals.replicas_lost
      << " replicas lost, " << totals.replicas_retired << " retired, "
      << totals.replicas_replaced << " replaced ("
      << totals.membership_changes << " membership changes, " << totals.log_replicas
      << " log replicas, " << totals.autoadmin_actions << " planned actions), "
      << totals.log_slots_checked << " applied slots compared, " << totals.s3_ops
      << " S3 operations (" << totals.s3_acked << " answered, " << totals.s3_unknown
      << " unknown, " << totals.s3_resent << " resent, " << totals.s3_completed
      << " uploads completed), "
      << totals.messages_sent << " messages, " << totals.virtual_time_us / 1'000'000
      << " s simulated\n";
  if (campaign.first_failure) {
    out << "replay: "
        << HostReplayCommand(*campaign.first_failure, args.bug, args.replicas, args.replica_loss,
                             args.s3)
        << '\n';
    return 1;
  }
  return 0;
}

}  // namespace tessera::sim
