#include "experiment/s3_checker.h"

#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "chaos/linearizability.h"

namespace tessera::experiment {
namespace {

constexpr uint64_t kDefaultStepBudget = 10'000'000;
// The register value of an absent object (no write id contains a control byte).
const std::string kAbsent = "\x01" "absent";
// Times shift by this much so the synthetic "absent" write of every key
// ([0, 1]) precedes every real operation.
constexpr uint64_t kTimeShift = 2;

bool IsS3(const OpRecord& op) {
  return op.is_s3_put() || op.kind == OpKind::kS3Get || op.kind == OpKind::kS3Head ||
         op.kind == OpKind::kS3Delete || op.kind == OpKind::kS3List;
}

std::string Name(const OpRecord& op) {
  return std::string(OpKindName(op.kind)) + " #" + std::to_string(op.index) + " of " + op.key +
         " by client " + std::to_string(op.process) + " [" + std::to_string(op.invoke_us / 1000) +
         " ms, " + std::to_string(op.complete_us / 1000) + " ms]";
}

// Contract 1: the objects as registers, every key starting absent.
std::vector<chaos::KvOperation> AsRegisters(const std::vector<OpRecord>& ops) {
  std::vector<chaos::KvOperation> out;
  std::set<std::string> keys;
  for (const OpRecord& op : ops) {
    if (op.kind == OpKind::kS3List || op.outcome == OpOutcome::kFail) continue;
    const bool read = op.kind == OpKind::kS3Get || op.kind == OpKind::kS3Head;
    if (read && op.outcome != OpOutcome::kOk) continue;  // an unknown read constrains nothing
    chaos::KvOperation c;
    c.client_id = op.process;
    c.key = op.key;
    c.invoke_time = op.invoke_us + kTimeShift;
    c.return_time = op.complete_us + kTimeShift;
    c.completed = op.outcome == OpOutcome::kOk;
    if (read) {
      c.type = chaos::KvOpType::kGet;
      c.read = op.read.value_or(kAbsent);
    } else {
      c.type = chaos::KvOpType::kPut;
      c.value = op.is_s3_put() ? op.value : kAbsent;
    }
    out.push_back(std::move(c));
    keys.insert(op.key);
  }
  for (const std::string& key : keys) {
    chaos::KvOperation init;
    init.client_id = std::numeric_limits<uint32_t>::max();
    init.key = key;
    init.type = chaos::KvOpType::kPut;
    init.value = kAbsent;
    init.invoke_time = 0;
    init.return_time = 1;
    init.completed = true;
    out.push_back(std::move(init));
  }
  return out;
}

// The PUTs and DELETEs of each key that did not certainly fail.
using WritesByKey = std::map<std::string, std::vector<const OpRecord*>>;

WritesByKey Writes(const std::vector<OpRecord>& ops) {
  WritesByKey writes;
  for (const OpRecord& op : ops) {
    if ((op.is_s3_put() || op.kind == OpKind::kS3Delete) && op.outcome != OpOutcome::kFail) {
      writes[op.key].push_back(&op);
    }
  }
  return writes;
}

// Whether `key` must appear in `list` (contract 3): its last acknowledged
// write before the list began was a PUT no DELETE may have followed.
bool SurelyPresent(const std::vector<const OpRecord*>& writes, const OpRecord& list) {
  const OpRecord* last = nullptr;
  for (const OpRecord* w : writes) {
    if (w->outcome != OpOutcome::kOk || w->complete_us >= list.invoke_us) continue;
    if (!last || w->complete_us > last->complete_us) last = w;
  }
  if (!last || !last->is_s3_put()) return false;
  for (const OpRecord* w : writes) {
    if (w->kind != OpKind::kS3Delete || w->invoke_us > list.complete_us) continue;
    const bool may_follow = w->outcome == OpOutcome::kInfo || w->complete_us >= last->invoke_us;
    if (may_follow) return false;
  }
  return true;
}

// The first listing that breaks contract 3, or "".
std::string ListingViolation(const std::vector<OpRecord>& ops, const WritesByKey& writes) {
  for (const OpRecord& list : ops) {
    if (list.kind != OpKind::kS3List || list.outcome != OpOutcome::kOk) continue;
    std::set<std::string> seen;
    for (const std::string& key : list.listed) {
      if (!seen.insert(key).second) return Name(list) + " listed " + key + " twice";
      bool could_exist = false;
      auto it = writes.find(key);
      if (key.compare(0, list.key.size(), list.key) == 0 && it != writes.end()) {
        for (const OpRecord* w : it->second) {
          could_exist = could_exist ||
                        (w->is_s3_put() && w->invoke_us <= list.complete_us);
        }
      }
      if (!could_exist) return Name(list) + " listed " + key + ", which no PUT wrote (ghost)";
    }
    for (const auto& [key, key_writes] : writes) {
      if (key.compare(0, list.key.size(), list.key) != 0 || seen.count(key)) continue;
      if (SurelyPresent(key_writes, list)) {
        return Name(list) + " missed " + key +
               ", written by an acknowledged PUT before the list began and not deleted since";
      }
    }
  }
  return {};
}

}  // namespace

// Contract 4: the first violation among the versions, or "".
std::string VersionViolation(const std::vector<OpRecord>& ops) {
  using Version = std::pair<std::string, std::string>;  // (key, version id)
  std::map<Version, const OpRecord*> created;            // by acknowledged PUTs
  std::map<Version, std::vector<const OpRecord*>> deletes;
  for (const OpRecord& op : ops) {
    const Version v{op.key, op.version_id};
    if (op.kind == OpKind::kS3VersionPut && op.outcome == OpOutcome::kOk) created[v] = &op;
    if (op.kind == OpKind::kS3VersionDelete && op.outcome != OpOutcome::kFail) {
      deletes[v].push_back(&op);
    }
  }
  for (const OpRecord& get : ops) {
    if (get.kind != OpKind::kS3VersionGet || get.outcome != OpOutcome::kOk) continue;
    const Version v{get.key, get.version_id};
    auto put = created.find(v);
    if (put == created.end()) continue;  // a version whose PUT's outcome is unknown
    bool may_be_deleted = false, surely_deleted = false;
    for (const OpRecord* d : deletes[v]) {
      may_be_deleted = may_be_deleted || d->invoke_us <= get.complete_us;
      surely_deleted = surely_deleted ||
                       (d->outcome == OpOutcome::kOk && d->complete_us < get.invoke_us);
    }
    const std::string what = "version " + get.version_id + " of " + get.key + " (" + Name(get) + ")";
    if (!get.read) {
      if (!may_be_deleted) return "lost version: " + what + " answered 404, no DELETE of it";
    } else if (surely_deleted) {
      return "deleted version readable: " + what + " read after its DELETE was acknowledged";
    } else if (*get.read != put->second->value) {
      return "wrong version: " + what + " read write " + *get.read + ", its PUT wrote " +
             put->second->value;
    }
  }
  return "";
}

pb::CheckerResult CheckS3Objects(const std::vector<OpRecord>& ops, uint64_t step_budget) {
  pb::CheckerResult result;
  result.set_name("s3");
  std::vector<OpRecord> s3;
  for (const OpRecord& op : ops) {
    if (IsS3(op)) s3.push_back(op);
  }
  std::map<OpKind, uint64_t> counts;  // multipart PUTs count as PUTs; copies apart
  uint64_t unknown = 0;
  std::string corruption;
  for (const OpRecord& op : s3) {
    if (op.outcome == OpOutcome::kOk) {
      ++counts[op.is_s3_put() && op.kind != OpKind::kS3Copy ? OpKind::kS3Put : op.kind];
    }
    if (op.outcome == OpOutcome::kInfo) ++unknown;
    if (op.outcome == OpOutcome::kOk && !op.anomaly.empty() && corruption.empty()) {
      corruption = Name(op) + ": " + op.anomaly;
    }
  }
  for (const OpRecord& op : ops) {  // versions: outside the registers
    const bool version = op.kind == OpKind::kS3VersionPut || op.kind == OpKind::kS3VersionGet ||
                         op.kind == OpKind::kS3VersionDelete;
    if (!version) continue;
    if (op.outcome == OpOutcome::kOk) ++counts[op.kind];
    if (op.outcome == OpOutcome::kOk && !op.anomaly.empty() && corruption.empty()) {
      corruption = Name(op) + ": " + op.anomaly;
    }
  }
  const std::string counted =
      std::to_string(counts[OpKind::kS3Put]) + " puts, " +
      (counts[OpKind::kS3Copy] ? std::to_string(counts[OpKind::kS3Copy]) + " copies, " : "") +
      std::to_string(counts[OpKind::kS3Delete]) +
      " deletes, " + std::to_string(counts[OpKind::kS3Get]) + " gets, " +
      std::to_string(counts[OpKind::kS3Head]) + " heads, " + std::to_string(counts[OpKind::kS3List]) +
      " lists acknowledged, " + std::to_string(unknown) + " unknown" +
      (counts[OpKind::kS3VersionPut] == 0
           ? std::string()
           : "; versions: " + std::to_string(counts[OpKind::kS3VersionPut]) + " puts, " +
                 std::to_string(counts[OpKind::kS3VersionGet]) + " gets by id, " +
                 std::to_string(counts[OpKind::kS3VersionDelete]) + " deletes by id");
  if (!corruption.empty()) {
    result.set_passed(false);
    result.set_summary("corruption: " + corruption + " (" + counted + ")");
    return result;
  }
  if (counts[OpKind::kS3Put] + counts[OpKind::kS3Copy] == 0) {
    result.set_passed(false);
    result.set_summary("no PUT was acknowledged: nothing to check (" + counted + ")");
    return result;
  }
  const chaos::CheckResult lin =
      chaos::CheckKvHistory(AsRegisters(s3), step_budget == 0 ? kDefaultStepBudget : step_budget);
  if (!lin.linearizable) {
    result.set_passed(false);
    result.set_summary("NOT linearizable: object " + lin.key + " (" + counted + "; the value " +
                       "is the write id, '\\x01absent' absence)\n" + lin.explanation);
    return result;
  }
  std::string listing = ListingViolation(s3, Writes(s3));
  if (listing.empty()) listing = VersionViolation(ops);
  if (!listing.empty()) {
    result.set_passed(false);
    result.set_summary(listing + " (" + counted + ")");
  } else if (lin.inconclusive) {
    result.set_passed(false);
    result.set_summary("inconclusive: the search of object " + lin.key +
                       " ran out of its step budget (" + counted + ")");
  } else {
    result.set_passed(true);
    result.set_summary("objects linearizable, bodies intact, listings complete (" + counted + ")");
  }
  return result;
}

}  // namespace tessera::experiment
