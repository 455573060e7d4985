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
