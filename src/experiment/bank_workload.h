// The KV bank workload: `accounts` accounts on keys of one prefix of the
// table "kv" (so one partition: a batch is atomic only within one), each
// created with `initial_balance`; `clients` concurrent clients each read
// every account with one strong scan (a snapshot of the partition, read
// under the leader's lease) and then, unless the mix says a plain read,
// move a random amount between two accounts with one atomic batch
// conditioned on both accounts still having the versions the scan saw.
//
// Contract:
//  1. Start creates every account with one batch conditioned on their
//     absence (retried until it succeeds, or finds them created by an
//     attempt whose outcome was unknown, for at most kBankInitTimeout);
//     the clients start only after that. Every attempt is recorded
//     (kBankInit, balances = the initial ones).
//  2. A transfer never takes more than the source account holds in the
//     snapshot it read (the amount is cut down; nothing is sent when the
//     source is empty), so no balance may ever be negative.
//  3. Outcomes as the register workload's: a transfer whose answer
//     guarantees no effect (Conflict: a concurrent transfer changed an
//     account; Throttled, InvalidArgument, ...) is kFail; a timeout, a lost
//     connection, Unavailable or Aborted is kInfo.
//  4. Every scan that answers is an ok kBankRead with the balances in
//     account order; an account absent or not a decimal number is recorded
//     as the read's `anomaly`.
//  5. Choices (plain read or transfer, the two accounts, the amount) come
//     from a sim::Prng stream per client derived from the run's seed.
//
// Thread safety: as Workload (workload.h); clients record into the OpLog
// from their own threads.
#pragma once

#include <atomic>
#include <chrono>
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

inline constexpr auto kBankInitTimeout = std::chrono::seconds(20);

struct BankWorkloadConfig {
  pb::KvBankWorkload spec;
  uint32_t workload_index = 0;
  uint64_t seed = 0;
  std::string key_prefix;  // unique per run, so every account starts absent
  std::vector<KvEndpoint> routers;
  std::string access_key;
  std::string secret_key;
};

// The key of account `i` of a workload, and the scan range holding every
// account of it: [BankScanStart, BankScanEnd).
std::string AccountKey(const std::string& key_prefix, uint32_t workload_index, uint32_t i);
std::string BankScanStart(const std::string& key_prefix, uint32_t workload_index);
std::string BankScanEnd(const std::string& key_prefix, uint32_t workload_index);

class BankWorkload : public Workload {
 public:
  BankWorkload(BankWorkloadConfig config, OpLog& log, const RunClock& clock)
      : config_(std::move(config)), log_(log), clock_(clock), clients_(PaceOf(config_.spec), log) {}
  ~BankWorkload() override { Stop(); }

  void Start() override;
  void Stop() override;
  // One snapshot read of every account, retried (each attempt recorded)
  // until one succeeds, at most kBankFinalReadAttempts.
  void FinalReads(uint32_t process) override;

 private:
  // Contract 1; false when the accounts could not be created.
  bool CreateAccounts(KvClient& kv);

  const BankWorkloadConfig config_;
  OpLog& log_;
  const RunClock& clock_;
  PacedClients clients_;  // last: stopped before the members its clients use go
};

}  // namespace tessera::experiment
