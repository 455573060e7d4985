#include "experiment/paced_clients.h"

#include <algorithm>

namespace tessera::experiment {

void PacedClients::Start(MakeClient make) {
  for (uint32_t c = 0; c < spec_.clients; ++c) {
    threads_.emplace_back([this, c, make] { Run(c, make); });
  }
}

void PacedClients::Stop() {
  stop_.store(true);
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void PacedClients::Run(uint32_t client, const MakeClient& make) {
  using std::chrono::steady_clock;
  const OneOperation one = make(client, stop_);
  if (!one) return;
  const auto interval =
      std::chrono::microseconds(uint64_t{1'000'000} * spec_.clients / spec_.rate_per_s);
  auto next = steady_clock::now() + interval * client / spec_.clients;
  while (!stop_.load()) {
    std::this_thread::sleep_until(next);
    next = std::max(next + interval, steady_clock::now());
    if (stop_.load()) break;
    if (spec_.ops_max != 0 && issued_.fetch_add(1) >= spec_.ops_max) break;
    const std::optional<uint64_t> index = log_.Reserve();
    if (!index) break;
    one(*index);
  }
}

}  // namespace tessera::experiment
