// Goal: the register checker passes correct histories and fails known-bad
// ones: a lost write, a stale strong read, an eventual read of a value
// nobody wrote, and a search that runs out of budget.
#include "experiment/register_checker.h"

#include <gtest/gtest.h>

namespace tessera::experiment {
namespace {

OpRecord Write(uint32_t p, const std::string& value, uint64_t t0, uint64_t t1,
               OpOutcome outcome = OpOutcome::kOk) {
  OpRecord op;
  op.process = p;
  op.kind = OpKind::kWrite;
  op.key = "k";
  op.value = value;
  op.invoke_us = t0;
  op.complete_us = t1;
  op.outcome = outcome;
  return op;
}

OpRecord Read(uint32_t p, std::optional<std::string> value, uint64_t t0, uint64_t t1,
              bool strong = true) {
  OpRecord op;
  op.process = p;
  op.kind = OpKind::kRead;
  op.strong = strong;
  op.key = "k";
  op.read = std::move(value);
  op.invoke_us = t0;
  op.complete_us = t1;
  op.outcome = OpOutcome::kOk;
  return op;
}

OpRecord Cas(uint32_t p, std::optional<std::string> expected, const std::string& value,
             bool swapped, uint64_t t0, uint64_t t1) {
  OpRecord op = Write(p, value, t0, t1);
  op.kind = OpKind::kCas;
  op.expected = std::move(expected);
  op.cas_succeeded = swapped;
  return op;
}

TEST(RegisterCheckerTest, CorrectHistoryPasses) {
  const std::vector<OpRecord> ops = {
      Read(1, std::nullopt, 0, 5),      Write(1, "a", 10, 20),
      Read(2, "a", 25, 30),             Cas(2, "a", "b", true, 31, 40),
      Cas(1, "a", "c", false, 41, 50),  Read(3, "a", 45, 55, /*strong=*/false),
      Read(1, "b", 60, 70),
  };
  const pb::CheckerResult r = CheckRegisters(ops, 0);
  EXPECT_TRUE(r.passed()) << r.summary();
}

TEST(RegisterCheckerTest, LostWriteFails) {
  // "b" was acknowledged, then a later read sees the older "a".
  const std::vector<OpRecord> ops = {Write(1, "a", 0, 10), Write(2, "b", 20, 30),
                                     Read(3, "a", 40, 50)};
  const pb::CheckerResult r = CheckRegisters(ops, 0);
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("NOT linearizable"), std::string::npos) << r.summary();
}

TEST(RegisterCheckerTest, StaleStrongReadFailsButStaleEventualReadPasses) {
  const std::vector<OpRecord> stale = {Write(1, "a", 0, 10), Write(1, "b", 20, 30),
                                       Read(2, "a", 40, 50, /*strong=*/true)};
  EXPECT_FALSE(CheckRegisters(stale, 0).passed());
  std::vector<OpRecord> eventual = stale;
  eventual.back().strong = false;
  const pb::CheckerResult r = CheckRegisters(eventual, 0);
  EXPECT_TRUE(r.passed()) << r.summary();
}

TEST(RegisterCheckerTest, EventualReadOfAValueNobodyWroteFails) {
  const std::vector<OpRecord> ops = {Write(1, "a", 0, 10), Write(2, "z", 5, 8, OpOutcome::kFail),
                                     Read(3, "z", 20, 30, /*strong=*/false)};
  const pb::CheckerResult r = CheckRegisters(ops, 0);
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("no write of that key wrote"), std::string::npos) << r.summary();
}

TEST(RegisterCheckerTest, UnknownWritesMayOrMayNotHaveHappened) {
  // An unknown write may take effect late (read "x" after it) or never.
  const std::vector<OpRecord> late = {Write(1, "a", 0, 10), Write(2, "x", 5, 0, OpOutcome::kInfo),
                                      Read(3, "a", 20, 30), Read(3, "x", 40, 50)};
  EXPECT_TRUE(CheckRegisters(late, 0).passed());
  const std::vector<OpRecord> never = {Write(2, "x", 5, 0, OpOutcome::kInfo),
                                       Read(3, std::nullopt, 40, 50)};
  EXPECT_TRUE(CheckRegisters(never, 0).passed());
  // A failed write certainly did not happen: reading it is a violation.
  const std::vector<OpRecord> failed = {Write(2, "x", 5, 8, OpOutcome::kFail), Read(3, "x", 40, 50)};
  EXPECT_FALSE(CheckRegisters(failed, 0).passed());
}

TEST(RegisterCheckerTest, ExhaustedBudgetIsNotAPass) {
  std::vector<OpRecord> ops;
  for (uint32_t i = 0; i < 12; ++i) ops.push_back(Write(i, "v" + std::to_string(i), i, 0, OpOutcome::kInfo));
  ops.push_back(Read(99, "v3", 100, 110));
  ops.push_back(Read(99, "v7", 120, 130));
  const pb::CheckerResult r = CheckRegisters(ops, 3);
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("inconclusive"), std::string::npos) << r.summary();
}

}  // namespace
}  // namespace tessera::experiment
