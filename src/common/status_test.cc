// Goal: Status and Result carry codes, messages and leader hints faithfully.
#include "common/result.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(Status, NotLeaderCarriesHint) {
  Status s = Status::NotLeader(3);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotLeader);
  EXPECT_EQ(s.leader_hint(), 3u);
  EXPECT_EQ(s.ToString(), "NotLeader: not leader (leader hint 3)");
}

TEST(Status, SendOutcomeIsUnstatedUntilSetAndSurvivesCopies) {
  const Status plain = Status::Unavailable("peer down");
  EXPECT_EQ(plain.send_outcome(), SendOutcome::kUnstated);
  const Status unsent = Status::Unavailable("peer down").WithSendOutcome(SendOutcome::kNotSent);
  EXPECT_EQ(unsent.send_outcome(), SendOutcome::kNotSent);
  EXPECT_EQ(unsent.ToString(), plain.ToString()) << "the fact is not part of the text";
  const Status copy = unsent;
  EXPECT_EQ(copy.send_outcome(), SendOutcome::kNotSent);
  const Result<int> carried(unsent);
  EXPECT_EQ(carried.status().send_outcome(), SendOutcome::kNotSent);
  // Rebuilt from code and message: the fact is gone, and reads as "may have
  // been sent".
  const Status rebuilt(unsent.code(), unsent.message());
  EXPECT_EQ(rebuilt.send_outcome(), SendOutcome::kUnstated);
  EXPECT_EQ(Status::Ok().WithSendOutcome(SendOutcome::kAnswered).send_outcome(), SendOutcome::kUnstated);
  EXPECT_EQ(SendOutcomeName(SendOutcome::kSentOutcomeUnknown), "sent_outcome_unknown");
}

Result<int> Half(int x) {
  if (x % 2) return Status::InvalidArgument("odd");
  return x / 2;
}

TEST(Result, ValueOrStatus) {
  auto r = Half(4);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 2);
  auto e = Half(3);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera
