// Goal: the bank checker passes correct histories (unknown transfers
// included) and fails known-bad ones: drift in a read, half a transfer
// lost (the debit applied, the credit not), a negative balance, an account
// missing from a read, and no successful read after healing.
#include "experiment/bank_checker.h"

#include <gtest/gtest.h>

namespace tessera::experiment {
namespace {

const BankSpec kBank{"p/w0-a", 3, 300};

OpRecord BankRead(std::vector<int64_t> balances, uint64_t t, bool after_heal = false) {
  OpRecord op;
  op.index = t;
  op.kind = OpKind::kBankRead;
  op.key = kBank.scan_start;
  op.balances = std::move(balances);
  op.invoke_us = t;
  op.complete_us = t + 5;
  op.outcome = OpOutcome::kOk;
  op.after_heal = after_heal;
  return op;
}

OpRecord Transfer(const std::string& from, const std::string& to, int64_t amount, uint64_t t,
                  OpOutcome outcome) {
  OpRecord op;
  op.kind = OpKind::kTransfer;
  op.key = from;
  op.to_key = to;
  op.amount = amount;
  op.invoke_us = t;
  op.complete_us = t + 5;
  op.outcome = outcome;
  return op;
}

TEST(BankChecker, ReadsThatSumToTheTotalPassUnknownTransfersIncluded) {
  std::vector<OpRecord> ops = {
      BankRead({100, 100, 100}, 0),
      Transfer("p/w0-a00", "p/w0-a01", 30, 10, OpOutcome::kOk),
      BankRead({70, 130, 100}, 20),
      Transfer("p/w0-a01", "p/w0-a02", 50, 30, OpOutcome::kInfo),  // happened, as it turns out
      Transfer("p/w0-a00", "p/w0-a02", 10, 40, OpOutcome::kInfo),  // did not
      BankRead({70, 80, 150}, 50),
      BankRead({70, 80, 150}, 100, /*after_heal=*/true),
  };
  // A read that did not answer is not checked.
  OpRecord failed = BankRead({}, 60);
  failed.outcome = OpOutcome::kFail;
  ops.push_back(failed);
  const pb::CheckerResult r = CheckBank(ops, {kBank});
  EXPECT_TRUE(r.passed()) << r.summary();
  EXPECT_EQ(r.name(), "bank");
  EXPECT_NE(r.summary().find("4 snapshot reads, 1 transfers, 2 unknown"), std::string::npos)
      << r.summary();
}

TEST(BankChecker, DriftFails) {
  const pb::CheckerResult r =
      CheckBank({BankRead({100, 100, 100}, 0), BankRead({100, 101, 100}, 20),
                 BankRead({100, 100, 100}, 40, true)},
                {kBank});
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("sum to 301, not 300 (drift 1"), std::string::npos) << r.summary();
}

TEST(BankChecker, HalfALostTransferShowsAsDrift) {
  // The debit of an acknowledged transfer survived a failover, its credit did not.
  const pb::CheckerResult r =
      CheckBank({BankRead({100, 100, 100}, 0),
                 Transfer("p/w0-a00", "p/w0-a01", 30, 10, OpOutcome::kOk),
                 BankRead({70, 100, 100}, 100, true)},
                {kBank});
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("drift -30"), std::string::npos) << r.summary();
  EXPECT_NE(r.summary().find("bank read #100"), std::string::npos) << r.summary();
}

TEST(BankChecker, NegativeBalanceFails) {
  const pb::CheckerResult r =
      CheckBank({BankRead({-10, 210, 100}, 0), BankRead({100, 100, 100}, 40, true)}, {kBank});
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("account 0 is negative"), std::string::npos) << r.summary();
}

TEST(BankChecker, AReadWithoutAnAccountFails) {
  OpRecord read = BankRead({100, 0, 100}, 0);
  read.anomaly = "account p/w0-a01 absent";
  const pb::CheckerResult r = CheckBank({read, BankRead({100, 100, 100}, 40, true)}, {kBank});
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("account p/w0-a01 absent"), std::string::npos) << r.summary();
  const pb::CheckerResult short_read =
      CheckBank({BankRead({100, 200}, 0), BankRead({100, 100, 100}, 40, true)}, {kBank});
  EXPECT_FALSE(short_read.passed());
}

TEST(BankChecker, NoSuccessfulReadAfterHealingFails) {
  OpRecord final_read = BankRead({}, 40, true);
  final_read.outcome = OpOutcome::kFail;
  const pb::CheckerResult r = CheckBank({BankRead({100, 100, 100}, 0), final_read}, {kBank});
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("after healing"), std::string::npos) << r.summary();
}

TEST(BankChecker, TheEarliestViolationIsNamed) {
  const pb::CheckerResult r =
      CheckBank({BankRead({100, 100, 90}, 50), BankRead({100, 100, 95}, 20),
                 BankRead({100, 100, 100}, 90, true)},
                {kBank});
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.summary().find("bank read #20"), std::string::npos) << r.summary();
}

}  // namespace
}  // namespace tessera::experiment
