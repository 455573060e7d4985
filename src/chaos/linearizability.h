// Linearizability checker for key-value histories (get, put, compare-and-set),
// in the style of Wing & Gong's search with Porcupine's refinements: the
// history is partitioned by key (each key is an independent register), and
// the search over a partition memoises (linearized set, register value) so a
// state is visited once.
//
// Operations whose outcome is unknown (a client timed out or crashed) may
// take effect at any point after their invocation, or never.
//
// Contract:
//  1. Operation intervals are closed: two operations whose intervals share an
//     endpoint are concurrent (so a missing order is never invented).
//  2. A completed get must return the register value; a completed put always
//     takes effect; a completed cas took effect iff the value equalled
//     `expected` at its linearization point, as `cas_succeeded` reports. A
//     get of unknown outcome constrains nothing.
//  3. A completed operation must have return_time >= invoke_time; anything
//     else is a bug in the caller and aborts (TESSERA_CHECK).
//  4. The result is deterministic: keys are checked in lexicographic order
//     and the first violation ends the check.
//
// Thread safety: pure functions over their arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::chaos {

enum class KvOpType { kGet, kPut, kCas };

struct KvOperation {
  uint64_t client_id = 0;
  KvOpType type = KvOpType::kGet;
  std::string key;
  std::string value;                    // put: value written; cas: new value
  std::optional<std::string> expected;  // cas: required current value (nullopt: absent)
  uint64_t invoke_time = 0;             // any monotonic unit shared by the history
  // Outcome. When `completed` is false the operation may or may not have
  // taken effect and return_time is ignored.
  bool completed = false;
  uint64_t return_time = 0;
  std::optional<std::string> read;  // get: value read (nullopt: absent)
  bool cas_succeeded = false;       // cas: whether the swap happened
};

struct CheckResult {
  bool linearizable = true;
  // The search hit its budget before deciding; `linearizable` is then true
  // but unproven. Callers treat this as "inconclusive", not as a pass.
  bool inconclusive = false;
  // The first key whose history is not linearizable (else, when
  // inconclusive, the first key whose search ran out of budget).
  std::string key;
  // Human-readable: the smallest history prefix of `key` that has no
  // linearization, and its operations (client, type, values, times).
  std::string explanation;
};

// Checks the whole history; every key starts absent. `step_budget` bounds
// the search per key (states explored: one step is one attempt to linearize
// an operation in one search state); past it the result is inconclusive.
// Memory grows with the states explored, so also with `step_budget`.
CheckResult CheckKvHistory(const std::vector<KvOperation>& history,
                           uint64_t step_budget = 10'000'000);

}  // namespace tessera::chaos
