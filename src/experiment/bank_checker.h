// The bank checker (kv_bank workloads, bank_workload.h): a transfer moves
// money between two accounts atomically, so every snapshot read must hold
// every account, none negative (transfers never take more than the source
// holds), summing to accounts × initial_balance. A transfer whose outcome
// is unknown either happened or not: either way the sum holds.
//
// Contract:
//  1. Every ok kBankRead of a workload is checked; one with an `anomaly`
//     (an account absent or unreadable), a negative balance, the wrong
//     number of accounts or a sum other than the total fails the check.
//  2. A workload must have a successful read after healing (`after_heal`):
//     without one a lost update could go unseen, so the check fails.
//  3. Failed operations are left out; reads that did not answer change
//     nothing and are not checked.
//
// Thread safety: a pure function.
#pragma once

#include <vector>

#include "experiment/history.h"
#include "tessera/experiment.pb.h"

namespace tessera::experiment {

// The bank of one workload: its accounts' scan start (OpRecord::key of its
// reads) and its invariant.
struct BankSpec {
  std::string scan_start;
  uint32_t accounts = 0;
  int64_t total = 0;  // accounts × initial_balance
};

pb::CheckerResult CheckBank(const std::vector<OpRecord>& ops, const std::vector<BankSpec>& banks);

}  // namespace tessera::experiment
