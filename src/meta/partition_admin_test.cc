// Goal: the autoadmin lease grants one holder at a time and moves only after expiry.
#include "meta/partition_admin.h"

#include <gtest/gtest.h>

namespace tessera::meta {
namespace {

pb::AutoadminLease Lease(uint32_t holder, uint64_t epoch, uint64_t expires) {
  pb::AutoadminLease l;
  l.set_holder(holder);
  l.set_epoch(epoch);
  l.set_expires_unix_ms(expires);
  return l;
}

struct LeaseCase {
  const char* name;
  std::optional<pb::AutoadminLease> stored;
  uint32_t holder;
  uint64_t now;
  bool granted;
  uint32_t want_holder;
  uint64_t want_epoch;
  uint64_t want_expires;
};

TEST(DecideLease, Table) {
  const uint32_t kDuration = 3'000;
  const LeaseCase cases[] = {
      {"first grant", std::nullopt, 301, 10'000, true, 301, 1, 13'000},
      {"holder renews early", Lease(301, 4, 12'000), 301, 10'000, true, 301, 4, 13'000},
      {"holder renews after expiry keeps its epoch", Lease(301, 4, 9'000), 301, 10'000, true, 301,
       4, 13'000},
      {"renewal never shortens", Lease(301, 4, 20'000), 301, 10'000, true, 301, 4, 20'000},
      {"other holder waits while valid", Lease(301, 4, 10'001), 302, 10'000, false, 301, 4, 10'001},
      {"other holder takes over at expiry", Lease(301, 4, 10'000), 302, 10'000, true, 302, 5,
       13'000},
      {"other holder takes over after expiry", Lease(301, 4, 5'000), 302, 10'000, true, 302, 5,
       13'000},
  };
  for (const LeaseCase& c : cases) {
    const LeaseDecision d = DecideLease(c.stored, c.holder, kDuration, c.now);
    EXPECT_EQ(d.granted, c.granted) << c.name;
    EXPECT_EQ(d.write, c.granted) << c.name;
    EXPECT_EQ(d.lease.holder(), c.want_holder) << c.name;
    EXPECT_EQ(d.lease.epoch(), c.want_epoch) << c.name;
    EXPECT_EQ(d.lease.expires_unix_ms(), c.want_expires) << c.name;
  }
}

}  // namespace
}  // namespace tessera::meta
