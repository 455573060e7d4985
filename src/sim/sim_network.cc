#include "sim/sim_network.h"

#include <algorithm>

#include "common/check.h"

namespace tessera::sim {

SimNetwork::SimNetwork(uint32_t replicas)
    : stride_(replicas + 1), links_((replicas + 1) * (replicas + 1)) {}

void SimNetwork::AddGray(ReplicaId from, ReplicaId to, uint32_t loss_ppm) {
  LinkState& link = Link(from, to);
  link.gray_loss_ppm = std::min<uint32_t>(1'000'000, link.gray_loss_ppm + loss_ppm);
}

void SimNetwork::RemoveGray(ReplicaId from, ReplicaId to, uint32_t loss_ppm) {
  LinkState& link = Link(from, to);
  link.gray_loss_ppm = link.gray_loss_ppm > loss_ppm ? link.gray_loss_ppm - loss_ppm : 0;
}

void SimNetwork::HealLinks() {
  for (LinkState& link : links_) link = LinkState{};
}

TimeUs SimNetwork::SampleDelay(Prng& prng) const {
  TimeUs delay = params_.delay_min_us;
  if (params_.delay_jitter_us > 0) delay += prng.Below(params_.delay_jitter_us + 1);
  if (params_.spike_ppm > 0 && prng.ChancePpm(params_.spike_ppm)) {
    delay += prng.Below(params_.spike_max_us + 1);
  }
  return delay;
}

void SimNetwork::Route(ReplicaId from, ReplicaId to, Prng& prng,
                       std::vector<TimeUs>* delays) const {
  TESSERA_CHECK(from != to);
  const LinkState& link = Link(from, to);
  if (link.blocks > 0) return;
  if (link.gray_loss_ppm > 0 && prng.ChancePpm(link.gray_loss_ppm)) return;
  if (params_.loss_ppm > 0 && prng.ChancePpm(params_.loss_ppm)) return;
  delays->push_back(SampleDelay(prng));
  if (params_.duplicate_ppm > 0 && prng.ChancePpm(params_.duplicate_ppm)) {
    delays->push_back(SampleDelay(prng));
  }
}

}  // namespace tessera::sim
