// Tests for CheckKvHistory: valid histories pass, each kind of known
// violation is caught and explained, and the search is fast enough.
#include "chaos/linearizability.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <random>

namespace tessera::chaos {
namespace {

constexpr uint64_t kUnknown = UINT64_MAX;  // return time of an unknown outcome

KvOperation Op(uint64_t client, KvOpType type, uint64_t invoke, uint64_t ret) {
  KvOperation op;
  op.client_id = client;
  op.type = type;
  op.key = "k";
  op.invoke_time = invoke;
  op.completed = ret != kUnknown;
  op.return_time = op.completed ? ret : 0;
  return op;
}
KvOperation Put(uint64_t client, std::string value, uint64_t invoke, uint64_t ret) {
  KvOperation op = Op(client, KvOpType::kPut, invoke, ret);
  op.value = std::move(value);
  return op;
}
KvOperation Get(uint64_t client, std::optional<std::string> read, uint64_t invoke, uint64_t ret) {
  KvOperation op = Op(client, KvOpType::kGet, invoke, ret);
  op.read = std::move(read);
  return op;
}
KvOperation Cas(uint64_t client, std::optional<std::string> expected, std::string value,
                bool succeeded, uint64_t invoke, uint64_t ret) {
  KvOperation op = Op(client, KvOpType::kCas, invoke, ret);
  op.expected = std::move(expected);
  op.value = std::move(value);
  op.cas_succeeded = succeeded;
  return op;
}
KvOperation OnKey(std::string key, KvOperation op) {
  op.key = std::move(key);
  return op;
}

void ExpectLinearizable(const std::vector<KvOperation>& history) {
  const CheckResult result = CheckKvHistory(history);
  EXPECT_TRUE(result.linearizable) << result.explanation;
  EXPECT_FALSE(result.inconclusive) << result.explanation;
}
CheckResult ExpectViolation(const std::vector<KvOperation>& history) {
  const CheckResult result = CheckKvHistory(history);
  EXPECT_FALSE(result.linearizable);
  EXPECT_FALSE(result.inconclusive);
  EXPECT_EQ(result.key, "k");
  EXPECT_NE(result.explanation.find("key \"k\""), std::string::npos) << result.explanation;
  return result;
}

// --- known-good histories ----------------------------------------------------

TEST(LinearizabilityTest, EmptyHistoryPasses) {
  // Goal: nothing to order is trivially linearizable.
  ExpectLinearizable({});
}

TEST(LinearizabilityTest, SequentialHistoryPasses) {
  // Goal: a non-overlapping history that follows register semantics passes.
  ExpectLinearizable({Get(1, std::nullopt, 0, 1), Put(1, "a", 2, 3), Get(2, "a", 4, 5),
                      Put(2, "b", 6, 7), Get(1, "b", 8, 9)});
}

TEST(LinearizabilityTest, OverlappingPutsAndGetsWithSeveralOrdersPass) {
  // Goal: the checker finds an order when several interleavings are possible.
  ExpectLinearizable({Put(1, "a", 0, 50), Put(2, "b", 10, 60), Get(3, "a", 15, 25),
                      Get(4, "b", 20, 30), Get(3, "b", 70, 80)});
  // The same writes, the opposite order observed.
  ExpectLinearizable({Put(1, "a", 0, 50), Put(2, "b", 10, 60), Get(3, "b", 15, 25),
                      Get(4, "a", 20, 30), Get(3, "a", 70, 80)});
}

TEST(LinearizabilityTest, TouchingIntervalsAreConcurrent) {
  // Goal: a read returning at the instant a write is invoked may observe it.
  ExpectLinearizable({Get(1, "a", 0, 10), Put(2, "a", 10, 20)});
}

TEST(LinearizabilityTest, CasSuccessAndFailurePass) {
  // Goal: cas succeeds exactly when the value equals expected (absent included).
  ExpectLinearizable({Cas(1, std::nullopt, "a", true, 0, 1),
                      Cas(2, std::nullopt, "x", false, 2, 3),
                      Cas(1, "a", "b", true, 4, 5), Cas(2, "a", "c", false, 6, 7),
                      Get(3, "b", 8, 9)});
  // Two concurrent cas with one expected value: one wins, one fails.
  ExpectLinearizable({Put(1, "v0", 0, 1), Cas(2, "v0", "v1", true, 2, 10),
                      Cas(3, "v0", "v2", false, 3, 9), Get(1, "v1", 11, 12)});
}

TEST(LinearizabilityTest, UnknownOutcomeWritesMayOrMayNotTakeEffect) {
  // Goal: an unknown-outcome write is allowed to take effect late or never.
  ExpectLinearizable({Put(1, "a", 0, kUnknown), Get(2, "a", 50, 60)});
  ExpectLinearizable({Put(1, "a", 0, kUnknown), Get(2, std::nullopt, 50, 60)});
  ExpectLinearizable({Put(1, "a", 0, kUnknown), Get(2, std::nullopt, 50, 60),
                      Get(2, "a", 70, 80)});
  ExpectLinearizable({Put(1, "a", 0, 1), Cas(1, "a", "b", false, 2, kUnknown),
                      Get(2, "a", 10, 11), Get(2, "b", 12, 13)});
  ExpectLinearizable({Get(1, "never", 0, kUnknown)});
}

TEST(LinearizabilityTest, UnknownOutcomeCasThatCouldNeverSucceedIsLeftOut) {
  // Goal: "never took effect" is allowed even where no later point would work.
  ExpectLinearizable({Put(1, "a", 0, 1), Cas(2, "x", "b", false, 2, kUnknown),
                      Get(3, "a", 10, 11)});
}

// --- known-bad histories -----------------------------------------------------

TEST(LinearizabilityTest, DetectsStaleReadAfterCompletedWrite) {
  // Goal: a read that starts after a write returned must not miss it.
  const CheckResult result = ExpectViolation({Put(1, "a", 0, 10), Get(2, std::nullopt, 20, 30)});
  const std::string& text = result.explanation;
  EXPECT_NE(text.find("client 2 get -> absent, invoked 20, returned 30"), std::string::npos)
      << text;
  EXPECT_NE(text.find("* client 1 put \"a\", invoked 0, returned 10"), std::string::npos) << text;
}

TEST(LinearizabilityTest, DetectsReadOfValueNeverWritten) {
  // Goal: a read can only return a value some write produced.
  ExpectViolation({Put(1, "a", 0, 10), Get(2, "zzz", 5, 30)});
}

TEST(LinearizabilityTest, DetectsLostAcknowledgedWrite) {
  // Goal: an acknowledged overwrite may not vanish (later reads see older value).
  ExpectViolation({Put(1, "a", 0, 10), Put(1, "b", 20, 30), Get(2, "a", 40, 50),
                   Get(3, "a", 60, 70)});
}

TEST(LinearizabilityTest, DetectsTwoSuccessfulCasOnOneExpectedValue) {
  // Goal: two cas from one expected value cannot both win without a write back.
  ExpectViolation({Put(1, "v0", 0, 1), Cas(2, "v0", "v1", true, 2, 10),
                   Cas(3, "v0", "v2", true, 3, 9)});
  // With the value written back in between, both may win.
  ExpectLinearizable({Put(1, "v0", 0, 1), Cas(2, "v0", "v1", true, 2, 3),
                      Put(1, "v0", 4, 5), Cas(3, "v0", "v2", true, 6, 7)});
}

TEST(LinearizabilityTest, DetectsFailedCasWhoseExpectedValueHeld) {
  // Goal: a cas may only report failure if the value differed from expected.
  ExpectViolation({Put(1, "a", 0, 10), Cas(2, "a", "b", false, 20, 30)});
  ExpectViolation({Cas(2, std::nullopt, "b", false, 0, 10)});
  // A concurrent write can explain the failure.
  ExpectLinearizable({Put(1, "a", 0, 10), Cas(2, "a", "b", false, 20, 30),
                      Put(3, "c", 25, 35)});
}

TEST(LinearizabilityTest, DetectsReadOfWriteInvokedAfterReadReturned) {
  // Goal: a read may not observe a write from its future.
  ExpectViolation({Get(1, "a", 0, 10), Put(2, "a", 11, 20)});
  ExpectViolation({Get(1, "a", 0, 10), Put(2, "a", 11, kUnknown)});
}

TEST(LinearizabilityTest, DetectsNonMonotonicReadsByOneClient) {
  // Goal: once a client saw the newer of two writes it may not see the older.
  ExpectViolation({Put(1, "a", 0, 10), Put(2, "b", 5, 100), Get(3, "b", 20, 30),
                   Get(3, "a", 40, 50)});
}

TEST(LinearizabilityTest, ViolationOnOneKeyIsNamedWhenOtherKeyIsFine) {
  // Goal: partitions are independent and the failing key is reported.
  const CheckResult result = CheckKvHistory({
      OnKey("A", Put(1, "a", 0, 10)), OnKey("A", Get(2, "a", 20, 30)),
      OnKey("B", Put(1, "b", 0, 10)), OnKey("B", Get(2, std::nullopt, 20, 30)),
      OnKey("C", Get(3, "c", 40, 50)),  // not the first violation: "B" < "C"
  });
  EXPECT_FALSE(result.linearizable);
  EXPECT_EQ(result.key, "B");
  EXPECT_NE(result.explanation.find("key \"B\""), std::string::npos) << result.explanation;
  // Key A's value "a" does not make key B's read legal, and vice versa.
  ExpectLinearizable({OnKey("A", Put(1, "a", 0, 10)), OnKey("B", Get(2, std::nullopt, 20, 30))});
}

TEST(LinearizabilityTest, ExplanationNamesTheSmallestFailingPrefix) {
  // Goal: the explanation stops at the first read that cannot be explained.
  const CheckResult result = ExpectViolation(
      {Put(1, "a", 0, 10), Get(2, "a", 20, 30), Get(2, "x", 40, 50), Put(1, "late", 60, 70)});
  EXPECT_NE(result.explanation.find("stuck at client 2 get -> \"x\""), std::string::npos)
      << result.explanation;
  EXPECT_EQ(result.explanation.find("late"), std::string::npos) << result.explanation;
}

TEST(LinearizabilityTest, ExhaustedBudgetIsInconclusive) {
  // Goal: a search that runs out of steps says so instead of passing or failing.
  std::vector<KvOperation> history;
  for (uint64_t i = 0; i < 20; ++i) history.push_back(Put(i, "v" + std::to_string(i), i, kUnknown));
  history.push_back(Get(99, "never", 100, 110));
  const CheckResult result = CheckKvHistory(history, /*step_budget=*/1000);
  EXPECT_TRUE(result.linearizable);
  EXPECT_TRUE(result.inconclusive);
  EXPECT_EQ(result.key, "k");
}

// --- randomized and performance ----------------------------------------------

struct GeneratorOptions {
  uint64_t seed = 1;
  int clients = 4;
  int keys = 2;
  int ops = 200;
  double unknown_rate = 0.05;  // per operation, split between before/after effect
};

// Runs clients against a real sequential store: each operation takes effect
// at one instant strictly inside its interval, so the history is linearizable.
// Each step advances one random client: invoke, take effect, return.
class HistoryGenerator {
 public:
  explicit HistoryGenerator(const GeneratorOptions& options)
      : options_(options), rng_(options.seed), clients_(options.clients) {}

  std::vector<KvOperation> Run() {
    for (uint64_t now = 1; issued_ < options_.ops || busy_ > 0; ++now) {
      Client& client = clients_[rng_() % clients_.size()];
      switch (client.phase) {
        case Phase::kIdle: Invoke(client, now); break;
        case Phase::kInvoked: TakeEffect(client); break;
        case Phase::kApplied: Return(client, now); break;
      }
    }
    std::shuffle(history_.begin(), history_.end(), rng_);  // input order must not matter
    return history_;
  }

 private:
  enum class Phase { kIdle, kInvoked, kApplied };
  struct Client {
    Phase phase = Phase::kIdle;
    KvOperation op;
  };

  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  void Invoke(Client& client, uint64_t now) {
    if (issued_ == options_.ops) return;
    ++issued_, ++busy_;
    client.op = Op(&client - clients_.data(), static_cast<KvOpType>(rng_() % 3), now, 0);
    client.op.key = "key" + std::to_string(rng_() % options_.keys);
    client.op.value = "v" + std::to_string(issued_);
    const std::vector<std::string>& old = written_[client.op.key];
    if (Chance(0.5) && store_.count(client.op.key)) client.op.expected = store_[client.op.key];
    else if (Chance(0.5) && !old.empty()) client.op.expected = old[rng_() % old.size()];
    client.phase = Phase::kInvoked;
  }

  void TakeEffect(Client& client) {
    client.phase = Phase::kApplied;
    if (Chance(options_.unknown_rate / 2)) return Finish(client, false);  // lost before effect
    KvOperation& op = client.op;
    const auto it = store_.find(op.key);
    const auto current = it == store_.end() ? std::nullopt : std::optional(it->second);
    if (op.type == KvOpType::kGet) op.read = current;
    op.cas_succeeded = op.type == KvOpType::kCas && current == op.expected;
    if (op.type == KvOpType::kPut || op.cas_succeeded) {
      store_[op.key] = op.value;
      written_[op.key].push_back(op.value);
    }
  }

  void Return(Client& client, uint64_t now) {
    client.op.return_time = now;
    Finish(client, !Chance(options_.unknown_rate / 2));  // timed out after effect
  }

  void Finish(Client& client, bool completed) {
    client.op.completed = completed;
    if (!completed) client.op.return_time = 0;
    history_.push_back(client.op);
    client.phase = Phase::kIdle;
    --busy_;
  }

  GeneratorOptions options_;
  std::mt19937_64 rng_;
  std::vector<Client> clients_;
  std::map<std::string, std::string> store_;
  std::map<std::string, std::vector<std::string>> written_;
  std::vector<KvOperation> history_;
  int issued_ = 0;
  int busy_ = 0;
};

std::vector<KvOperation> GenerateHistory(const GeneratorOptions& options) {
  return HistoryGenerator(options).Run();
}

TEST(LinearizabilityTest, RandomLinearizableHistoriesPass) {
  // Goal: histories produced by a real sequential store are always accepted.
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ExpectLinearizable(GenerateHistory({.seed = seed}));
  }
}

TEST(LinearizabilityTest, RandomHistoriesWithOneCorruptedReadFail) {
  // Goal: one read of a never-written value in a large valid history is caught.
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::vector<KvOperation> history = GenerateHistory({.seed = seed});
    std::vector<size_t> reads;
    for (size_t i = 0; i < history.size(); ++i) {
      if (history[i].type == KvOpType::kGet && history[i].completed) reads.push_back(i);
    }
    ASSERT_FALSE(reads.empty());
    KvOperation& victim = history[reads[seed % reads.size()]];
    victim.read = "never-written";
    const CheckResult result = CheckKvHistory(history);
    EXPECT_FALSE(result.linearizable);
    EXPECT_FALSE(result.inconclusive);
    EXPECT_EQ(result.key, victim.key);
    EXPECT_NE(result.explanation.find("\"never-written\""), std::string::npos)
        << result.explanation;
  }
}

TEST(LinearizabilityTest, ThreeThousandOperationsCheckQuickly) {
  // Goal: a 3-key, 3,000-operation, 5-client history checks fast (time printed).
  const std::vector<KvOperation> history =
      GenerateHistory({.seed = 42, .clients = 5, .keys = 3, .ops = 3000, .unknown_rate = 0.01});
  const auto start = std::chrono::steady_clock::now();
  const CheckResult result = CheckKvHistory(history);
  const std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - start;
  std::printf("[ perf     ] %zu operations checked in %.1f ms\n", history.size(), elapsed.count());
  EXPECT_TRUE(result.linearizable) << result.explanation;
  EXPECT_FALSE(result.inconclusive) << result.explanation;
}

TEST(LinearizabilityDeathTest, ReturnBeforeInvokeIsACallerBug) {
  // Goal: a malformed history aborts loudly rather than being judged.
  EXPECT_DEATH(CheckKvHistory({Put(1, "a", 10, 5)}), "invariant violated");
}

}  // namespace
}  // namespace tessera::chaos
