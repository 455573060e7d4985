// The KV register checker: strong reads, writes and compare-and-sets must
// be linearizable per key (chaos/linearizability.h); an eventual read may
// lag, so it must only return a value some write of that key wrote (one
// that succeeded or whose outcome is unknown) or the initial absence.
//
// Contract:
//  1. Failed operations (OpOutcome::kFail) did not take effect and are
//     left out; unknown ones (kInfo) may take effect at any time after
//     their invocation, or never; unknown reads constrain nothing.
//  2. passed is false on a violation and also when the search ran out of
//     its budget (inconclusive is not a pass); the summary says which.
//
// Thread safety: a pure function.
#pragma once

#include <cstdint>
#include <vector>

#include "experiment/history.h"
#include "tessera/experiment.pb.h"

namespace tessera::experiment {

// `step_budget`: per key, as chaos::CheckKvHistory (0: its default).
pb::CheckerResult CheckRegisters(const std::vector<OpRecord>& ops, uint64_t step_budget);

}  // namespace tessera::experiment
