// The KV register workload: `clients` concurrent clients, each with its own
// connection (tessera::KvClient, include/tessera/kv_client.h), issue reads
// (strong and eventual), writes and compare-and-sets on `keys` hot keys of
// the table "kv", at `rate_per_s` operations per second over all clients,
// until stopped or `ops_max` operations.
//
// Contract:
//  1. Every write and cas writes a value unique in the run
//     ("w<workload>-c<client>-<n>"), so the checker can tell writes apart.
//  2. A cas requires the value this client last saw for the key (through
//     its version: KvCondition::Version), or absence when it saw none.
//  3. A write whose outcome the client cannot know (timeout, lost
//     connection, unavailable, aborted) is recorded as kInfo, never kFail;
//     kFail only for answers that guarantee no effect (throttled, invalid,
//     not found, refused). A read that did not answer is kFail.
//  4. Choices (operation, key) come from a sim::Prng stream per client
//     derived from the run's seed; timing depends on the cluster.
//
// Thread safety: Start and Stop from one thread; clients record into the
// OpLog from their own threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "experiment/op_log.h"
#include "experiment/paced_clients.h"
#include "experiment/workload.h"
#include "tessera/experiment.pb.h"
#include "tessera/kv_client.h"

namespace tessera::experiment {

inline constexpr char kRegisterTable[] = "kv";

struct RegisterWorkloadConfig {
  pb::KvRegisterWorkload spec;
  uint32_t workload_index = 0;
  uint64_t seed = 0;
  std::string key_prefix;  // unique per run, so every key starts absent
  std::vector<KvEndpoint> routers;
  std::string access_key;
  std::string secret_key;
};

// The i-th hot key of a workload.
std::string HotKey(const std::string& key_prefix, uint32_t workload_index, uint32_t i);

class RegisterWorkload : public Workload {
 public:
  RegisterWorkload(RegisterWorkloadConfig config, OpLog& log, const RunClock& clock)
      : config_(std::move(config)), log_(log), clock_(clock), clients_(PaceOf(config_.spec), log) {}
  ~RegisterWorkload() override { Stop(); }

  // Starts the clients.
  void Start() override;
  // Asks the clients to stop and waits for their operations in flight
  // (each ends within its timeout).
  void Stop() override;
  // One strong read of every hot key, recorded as client `process`; after
  // healing, so a lost write shows as a read that misses it.
  void FinalReads(uint32_t process) override;

 private:

  const RegisterWorkloadConfig config_;
  OpLog& log_;
  const RunClock& clock_;
  PacedClients clients_;  // last: stopped before the members its clients use go
};

}  // namespace tessera::experiment
