#include "sim/sim_command.h"

#include <chrono>
#include <ostream>

namespace tessera::sim {

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

}  // namespace tessera::sim
