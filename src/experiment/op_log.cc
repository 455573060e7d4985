#include "experiment/op_log.h"

namespace tessera::experiment {

std::optional<uint64_t> OpLog::Reserve() {
  const uint64_t index = next_index_.fetch_add(1);
  if (index >= ops_max_) return std::nullopt;
  return index;
}

void OpLog::Add(OpRecord op) {
  switch (op.outcome) {
    case OpOutcome::kOk: ok_.fetch_add(1); break;
    case OpOutcome::kFail: failed_.fetch_add(1); break;
    case OpOutcome::kInfo: unknown_.fetch_add(1); break;
  }
  std::lock_guard<std::mutex> lock(mu_);
  ops_.push_back(std::move(op));
}

std::vector<OpRecord> OpLog::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ops_;
}

}  // namespace tessera::experiment
