#include "sim/host_sim_command.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include <spdlog/spdlog.h>

#include "sim/host_seed.h"

namespace tessera::sim {

std::string HostReplayCommand(uint64_t seed, const std::string& bug) {
  std::string command = "tessera sim --host production --seed-start " + std::to_string(seed) +
                        " --seeds 1 --trace";
  if (!bug.empty() && bug != "none") command += " --bug " + bug;
  return command;
}

int RunHostSimCommand(const SimCommandArgs& args, std::ostream& out) {
  if (args.replicas != 3) {
    out << "sim: --host production runs groups of 3 replicas (--replicas 3)\n";
    return 2;
  }
  if (args.replica_loss) {
    out << "sim: --replica-loss needs --host core\n";
    return 2;
  }
  const std::vector<SimBug> bugs = HostSeedBugs();
  const std::optional<SimBug> bug = SimBugFromName(args.bug);
  if (!bug || (*bug != SimBug::kNone && std::find(bugs.begin(), bugs.end(), *bug) == bugs.end())) {
    out << "sim: --host production injects --bug";
    for (SimBug b : bugs) out << ' ' << SimBugName(b);
    out << " (or none); '" << args.bug << "' needs --host core\n";
    return 2;
  }
  // The hosts' log lines carry wall-clock stamps and would make the output
  // differ between runs of the same seeds; the trace says what happened.
  const spdlog::level::level_enum log_level = spdlog::get_level();
  spdlog::set_level(spdlog::level::off);
  HostSeedStats totals;
  uint64_t passed = 0;
  uint64_t failed = 0;
  std::optional<uint64_t> first_failure;
  const auto started = std::chrono::steady_clock::now();
  auto out_of_time = [&] {
    return args.duration_s > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() >=
               args.duration_s;
  };
  for (uint64_t i = 0; i < args.seeds && !out_of_time(); ++i) {
    HostSeedConfig config;
    config.seed = args.seed_start + i;
    config.trace = args.trace ? &out : nullptr;
    config.bug = *bug;
    const HostSeedResult result = RunHostSeed(config);
    (result.ok ? passed : failed) += 1;
    totals.writes_acked += result.stats.writes_acked;
    totals.crashes += result.stats.crashes;
    totals.partitions += result.stats.partitions;
    totals.disk_faults += result.stats.disk_faults;
    totals.install_faults += result.stats.install_faults;
    totals.clock_changes += result.stats.clock_changes;
    totals.replicas_lost += result.stats.replicas_lost;
    totals.replicas_replaced += result.stats.replicas_replaced;
    totals.membership_changes += result.stats.membership_changes;
    totals.client_ops += result.stats.client_ops;
    totals.strong_reads += result.stats.strong_reads;
    totals.messages_sent += result.stats.messages_sent;
    totals.virtual_time_us += result.stats.virtual_time_us;
    if (!result.ok) {
      // The first line; the trace (--trace) carries the whole explanation.
      const std::string violation =
          args.trace ? result.violation : result.violation.substr(0, result.violation.find('\n'));
      out << "FAIL seed " << config.seed << " (production host): " << violation << '\n';
      if (!first_failure) first_failure = config.seed;
    } else if (args.trace) {
      out << "ok seed " << config.seed << ": " << result.stats.writes_acked
          << " writes acknowledged, trace hash " << std::hex << result.trace_hash << std::dec
          << '\n';
    }
  }
  spdlog::set_level(log_level);
  const uint64_t ran = passed + failed;
  out << "sim: production host, 3 replicas, seeds " << args.seed_start << ".."
      << args.seed_start + ran - (ran > 0 ? 1 : 0);
  if (*bug != SimBug::kNone) out << ", bug " << args.bug;
  out << ": " << passed << " passed, " << failed << " failed; " << totals.writes_acked
      << " writes acknowledged, " << totals.client_ops << " client operations ("
      << totals.strong_reads << " lease reads), " << totals.crashes
      << " crashes, " << totals.partitions << " partitions, " << totals.disk_faults
      << " failing disks, " << totals.install_faults << " install faults, "
      << totals.clock_changes << " clock rate changes, " << totals.replicas_lost
      << " replicas lost, " << totals.replicas_replaced << " replaced ("
      << totals.membership_changes << " membership changes), "
      << totals.messages_sent << " messages, " << totals.virtual_time_us / 1'000'000
      << " s simulated\n";
  if (first_failure) {
    out << "replay: " << HostReplayCommand(*first_failure, args.bug) << '\n';
    return 1;
  }
  return 0;
}

}  // namespace tessera::sim
