// Implements CheckKvHistory: Wing & Gong's search with Lowe's just-in-time
// linearization and Porcupine's memoisation, one key at a time.
//
// Per key, the history becomes a doubly linked list of call and return
// events in time order (calls before returns at equal times, so operations
// whose intervals touch are concurrent). The search walks the list from its
// head: a call may be linearized now if the register allows it and the
// resulting (linearized set, value) state is new; linearizing "lifts" the
// call and its return out of the list. Reaching a return means that
// operation had to be linearized before this point and was not: backtrack.
// Every call before the first return is a candidate, which is exactly the
// set of operations that may take effect next (Lowe, "Testing for
// linearizability", 2017). The backtracking stack replaces recursion.
//
// Unknown outcomes: such an operation has no return event, so it stays a
// candidate to the end; the search succeeds as soon as every completed
// operation is linearized, leaving the rest "never took effect". A get of
// unknown outcome constrains nothing and is dropped; a cas of unknown outcome
// that is linearized is one that succeeded (a failed cas changes nothing,
// which is the same as never taking effect).
#include "chaos/linearizability.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "common/check.h"
#include "common/splitmix64.h"

namespace tessera::chaos {
namespace {

// Register values are interned per key; kAbsent is "no value".
using ValueId = uint32_t;
constexpr ValueId kAbsent = 0;
constexpr int32_t kNil = -1;
constexpr int32_t kHead = 0;  // sentinel node before the first event
// A failure explanation lists at most this many operations (the latest).
constexpr size_t kExplainedOpsMax = 32;
constexpr size_t kQuotedValueBytesMax = 40;

struct Op {
  const KvOperation* source;
  ValueId value;     // put / cas: value written
  ValueId expected;  // cas
  ValueId read;      // get
};

// One call or return event in the intrusive event list.
struct Node {
  uint32_t op = 0;
  bool is_call = false;
  int32_t match = kNil;  // call: its return node, kNil if outcome unknown
  int32_t prev = kNil;
  int32_t next = kNil;
};

class Interner {
 public:
  ValueId Id(const std::optional<std::string>& value) {
    return value ? Id(*value) : kAbsent;
  }
  ValueId Id(const std::string& value) {
    return ids_.try_emplace(value, static_cast<ValueId>(ids_.size() + 1)).first->second;
  }

 private:
  std::unordered_map<std::string, ValueId> ids_;
};

std::vector<Op> InternOps(const std::vector<const KvOperation*>& partition) {
  Interner interner;
  std::vector<Op> ops;
  for (const KvOperation* source : partition) {
    if (source->type == KvOpType::kGet && !source->completed) continue;
    ops.push_back({source, interner.Id(source->value), interner.Id(source->expected),
                   interner.Id(source->read)});
  }
  return ops;
}

// Node i (i >= 1) is the i-th event in time order; kHead links to node 1.
std::vector<Node> BuildEventList(const std::vector<Op>& ops) {
  struct Event {
    uint64_t time;
    bool is_return;
    uint32_t op;
  };
  std::vector<Event> events;
  for (uint32_t i = 0; i < ops.size(); ++i) {
    events.push_back({ops[i].source->invoke_time, false, i});
    if (ops[i].source->completed) events.push_back({ops[i].source->return_time, true, i});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.is_return != b.is_return) return !a.is_return;
    return a.op < b.op;
  });
  std::vector<Node> nodes(events.size() + 1);
  std::vector<int32_t> call_node(ops.size(), kNil);
  for (size_t i = 1; i < nodes.size(); ++i) {
    const Event& event = events[i - 1];
    const auto index = static_cast<int32_t>(i);
    const int32_t next = i + 1 < nodes.size() ? index + 1 : kNil;
    nodes[i] = {event.op, !event.is_return, kNil, index - 1, next};
    if (event.is_return) nodes[call_node[event.op]].match = index;
    else call_node[event.op] = index;
  }
  nodes[kHead].next = nodes.size() > 1 ? 1 : kNil;
  return nodes;
}

// The register after `op` takes effect on `state`, or nullopt if `op`
// cannot take effect there with the outcome it reported.
std::optional<ValueId> Apply(const Op& op, ValueId state) {
  switch (op.source->type) {
    case KvOpType::kGet:
      if (op.read == state) return state;
      return std::nullopt;
    case KvOpType::kPut:
      return op.value;
    case KvOpType::kCas: {
      const bool swaps = !op.source->completed || op.source->cas_succeeded;
      if ((state == op.expected) == swaps) return swaps ? op.value : state;
      return std::nullopt;
    }
  }
  TESSERA_CHECK(false && "unknown KvOpType");
  return std::nullopt;
}

// The set of (linearized set, register value) states already explored. The
// bitsets live in one arena so a state costs its bits plus a small key.
class StateCache {
 public:
  explicit StateCache(size_t words) : set_(64, Hasher{}, Equal{&arena_, words}) {}

  // Records the state; false if it was already present.
  bool Insert(const std::vector<uint64_t>& bits, uint64_t bits_hash, ValueId state) {
    const size_t offset = arena_.size();
    arena_.insert(arena_.end(), bits.begin(), bits.end());
    const uint64_t hash = bits_hash ^ (state * 0x9E3779B97F4A7C15ULL);
    if (set_.insert({hash, offset, state}).second) return true;
    arena_.resize(offset);
    return false;
  }

 private:
  struct Key {
    uint64_t hash;
    size_t offset;
    ValueId state;
  };
  struct Hasher {
    size_t operator()(const Key& key) const { return key.hash; }
  };
  struct Equal {
    const std::vector<uint64_t>* arena;
    size_t words;
    bool operator()(const Key& a, const Key& b) const {
      return a.state == b.state &&
             std::equal(arena->begin() + a.offset, arena->begin() + a.offset + words,
                        arena->begin() + b.offset);
    }
  };
  std::vector<uint64_t> arena_;
  std::unordered_set<Key, Hasher, Equal> set_;
};

enum class Verdict { kLinearizable, kViolation, kBudgetExhausted };

struct SearchOutcome {
  Verdict verdict = Verdict::kLinearizable;
  // The latest return event the search ever stood at without being able to
  // linearize its operation: the history up to it is the smallest prefix
  // with no linearization.
  int32_t furthest_blocker = kNil;
};

class Search {
 public:
  Search(const std::vector<Op>& ops, std::vector<Node> nodes)
      : ops_(ops), nodes_(std::move(nodes)), bits_((ops.size() + 63) / 64), cache_(bits_.size()) {
    for (uint32_t i = 0; i < ops.size(); ++i) {
      zobrist_.push_back(SplitMix64Hash(i));
      if (ops[i].source->completed) ++required_left_;
    }
  }

  const std::vector<Node>& nodes() const { return nodes_; }

  SearchOutcome Run(uint64_t step_budget) {
    SearchOutcome outcome;
    uint64_t steps = 0;
    int32_t entry = nodes_[kHead].next;
    while (required_left_ > 0) {
      TESSERA_CHECK(entry != kNil);  // a pending completed op's return lies ahead
      if (nodes_[entry].is_call) {
        if (++steps > step_budget) return {Verdict::kBudgetExhausted, outcome.furthest_blocker};
        entry = TryLinearize(entry) ? nodes_[kHead].next : nodes_[entry].next;
        continue;
      }
      outcome.furthest_blocker = std::max(outcome.furthest_blocker, entry);
      if (stack_.empty()) {
        outcome.verdict = Verdict::kViolation;
        return outcome;
      }
      entry = Backtrack();
    }
    return outcome;
  }

 private:
  struct Frame {
    int32_t call;
    ValueId state_before;
  };

  bool TryLinearize(int32_t call) {
    const uint32_t op = nodes_[call].op;
    const std::optional<ValueId> next_state = Apply(ops_[op], state_);
    if (!next_state) return false;
    Toggle(op);
    if (!cache_.Insert(bits_, bits_hash_, *next_state)) {
      Toggle(op);
      return false;
    }
    stack_.push_back({call, state_});
    state_ = *next_state;
    Lift(call);
    if (ops_[op].source->completed) --required_left_;
    return true;
  }

  // Undoes the latest linearization; returns the node to try next.
  int32_t Backtrack() {
    const Frame frame = stack_.back();
    stack_.pop_back();
    const uint32_t op = nodes_[frame.call].op;
    Toggle(op);
    state_ = frame.state_before;
    Unlift(frame.call);
    if (ops_[op].source->completed) ++required_left_;
    return nodes_[frame.call].next;
  }

  void Toggle(uint32_t op) {
    bits_[op / 64] ^= uint64_t{1} << (op % 64);
    bits_hash_ ^= zobrist_[op];
  }
  // Unlinked nodes keep their own links, so relinking in reverse order of
  // unlinking restores the list exactly (dancing links).
  void Unlink(int32_t node) {
    nodes_[nodes_[node].prev].next = nodes_[node].next;
    if (nodes_[node].next != kNil) nodes_[nodes_[node].next].prev = nodes_[node].prev;
  }
  void Relink(int32_t node) {
    nodes_[nodes_[node].prev].next = node;
    if (nodes_[node].next != kNil) nodes_[nodes_[node].next].prev = node;
  }
  void Lift(int32_t call) {
    Unlink(call);
    if (nodes_[call].match != kNil) Unlink(nodes_[call].match);
  }
  void Unlift(int32_t call) {
    if (nodes_[call].match != kNil) Relink(nodes_[call].match);
    Relink(call);
  }

  const std::vector<Op>& ops_;
  std::vector<Node> nodes_;
  std::vector<uint64_t> bits_;  // bit i: ops_[i] is linearized
  uint64_t bits_hash_ = 0;      // XOR of zobrist_[i] over linearized i
  std::vector<uint64_t> zobrist_;
  StateCache cache_;
  std::vector<Frame> stack_;
  ValueId state_ = kAbsent;
  size_t required_left_ = 0;  // completed ops not yet linearized
};

std::string Quote(const std::optional<std::string>& value) {
  if (!value) return "absent";
  std::string out = "\"";
  for (size_t i = 0; i < value->size() && i < kQuotedValueBytesMax; ++i) {
    const auto c = static_cast<unsigned char>((*value)[i]);
    if (c == '"' || c == '\\') out += '\\';
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += {'\\', 'x', kHex[c >> 4], kHex[c & 0xF]};
    }
  }
  if (value->size() > kQuotedValueBytesMax) out += "...";
  return out + "\"";
}

// "client 3 cas "a" -> "b" (failed), invoked 10, returned 20"
std::string Describe(const KvOperation& op) {
  std::string out = "client " + std::to_string(op.client_id) + " ";
  switch (op.type) {
    case KvOpType::kGet: out += "get -> " + Quote(op.read); break;
    case KvOpType::kPut: out += "put " + Quote(op.value); break;
    case KvOpType::kCas:
      out += "cas " + Quote(op.expected) + " -> " + Quote(op.value);
      if (op.completed) out += op.cas_succeeded ? " (succeeded)" : " (failed)";
      break;
  }
  out += ", invoked " + std::to_string(op.invoke_time);
  if (!op.completed) return out + ", outcome unknown";
  return out + ", returned " + std::to_string(op.return_time);
}

// Lists the operations invoked before the blocking return, in event order.
std::string Explain(std::string_view key, const std::vector<Op>& ops,
                    const std::vector<Node>& nodes, int32_t blocker) {
  std::vector<int32_t> calls;
  for (int32_t i = 1; i < blocker; ++i) {
    if (nodes[i].is_call) calls.push_back(i);
  }
  std::string out = "key " + Quote(std::string(key)) + ": the operations up to time " +
                    std::to_string(ops[nodes[blocker].op].source->return_time) +
                    " cannot be linearized; stuck at " + Describe(*ops[nodes[blocker].op].source) +
                    ".\nThe " + std::to_string(calls.size()) +
                    " operations invoked by then ('*': returned by then, so must take effect;"
                    " others may or may not have):\n";
  const size_t skipped = calls.size() > kExplainedOpsMax ? calls.size() - kExplainedOpsMax : 0;
  if (skipped > 0) out += "  ... " + std::to_string(skipped) + " earlier operations omitted\n";
  for (size_t i = skipped; i < calls.size(); ++i) {
    const int32_t returned_at = nodes[calls[i]].match;
    const bool returned = returned_at != kNil && returned_at <= blocker;
    out += returned ? "  * " : "    ";
    out += Describe(*ops[nodes[calls[i]].op].source) + "\n";
  }
  return out;
}

struct KeyOutcome {
  Verdict verdict;
  std::string explanation;
};

KeyOutcome CheckKey(std::string_view key, const std::vector<const KvOperation*>& partition,
                    uint64_t step_budget) {
  const std::vector<Op> ops = InternOps(partition);
  Search search(ops, BuildEventList(ops));
  const SearchOutcome outcome = search.Run(step_budget);
  switch (outcome.verdict) {
    case Verdict::kLinearizable:
      return {outcome.verdict, ""};
    case Verdict::kBudgetExhausted:
      return {outcome.verdict, "key " + Quote(std::string(key)) + ": search budget of " +
                                   std::to_string(step_budget) + " steps exhausted over " +
                                   std::to_string(ops.size()) + " operations; unproven"};
    case Verdict::kViolation:
      return {outcome.verdict, Explain(key, ops, search.nodes(), outcome.furthest_blocker)};
  }
  TESSERA_CHECK(false && "unknown Verdict");
  return {};
}

}  // namespace

CheckResult CheckKvHistory(const std::vector<KvOperation>& history, uint64_t step_budget) {
  std::map<std::string_view, std::vector<const KvOperation*>> partitions;
  for (const KvOperation& op : history) {
    TESSERA_CHECK(!op.completed || op.return_time >= op.invoke_time);
    partitions[op.key].push_back(&op);
  }
  CheckResult result;
  for (const auto& [key, partition] : partitions) {
    KeyOutcome outcome = CheckKey(key, partition, step_budget);
    if (outcome.verdict == Verdict::kLinearizable) continue;
    if (outcome.verdict == Verdict::kBudgetExhausted) {
      if (result.inconclusive) continue;  // report the first one
      result.inconclusive = true;
    } else {
      result = CheckResult{};
      result.linearizable = false;
    }
    result.key = std::string(key);
    result.explanation = std::move(outcome.explanation);
    if (!result.linearizable) break;
  }
  return result;
}

}  // namespace tessera::chaos
