// The operations of a run: what each client invoked, when, and how it
// ended. An operation is one record from invocation to completion;
// history.jsonl gets two lines per operation (invoke, then ok/fail/info),
// in time order.
//
// Outcomes (the Jepsen convention):
//   kOk    the operation took effect (reads: returned `read`)
//   kFail  the operation certainly did not take effect
//   kInfo  unknown: a timeout or a lost connection; a write may take effect
//          at any time after its invocation, or never
//
// Thread safety: OpRecord is a value; HistoryWriter functions are pure
// over their arguments and the file they write.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::experiment {

enum class OpKind { kRead, kWrite, kCas };
enum class OpOutcome { kOk, kFail, kInfo };

struct OpRecord {
  uint64_t index = 0;    // unique in the run
  uint32_t process = 0;  // client number
  OpKind kind = OpKind::kRead;
  bool strong = true;    // reads: strong (leader lease) or eventual
  std::string key;
  std::string value;                    // write, cas: the value written
  std::optional<std::string> expected;  // cas: the value required (nullopt: absent)
  uint64_t invoke_us = 0;               // since the workloads started
  uint64_t complete_us = 0;
  OpOutcome outcome = OpOutcome::kInfo;
  std::optional<std::string> read;      // read, ok: the value (nullopt: absent)
  bool cas_succeeded = false;           // cas, ok: whether the swap happened
  std::string error;                    // fail, info: the client's status

  uint64_t latency_us() const { return complete_us - invoke_us; }
  // A write that took effect: an ok write or a cas that swapped.
  bool wrote() const {
    return outcome == OpOutcome::kOk &&
           (kind == OpKind::kWrite || (kind == OpKind::kCas && cas_succeeded));
  }
};

// "read", "write", "cas"; "ok", "fail", "info".
const char* OpKindName(OpKind kind);
const char* OpOutcomeName(OpOutcome outcome);

// Writes `ops` to `path` as JSON lines (pb::HistoryRecord, protobuf's JSON
// mapping): an invoke line and a completion line per operation, sorted by
// time (invocations first on ties). IOError when the file cannot be written.
Status WriteHistory(const std::vector<OpRecord>& ops, const std::string& path);

}  // namespace tessera::experiment
