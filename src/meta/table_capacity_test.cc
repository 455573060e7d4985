// Goal: ValidateTableCapacity accepts exactly the capacities
// docs/admission.md allows (provisioned 1..kTableCapacityUnitsMax each,
// unset and on-demand without units) and names what is wrong otherwise.
#include "meta/table_capacity.h"

#include <gtest/gtest.h>

#include "common/limits.h"

namespace tessera::meta {
namespace {

pb::TableCapacity Capacity(pb::TableCapacity::Mode mode, uint64_t rcu, uint64_t wcu) {
  pb::TableCapacity c;
  c.set_mode(mode);
  c.set_rcu(rcu);
  c.set_wcu(wcu);
  return c;
}

TEST(TableCapacity, AcceptsWhatTheDocsAllow) {
  const uint64_t max = limits::kTableCapacityUnitsMax;
  EXPECT_TRUE(ValidateTableCapacity(Capacity(pb::TableCapacity::CAPACITY_UNSET, 0, 0)).ok());
  EXPECT_TRUE(ValidateTableCapacity(Capacity(pb::TableCapacity::CAPACITY_ON_DEMAND, 0, 0)).ok());
  EXPECT_TRUE(ValidateTableCapacity(Capacity(pb::TableCapacity::CAPACITY_PROVISIONED, 1, 1)).ok());
  EXPECT_TRUE(ValidateTableCapacity(Capacity(pb::TableCapacity::CAPACITY_PROVISIONED, max, max)).ok());
}

TEST(TableCapacity, RefusesTheRestByName) {
  const uint64_t max = limits::kTableCapacityUnitsMax;
  struct Row {
    pb::TableCapacity capacity;
    const char* names;
  };
  const Row rows[] = {
      {Capacity(pb::TableCapacity::CAPACITY_PROVISIONED, 0, 5), "rcu must be"},
      {Capacity(pb::TableCapacity::CAPACITY_PROVISIONED, 5, 0), "wcu must be"},
      {Capacity(pb::TableCapacity::CAPACITY_PROVISIONED, max + 1, 5), "rcu must be"},
      {Capacity(pb::TableCapacity::CAPACITY_ON_DEMAND, 5, 0), "only for a provisioned"},
      {Capacity(pb::TableCapacity::CAPACITY_UNSET, 0, 5), "only for a provisioned"},
      {Capacity(static_cast<pb::TableCapacity::Mode>(7), 0, 0), "unknown capacity mode"},
  };
  for (const Row& r : rows) {
    const Status s = ValidateTableCapacity(r.capacity);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << r.names;
    EXPECT_NE(s.message().find(r.names), std::string::npos) << s.message();
  }
}

TEST(TableCapacity, TextAndEquality) {
  EXPECT_EQ(CapacityText(Capacity(pb::TableCapacity::CAPACITY_PROVISIONED, 3, 4)), "provisioned rcu=3 wcu=4");
  EXPECT_EQ(CapacityText(Capacity(pb::TableCapacity::CAPACITY_ON_DEMAND, 0, 0)), "on-demand");
  EXPECT_EQ(CapacityText(pb::TableCapacity()), "unset");
  EXPECT_TRUE(SameCapacity(pb::TableCapacity(), Capacity(pb::TableCapacity::CAPACITY_UNSET, 0, 0)));
  EXPECT_FALSE(SameCapacity(Capacity(pb::TableCapacity::CAPACITY_PROVISIONED, 3, 4),
                            Capacity(pb::TableCapacity::CAPACITY_PROVISIONED, 3, 5)));
}

}  // namespace
}  // namespace tessera::meta
