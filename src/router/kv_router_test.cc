// Goal: whether the router may send a failed write again depends on the
// status's code and typed SendOutcome only: rewording a message, even into
// the words of another failure, never changes the decision.
#include <gtest/gtest.h>

#include "router/kv_router.h"

namespace tessera::router {
namespace {

Status With(StatusCode code, std::string message, SendOutcome outcome) {
  return Status(code, std::move(message)).WithSendOutcome(outcome);
}

TEST(WriteMayHaveBeenApplied, NotSentIsSafeToResendWhateverTheCode) {
  for (StatusCode code : {StatusCode::kUnavailable, StatusCode::kTimeout, StatusCode::kAborted,
                          StatusCode::kThrottled, StatusCode::kInvalidArgument}) {
    EXPECT_FALSE(WriteMayHaveBeenApplied(With(code, "anything", SendOutcome::kNotSent)));
  }
}

TEST(WriteMayHaveBeenApplied, SentWithoutAnswerOrUnstatedMayHaveApplied) {
  for (SendOutcome outcome : {SendOutcome::kSentOutcomeUnknown, SendOutcome::kUnstated}) {
    for (StatusCode code : {StatusCode::kUnavailable, StatusCode::kTimeout, StatusCode::kAborted}) {
      EXPECT_TRUE(WriteMayHaveBeenApplied(With(code, "x", outcome)))
          << StatusCodeName(code) << " " << SendOutcomeName(outcome);
    }
  }
}

TEST(WriteMayHaveBeenApplied, AnswersDecideByCode) {
  EXPECT_TRUE(WriteMayHaveBeenApplied(With(StatusCode::kUnavailable, "no quorum", SendOutcome::kAnswered)));
  EXPECT_TRUE(WriteMayHaveBeenApplied(With(StatusCode::kTimeout, "not applied in time", SendOutcome::kAnswered)));
  for (StatusCode code : {StatusCode::kNotLeader, StatusCode::kStaleEpoch, StatusCode::kNotFound,
                          StatusCode::kThrottled, StatusCode::kAborted, StatusCode::kConflict}) {
    EXPECT_FALSE(WriteMayHaveBeenApplied(With(code, "refused", SendOutcome::kAnswered)))
        << StatusCodeName(code);
  }
}

// The texts the router once matched prove nothing by themselves, and their
// absence takes nothing away.
TEST(WriteMayHaveBeenApplied, MessageTextIsIgnored) {
  const std::vector<std::string> texts = {
      "rpc channel to 127.0.0.1:1 is waiting to reconnect",
      "rpc connection to 127.0.0.1:1 failed: connect_failed",
      "rpc connection to 127.0.0.1:1 failed: eof",
      "peer went away",
      ""};
  for (SendOutcome outcome : {SendOutcome::kUnstated, SendOutcome::kNotSent,
                              SendOutcome::kSentOutcomeUnknown, SendOutcome::kAnswered}) {
    const bool expected = WriteMayHaveBeenApplied(With(StatusCode::kUnavailable, "", outcome));
    for (const std::string& text : texts) {
      EXPECT_EQ(WriteMayHaveBeenApplied(With(StatusCode::kUnavailable, text, outcome)), expected)
          << SendOutcomeName(outcome) << ": " << text;
    }
  }
}

}  // namespace
}  // namespace tessera::router
