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

enum class OpKind {
  // kv_register
  kRead, kWrite, kCas,
  // kv_bank: the accounts' creation, a transfer, a snapshot read of all accounts
  kBankInit, kTransfer, kBankRead,
  // s3_objects
  kS3Put, kS3MultipartPut, kS3Get, kS3Head, kS3Delete, kS3List,
  kS3Copy,  // CopyObject of a fresh source object onto the key (s3_object_body.h)
  // Versioned bucket: a PUT that returns its version id, a GET and a
  // DELETE of one version by id (checked by version, not as registers).
  kS3VersionPut, kS3VersionGet, kS3VersionDelete,
};
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
  // kv_bank: a transfer moves `amount` from `key` to `to_key`; a bank read
  // returns `balances` in account order (kBankInit writes them).
  std::string to_key;
  int64_t amount = 0;
  std::vector<int64_t> balances;
  // s3_objects: `value` is the write id a put wrote or a get/head read
  // (`read` as for kRead: nullopt for 404); `bytes` the body size; a list's
  // `key` is its prefix and `listed` the keys it returned.
  uint64_t bytes = 0;
  std::vector<std::string> listed;
  // kS3Version*: the version id the PUT returned (ok), or the version the
  // GET or DELETE names.
  std::string version_id;
  // ok reads: what no correct answer contains (a body that does not match
  // its header, a bank read without an account); the checkers fail on it.
  std::string anomaly;
  bool after_heal = false;              // a final read, after healing

  uint64_t latency_us() const { return complete_us - invoke_us; }
  // A write that took effect: an ok write, a cas that swapped, an ok
  // transfer or bank creation, an ok S3 PUT, copy or DELETE (by version
  // id too).
  bool wrote() const {
    if (outcome != OpOutcome::kOk) return false;
    switch (kind) {
      case OpKind::kWrite:
      case OpKind::kBankInit:
      case OpKind::kTransfer:
      case OpKind::kS3Put:
      case OpKind::kS3MultipartPut:
      case OpKind::kS3Copy:
      case OpKind::kS3Delete:
      case OpKind::kS3VersionPut:
      case OpKind::kS3VersionDelete:
        return true;
      case OpKind::kCas:
        return cas_succeeded;
      default:
        return false;
    }
  }
  // An S3 PUT, single or multipart, or a copy: writes `value` as the
  // object's write id.
  bool is_s3_put() const {
    return kind == OpKind::kS3Put || kind == OpKind::kS3MultipartPut || kind == OpKind::kS3Copy;
  }
  bool is_register_op() const {
    return kind == OpKind::kRead || kind == OpKind::kWrite || kind == OpKind::kCas;
  }
};

// "read", "write", "cas", "bank-init", "transfer", "bank-read", "put",
// "multipart-put", "get", "head", "delete", "list", "copy", "version-put",
// "version-get", "version-delete"; "ok", "fail", "info".
const char* OpKindName(OpKind kind);
const char* OpOutcomeName(OpOutcome outcome);

// Writes `ops` to `path` as JSON lines (pb::HistoryRecord, protobuf's JSON
// mapping): an invoke line and a completion line per operation, sorted by
// time (invocations first on ties). IOError when the file cannot be written.
Status WriteHistory(const std::vector<OpRecord>& ops, const std::string& path);

}  // namespace tessera::experiment
