// Linearizability checker for key-value histories (get, put, compare-and-set),
// in the style of Wing & Gong's search with Porcupine's refinements: the
// history is partitioned by key (each key is an independent register), and
// the search over a partition memoises (linearized set, register value) so a
// state is visited once.
//
// Operations whose outcome is unknown (a client timed out or crashed) may
// take effect at any point after their invocation, or never.
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
  std::string key;          // first key whose history is not linearizable
  std::string explanation;  // the operations that could not be ordered
};

// Checks the whole history; every key starts absent. `step_budget` bounds
// the search per key (states explored).
CheckResult CheckKvHistory(const std::vector<KvOperation>& history,
                           uint64_t step_budget = 10'000'000);

}  // namespace tessera::chaos
