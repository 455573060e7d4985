#include "experiment/register_checker.h"

#include <map>
#include <set>
#include <string>

#include "chaos/linearizability.h"

namespace tessera::experiment {
namespace {

constexpr uint64_t kDefaultStepBudget = 10'000'000;

chaos::KvOperation ToChaos(const OpRecord& op) {
  chaos::KvOperation c;
  c.client_id = op.process;
  c.key = op.key;
  c.invoke_time = op.invoke_us;
  c.completed = op.outcome == OpOutcome::kOk;
  c.return_time = op.complete_us;
  switch (op.kind) {
    case OpKind::kRead:
      c.type = chaos::KvOpType::kGet;
      c.read = op.read;
      break;
    case OpKind::kWrite:
      c.type = chaos::KvOpType::kPut;
      c.value = op.value;
      break;
    case OpKind::kCas:
      c.type = chaos::KvOpType::kCas;
      c.value = op.value;
      c.expected = op.expected;
      c.cas_succeeded = op.cas_succeeded;
      break;
    default:  // not a register operation: CheckRegisters leaves them out
      break;
  }
  return c;
}

// The first eventual read that returned a value no write of its key wrote
// (or may have written: unknown outcomes count; failed ones and cas that
// did not swap do not).
std::string FirstPhantomRead(const std::vector<OpRecord>& ops) {
  std::map<std::string, std::set<std::string>> written;
  for (const OpRecord& op : ops) {
    if (op.kind == OpKind::kRead || !op.is_register_op()) continue;
    if (op.wrote() || op.outcome == OpOutcome::kInfo) written[op.key].insert(op.value);
  }
  for (const OpRecord& op : ops) {
    if (op.kind != OpKind::kRead || op.strong || op.outcome != OpOutcome::kOk || !op.read) continue;
    if (!written[op.key].count(*op.read)) {
      return "eventual read #" + std::to_string(op.index) + " of key " + op.key + " by client " +
             std::to_string(op.process) + " returned '" + *op.read +
             "', which no write of that key wrote";
    }
  }
  return {};
}

}  // namespace

pb::CheckerResult CheckRegisters(const std::vector<OpRecord>& ops, uint64_t step_budget) {
  pb::CheckerResult result;
  result.set_name("linearizable");
  std::vector<chaos::KvOperation> strong;
  size_t eventual_reads = 0;
  for (const OpRecord& op : ops) {
    if (op.outcome == OpOutcome::kFail || !op.is_register_op()) continue;
    if (op.kind == OpKind::kRead && !op.strong) {
      ++eventual_reads;
      continue;
    }
    if (op.kind == OpKind::kRead && op.outcome == OpOutcome::kInfo) continue;
    strong.push_back(ToChaos(op));
  }
  const chaos::CheckResult lin =
      chaos::CheckKvHistory(strong, step_budget == 0 ? kDefaultStepBudget : step_budget);
  const std::string phantom = FirstPhantomRead(ops);
  const std::string counted = std::to_string(strong.size()) + " strong operations, " +
                              std::to_string(eventual_reads) + " eventual reads";
  if (!lin.linearizable) {
    result.set_passed(false);
    result.set_summary("NOT linearizable: key " + lin.key + " (" + counted + ")\n" +
                       lin.explanation);
  } else if (!phantom.empty()) {
    result.set_passed(false);
    result.set_summary(phantom + " (" + counted + ")");
  } else if (lin.inconclusive) {
    result.set_passed(false);
    result.set_summary("inconclusive: the search of key " + lin.key +
                       " ran out of its step budget (" + counted + ")");
  } else {
    result.set_passed(true);
    result.set_summary("linearizable (" + counted + ")");
  }
  return result;
}

}  // namespace tessera::experiment
