// PacedClients: the concurrent clients of one workload. Each runs on its own
// thread and paces itself to rate_per_s / clients operations per second
// (client c starts c/clients of an interval late, so the clients do not
// fire together), until Stop, until the workload has issued ops_max
// operations (0: no bound), or until the run's OpLog is full.
//
// Contract: `make` runs once on each client's thread and returns the
// function that performs one operation, given the OpLog index reserved for
// it (the function records the operation itself); an empty function ends
// that client (it could not start, e.g. no connection before Stop).
//
// Thread safety: Start and Stop from one thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "experiment/op_log.h"

namespace tessera::experiment {

struct PaceSpec {
  uint32_t clients = 1;     // >= 1
  uint32_t rate_per_s = 1;  // over all clients, >= 1
  uint64_t ops_max = 0;     // 0: no bound
};

// The pace of a workload message (clients, rate_per_s, ops_max fields).
template <typename WorkloadSpec>
PaceSpec PaceOf(const WorkloadSpec& spec) {
  return PaceSpec{spec.clients(), spec.rate_per_s(), spec.ops_max()};
}

class PacedClients {
 public:
  using OneOperation = std::function<void(uint64_t log_index)>;
  using MakeClient = std::function<OneOperation(uint32_t client, const std::atomic<bool>& stop)>;

  PacedClients(PaceSpec spec, OpLog& log) : spec_(spec), log_(log) {}
  ~PacedClients() { Stop(); }
  PacedClients(const PacedClients&) = delete;
  PacedClients& operator=(const PacedClients&) = delete;

  void Start(MakeClient make);
  // Asks every client to stop and waits for its operation in flight.
  void Stop();

 private:
  void Run(uint32_t client, const MakeClient& make);

  const PaceSpec spec_;
  OpLog& log_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> issued_{0};
  std::vector<std::thread> threads_;
};

// Calls `attempt` (returning a Result) every 200 ms until it succeeds or
// `stop` is set; the last result.
template <typename Attempt>
auto RetryUntilStopped(Attempt attempt, const std::atomic<bool>& stop) {
  auto result = attempt();
  while (!result.ok() && !stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    result = attempt();
  }
  return result;
}

}  // namespace tessera::experiment
