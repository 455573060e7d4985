#include "experiment/bank_checker.h"

#include <map>
#include <string>

namespace tessera::experiment {
namespace {

std::string Balances(const std::vector<int64_t>& balances) {
  std::string out;
  for (int64_t b : balances) out += (out.empty() ? "" : " ") + std::to_string(b);
  return out;
}

// Why `read` breaks the bank's invariant; empty when it holds.
std::string Violation(const OpRecord& read, const BankSpec& bank) {
  const std::string what = "bank read #" + std::to_string(read.index) + " by client " +
                           std::to_string(read.process) + " at " +
                           std::to_string(read.invoke_us / 1000) + " ms";
  if (!read.anomaly.empty()) return what + ": " + read.anomaly;
  if (read.balances.size() != bank.accounts) {
    return what + ": " + std::to_string(read.balances.size()) + " balances, " +
           std::to_string(bank.accounts) + " accounts";
  }
  int64_t sum = 0;
  for (size_t i = 0; i < read.balances.size(); ++i) {
    if (read.balances[i] < 0) {
      return what + ": account " + std::to_string(i) + " is negative (" +
             Balances(read.balances) + ")";
    }
    sum += read.balances[i];
  }
  if (sum != bank.total) {
    return what + ": the balances sum to " + std::to_string(sum) + ", not " +
           std::to_string(bank.total) + " (drift " + std::to_string(sum - bank.total) + "; " +
           Balances(read.balances) + ")";
  }
  return {};
}

}  // namespace

pb::CheckerResult CheckBank(const std::vector<OpRecord>& ops, const std::vector<BankSpec>& banks) {
  pb::CheckerResult result;
  result.set_name("bank");
  std::map<std::string, const BankSpec*> by_start;
  for (const BankSpec& b : banks) by_start[b.scan_start] = &b;
  std::map<std::string, uint64_t> reads, final_reads;
  uint64_t transfers = 0, unknown_transfers = 0;
  std::string first_violation;
  uint64_t first_violation_us = 0;
  for (const OpRecord& op : ops) {
    if (op.kind == OpKind::kTransfer && op.outcome == OpOutcome::kOk) ++transfers;
    if (op.kind == OpKind::kTransfer && op.outcome == OpOutcome::kInfo) ++unknown_transfers;
    if (op.kind != OpKind::kBankRead || op.outcome != OpOutcome::kOk) continue;
    auto bank = by_start.find(op.key);
    if (bank == by_start.end()) continue;
    ++reads[op.key];
    if (op.after_heal) ++final_reads[op.key];
    // The first violation by time, so the summary names where it began.
    const std::string v = Violation(op, *bank->second);
    if (!v.empty() && (first_violation.empty() || op.invoke_us < first_violation_us)) {
      first_violation = v;
      first_violation_us = op.invoke_us;
    }
  }
  std::string missing_final;
  for (const BankSpec& b : banks) {
    if (final_reads[b.scan_start] == 0 && missing_final.empty()) missing_final = b.scan_start;
  }
  uint64_t read_count = 0;
  for (const auto& [key, n] : reads) read_count += n;
  const std::string counted = std::to_string(read_count) + " snapshot reads, " +
                              std::to_string(transfers) + " transfers, " +
                              std::to_string(unknown_transfers) + " unknown";
  if (!first_violation.empty()) {
    result.set_passed(false);
    result.set_summary(first_violation + " (" + counted + ")");
  } else if (!missing_final.empty()) {
    result.set_passed(false);
    result.set_summary("no successful read of the accounts " + missing_final +
                       "* after healing (" + counted + ")");
  } else {
    result.set_passed(true);
    result.set_summary("every read sums to the total (" + counted + ")");
  }
  return result;
}

}  // namespace tessera::experiment
