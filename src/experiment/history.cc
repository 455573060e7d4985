#include "experiment/history.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <fstream>
#include <tuple>

#include "tessera/experiment.pb.h"

namespace tessera::experiment {
namespace {

pb::HistoryRecord InvokeLine(const OpRecord& op) {
  pb::HistoryRecord r;
  r.set_index(op.index);
  r.set_process(op.process);
  r.set_type("invoke");
  r.set_op(OpKindName(op.kind));
  if (op.kind == OpKind::kRead) r.set_consistency(op.strong ? "strong" : "eventual");
  r.set_key(op.key);
  r.set_value(op.value);
  if (op.expected) r.set_expected(*op.expected);
  r.set_time_us(op.invoke_us);
  r.set_to_key(op.to_key);
  r.set_amount(op.amount);
  if (op.kind == OpKind::kBankInit) {
    for (int64_t b : op.balances) r.add_balances(b);
  }
  if (op.is_s3_put() || op.kind == OpKind::kS3VersionPut) r.set_bytes(op.bytes);
  r.set_after_heal(op.after_heal);
  r.set_version_id(op.version_id);
  return r;
}

pb::HistoryRecord CompletionLine(const OpRecord& op) {
  pb::HistoryRecord r = InvokeLine(op);
  r.set_type(OpOutcomeName(op.outcome));
  r.set_time_us(op.complete_us);
  r.set_error(op.error);
  const bool reads_value = op.kind == OpKind::kRead || op.kind == OpKind::kS3Get ||
                           op.kind == OpKind::kS3Head || op.kind == OpKind::kS3VersionGet;
  if (reads_value && op.outcome == OpOutcome::kOk) {
    r.set_found(op.read.has_value());
    r.set_value(op.read.value_or(""));
  }
  if (op.outcome == OpOutcome::kOk) {
    if (op.kind == OpKind::kBankRead) {
      for (int64_t b : op.balances) r.add_balances(b);
    }
    if (op.kind == OpKind::kS3Get || op.kind == OpKind::kS3VersionGet) r.set_bytes(op.bytes);
    for (const std::string& k : op.listed) r.add_listed(k);
    r.set_anomaly(op.anomaly);
  }
  if (op.kind == OpKind::kCas && op.outcome == OpOutcome::kOk && !op.cas_succeeded) {
    r.set_type("fail");  // the condition did not hold: certainly no effect
    r.set_condition_failed(true);
    r.set_error("Conflict: the value was not the expected one");
  }
  return r;
}

}  // namespace

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kRead: return "read";
    case OpKind::kWrite: return "write";
    case OpKind::kCas: return "cas";
    case OpKind::kBankInit: return "bank-init";
    case OpKind::kTransfer: return "transfer";
    case OpKind::kBankRead: return "bank-read";
    case OpKind::kS3Put: return "put";
    case OpKind::kS3MultipartPut: return "multipart-put";
    case OpKind::kS3Get: return "get";
    case OpKind::kS3Head: return "head";
    case OpKind::kS3Delete: return "delete";
    case OpKind::kS3List: return "list";
    case OpKind::kS3Copy: return "copy";
    case OpKind::kS3VersionPut: return "version-put";
    case OpKind::kS3VersionGet: return "version-get";
    case OpKind::kS3VersionDelete: return "version-delete";
  }
  return "?";
}

const char* OpOutcomeName(OpOutcome outcome) {
  switch (outcome) {
    case OpOutcome::kOk: return "ok";
    case OpOutcome::kFail: return "fail";
    case OpOutcome::kInfo: return "info";
  }
  return "?";
}

Status WriteHistory(const std::vector<OpRecord>& ops, const std::string& path) {
  // (time, completion?, index) orders lines; invocations before completions.
  std::vector<std::tuple<uint64_t, bool, size_t>> lines;
  lines.reserve(ops.size() * 2);
  for (size_t i = 0; i < ops.size(); ++i) {
    lines.emplace_back(ops[i].invoke_us, false, i);
    lines.emplace_back(ops[i].complete_us, true, i);
  }
  std::sort(lines.begin(), lines.end());
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Status::IOError(path + ": cannot write");
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;  // every line has every field
  for (const auto& [time, completion, i] : lines) {
    std::string json;
    const pb::HistoryRecord r = completion ? CompletionLine(ops[i]) : InvokeLine(ops[i]);
    (void)google::protobuf::util::MessageToJsonString(r, &json, options);
    out << json << "\n";
  }
  out.flush();
  if (!out) return Status::IOError(path + ": write failed");
  return Status::Ok();
}

}  // namespace tessera::experiment
