#include "experiment/bank_workload.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <optional>

#include "experiment/experiment_limits.h"
#include "experiment/kv_outcome.h"
#include "experiment/kv_session.h"
#include "experiment/register_workload.h"
#include "sim/prng.h"

namespace tessera::experiment {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Stream label of the bank clients' choices (register clients use 100 +
// workload × kClientsMax + client; 10,000 keeps the ranges apart).
constexpr uint64_t kStreamBankClients = 10'000;
constexpr int kBankFinalReadAttempts = 10;

// A snapshot of every account: balances in account order and the versions
// the transfer's conditions require.
struct Snapshot {
  std::vector<int64_t> balances;
  std::vector<uint64_t> versions;
};

std::optional<int64_t> ParseBalance(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

// One strong scan of every account into `op` (a kBankRead); the snapshot
// when it answered with every account readable.
std::optional<Snapshot> ReadAll(const BankWorkloadConfig& config, KvClient& kv, OpRecord& op,
                                const RunClock& clock) {
  const uint32_t n = config.spec.accounts();
  op.kind = OpKind::kBankRead;
  op.key = BankScanStart(config.key_prefix, config.workload_index);
  op.invoke_us = clock.NowUs();
  auto page = kv.Scan(kRegisterTable, op.key, BankScanEnd(config.key_prefix, config.workload_index),
                      n + 1, KvConsistency::kStrong);
  op.complete_us = clock.NowUs();
  if (!page.ok()) {
    op.outcome = OpOutcome::kFail;  // a read changes nothing
    op.error = page.status().ToString();
    return std::nullopt;
  }
  op.outcome = OpOutcome::kOk;
  std::map<std::string, const KvItem*> by_key;
  for (const KvItem& item : page->items) by_key[item.key] = &item;
  Snapshot s;
  for (uint32_t i = 0; i < n; ++i) {
    const std::string key = AccountKey(config.key_prefix, config.workload_index, i);
    auto it = by_key.find(key);
    std::optional<int64_t> balance;
    if (it != by_key.end()) balance = ParseBalance(it->second->value);
    if (!balance) {
      if (op.anomaly.empty()) {
        op.anomaly = it == by_key.end() ? "account " + key + " absent"
                                        : "account " + key + " holds '" + it->second->value + "'";
      }
      op.balances.push_back(0);
      s.versions.push_back(0);
      continue;
    }
    op.balances.push_back(*balance);
    s.versions.push_back(it->second->version);
  }
  if (by_key.size() > n && op.anomaly.empty()) {
    op.anomaly = std::to_string(by_key.size()) + " keys in the accounts' range, " +
                 std::to_string(n) + " accounts";
  }
  s.balances = op.balances;
  if (!op.anomaly.empty()) return std::nullopt;
  return s;
}

class BankClient {
 public:
  BankClient(const BankWorkloadConfig& config, uint32_t client, KvClient& kv)
      : config_(config),
        client_(client),
        kv_(kv),
        prng_(sim::DeriveSeed(config.seed, kStreamBankClients +
                                               uint64_t{config.workload_index} * kClientsMax +
                                               client)) {}

  uint32_t process() const { return config_.workload_index * kClientsMax + client_; }

  // One scan and, unless the mix says a plain read, one transfer; records
  // each (a transfer needs a second index from the log).
  void RunOne(OpLog& log, uint64_t read_index, const RunClock& clock) {
    const pb::KvBankWorkload& w = config_.spec;
    // Every choice is drawn before the cluster answers: the seed fixes them.
    const bool plain_read = prng_.Below(100) < w.read_percent();
    const uint32_t from = static_cast<uint32_t>(prng_.Below(w.accounts()));
    const uint32_t to = (from + 1 + static_cast<uint32_t>(prng_.Below(w.accounts() - 1))) %
                        w.accounts();
    const int64_t wanted = 1 + static_cast<int64_t>(prng_.Below(w.max_transfer()));

    OpRecord read;
    read.index = read_index;
    read.process = process();
    const std::optional<Snapshot> snapshot = ReadAll(config_, kv_, read, clock);
    log.Add(std::move(read));
    if (plain_read || !snapshot) return;
    const int64_t amount = std::min(wanted, snapshot->balances[from]);
    if (amount <= 0) return;  // contract 2: nothing to move
    const std::optional<uint64_t> index = log.Reserve();
    if (!index) return;
    OpRecord op;
    op.index = *index;
    op.process = process();
    op.kind = OpKind::kTransfer;
    op.key = AccountKey(config_.key_prefix, config_.workload_index, from);
    op.to_key = AccountKey(config_.key_prefix, config_.workload_index, to);
    op.amount = amount;
    KvBatch batch;
    batch.conditions.push_back(KvCondition::Version(op.key, snapshot->versions[from]));
    batch.conditions.push_back(KvCondition::Version(op.to_key, snapshot->versions[to]));
    batch.writes.push_back({op.key, std::to_string(snapshot->balances[from] - amount), false});
    batch.writes.push_back({op.to_key, std::to_string(snapshot->balances[to] + amount), false});
    op.invoke_us = clock.NowUs();
    auto version = kv_.Batch(kRegisterTable, batch);
    op.complete_us = clock.NowUs();
    if (version.ok()) {
      op.outcome = OpOutcome::kOk;
    } else {
      SetWriteOutcome(op, version.status());
    }
    log.Add(std::move(op));
  }

 private:
  const BankWorkloadConfig& config_;
  const uint32_t client_;
  KvClient& kv_;
  sim::Prng prng_;
};

}  // namespace

std::string AccountKey(const std::string& key_prefix, uint32_t workload_index, uint32_t i) {
  char n[8];
  std::snprintf(n, sizeof n, "%02u", i);
  return BankScanStart(key_prefix, workload_index) + n;
}

std::string BankScanStart(const std::string& key_prefix, uint32_t workload_index) {
  return key_prefix + "w" + std::to_string(workload_index) + "-a";
}

std::string BankScanEnd(const std::string& key_prefix, uint32_t workload_index) {
  return key_prefix + "w" + std::to_string(workload_index) + "-b";
}

bool BankWorkload::CreateAccounts(KvClient& kv) {
  const pb::KvBankWorkload& w = config_.spec;
  KvBatch batch;
  for (uint32_t i = 0; i < w.accounts(); ++i) {
    const std::string key = AccountKey(config_.key_prefix, config_.workload_index, i);
    batch.conditions.push_back(KvCondition::Absent(key));
    batch.writes.push_back({key, std::to_string(w.initial_balance()), false});
  }
  const auto deadline = steady_clock::now() + kBankInitTimeout;
  bool unknown_before = false;  // an earlier attempt may have created them
  while (steady_clock::now() < deadline) {
    const std::optional<uint64_t> index = log_.Reserve();
    if (!index) return false;
    OpRecord op;
    op.index = *index;
    op.process = config_.workload_index * kClientsMax;
    op.kind = OpKind::kBankInit;
    op.key = BankScanStart(config_.key_prefix, config_.workload_index);
    op.balances.assign(w.accounts(), w.initial_balance());
    op.invoke_us = clock_.NowUs();
    auto version = kv.Batch(kRegisterTable, batch);
    op.complete_us = clock_.NowUs();
    const KvCode code = version.ok() ? KvCode::kOk : version.status().code();
    if (version.ok()) {
      op.outcome = OpOutcome::kOk;
    } else {
      SetWriteOutcome(op, version.status());
    }
    log_.Add(std::move(op));
    if (code == KvCode::kOk) return true;
    // Conflict: the accounts exist, created by an attempt of unknown outcome.
    if (code == KvCode::kConflict && unknown_before) return true;
    if (code == KvCode::kConflict) return false;  // fresh keys: cannot exist
    unknown_before = unknown_before || !CertainlyNoEffect(code);
    std::this_thread::sleep_for(milliseconds(200));
  }
  return false;
}

void BankWorkload::Start() {
  auto kv = ConnectKv(config_);
  const auto deadline = steady_clock::now() + kBankInitTimeout;
  while (!kv.ok() && steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(200));
    kv = ConnectKv(config_);
  }
  if (!kv.ok() || !CreateAccounts(**kv)) return;  // the checker fails: no final read succeeds
  clients_.Start([this](uint32_t client, const std::atomic<bool>& stop) -> PacedClients::OneOperation {
    auto session = OpenKvSession<BankClient>(config_, client, stop);
    if (!session) return nullptr;
    return [this, session](uint64_t index) { session->state->RunOne(log_, index, clock_); };
  });
}

void BankWorkload::Stop() { clients_.Stop(); }

void BankWorkload::FinalReads(uint32_t process) {
  auto kv = ConnectKv(config_);
  for (int attempt = 0; attempt < kBankFinalReadAttempts; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(milliseconds(500));
    if (!kv.ok()) kv = ConnectKv(config_);
    const std::optional<uint64_t> index = log_.Reserve();
    if (!index) return;
    OpRecord op;
    op.index = *index;
    op.process = process;
    op.after_heal = true;
    if (!kv.ok()) {
      op.kind = OpKind::kBankRead;
      op.key = BankScanStart(config_.key_prefix, config_.workload_index);
      op.invoke_us = op.complete_us = clock_.NowUs();
      op.outcome = OpOutcome::kFail;
      op.error = kv.status().ToString();
      log_.Add(std::move(op));
      continue;
    }
    ReadAll(config_, **kv, op, clock_);
    const bool answered = op.outcome == OpOutcome::kOk;
    log_.Add(std::move(op));
    if (answered) return;
  }
}

}  // namespace tessera::experiment
