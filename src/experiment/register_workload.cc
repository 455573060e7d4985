#include "experiment/register_workload.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include "experiment/experiment_limits.h"
#include "experiment/kv_outcome.h"
#include "experiment/kv_session.h"
#include "sim/prng.h"

namespace tessera::experiment {
namespace {

using std::chrono::microseconds;
using std::chrono::steady_clock;

// Stream label of the clients' choices (schedule.cc uses 1 and 2).
constexpr uint64_t kStreamClients = 100;

// What a client last saw of a key: its value and version, or absence.
struct Seen {
  std::optional<std::string> value;
  uint64_t version = 0;
};

class Client {
 public:
  Client(const RegisterWorkloadConfig& config, uint32_t client, KvClient& kv)
      : config_(config),
        client_(client),
        kv_(kv),
        prng_(sim::DeriveSeed(config.seed,
                              kStreamClients + uint64_t{config.workload_index} * kClientsMax + client)) {}

  // Performs one operation of the mix; fills `op` (index and times are the caller's).
  void RunOne(OpRecord& op, const RunClock& clock) {
    const pb::KvRegisterWorkload& w = config_.spec;
    op.process = config_.workload_index * kClientsMax + client_;
    op.key = HotKey(config_.key_prefix, config_.workload_index,
                    static_cast<uint32_t>(prng_.Below(w.keys())));
    const uint64_t roll = prng_.Below(100);
    op.invoke_us = clock.NowUs();
    if (roll < w.strong_read_percent()) {
      Read(op, KvConsistency::kStrong);
    } else if (roll < w.strong_read_percent() + w.eventual_read_percent()) {
      Read(op, KvConsistency::kEventual);
    } else if (roll < w.strong_read_percent() + w.eventual_read_percent() + w.cas_percent()) {
      Cas(op);
    } else {
      Write(op);
    }
    op.complete_us = clock.NowUs();
  }

  void Read(OpRecord& op, KvConsistency consistency) {
    op.kind = OpKind::kRead;
    op.strong = consistency == KvConsistency::kStrong;
    auto got = kv_.Get(kRegisterTable, op.key, consistency);
    if (!got.ok()) {
      op.outcome = OpOutcome::kFail;
      op.error = got.status().ToString();
      return;
    }
    op.outcome = OpOutcome::kOk;
    Seen& seen = seen_[op.key];
    if (got->has_value()) {
      op.read = (*got)->value;
      // An eventual read may be older than what this client saw: keep the newer.
      if ((*got)->version >= seen.version) seen = {(*got)->value, (*got)->version};
    } else if (op.strong) {
      seen = {};
    }
  }

  void Write(OpRecord& op) {
    op.kind = OpKind::kWrite;
    op.value = NextValue();
    auto version = kv_.Put(kRegisterTable, op.key, op.value);
    if (!version.ok()) return SetWriteOutcome(op, version.status());
    op.outcome = OpOutcome::kOk;
    seen_[op.key] = {op.value, *version};
  }

  void Cas(OpRecord& op) {
    op.kind = OpKind::kCas;
    op.value = NextValue();
    const Seen seen = seen_[op.key];
    op.expected = seen.value;
    auto version = seen.value ? kv_.PutIf(kRegisterTable, op.key, op.value,
                                          KvCondition::Kind::kVersion, seen.version)
                              : kv_.PutIf(kRegisterTable, op.key, op.value,
                                          KvCondition::Kind::kAbsent);
    if (version.ok()) {
      op.outcome = OpOutcome::kOk;
      op.cas_succeeded = true;
      seen_[op.key] = {op.value, *version};
    } else if (version.status().code() == KvCode::kConflict) {
      op.outcome = OpOutcome::kOk;
      op.cas_succeeded = false;
    } else {
      SetWriteOutcome(op, version.status());
    }
  }

 private:
  std::string NextValue() {
    return "w" + std::to_string(config_.workload_index) + "-c" + std::to_string(client_) + "-" +
           std::to_string(++writes_);
  }

  const RegisterWorkloadConfig& config_;
  const uint32_t client_;
  KvClient& kv_;
  sim::Prng prng_;
  uint64_t writes_ = 0;
  std::map<std::string, Seen> seen_;
};

}  // namespace

std::string HotKey(const std::string& key_prefix, uint32_t workload_index, uint32_t i) {
  return key_prefix + "w" + std::to_string(workload_index) + "-k" + std::to_string(i);
}

void RegisterWorkload::Start() {
  clients_.Start([this](uint32_t client, const std::atomic<bool>& stop) -> PacedClients::OneOperation {
    auto session = OpenKvSession<Client>(config_, client, stop);
    if (!session) return nullptr;
    return [this, session](uint64_t index) {
      OpRecord op;
      op.index = index;
      session->state->RunOne(op, clock_);
      log_.Add(std::move(op));
    };
  });
}

void RegisterWorkload::Stop() { clients_.Stop(); }

void RegisterWorkload::FinalReads(uint32_t process) {
  auto kv = ConnectKv(config_);
  for (uint32_t i = 0; i < config_.spec.keys(); ++i) {
    const std::optional<uint64_t> index = log_.Reserve();
    if (!index) return;
    OpRecord op;
    op.index = *index;
    op.process = process;
    op.after_heal = true;
    op.kind = OpKind::kRead;
    op.key = HotKey(config_.key_prefix, config_.workload_index, i);
    op.invoke_us = clock_.NowUs();
    if (!kv.ok()) {
      op.outcome = OpOutcome::kFail;
      op.error = kv.status().ToString();
    } else {
      auto got = (*kv)->Get(kRegisterTable, op.key, KvConsistency::kStrong);
      op.outcome = got.ok() ? OpOutcome::kOk : OpOutcome::kFail;
      if (got.ok() && got->has_value()) op.read = (*got)->value;
      if (!got.ok()) op.error = got.status().ToString();
    }
    op.complete_us = clock_.NowUs();
    log_.Add(std::move(op));
  }
}

}  // namespace tessera::experiment
