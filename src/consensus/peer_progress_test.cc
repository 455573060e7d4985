#include "consensus/peer_progress.h"

#include <gtest/gtest.h>

#include "common/limits.h"

namespace tessera::consensus {
namespace {

constexpr size_t kMiB = 1 << 20;

TEST(PeerProgressTest, ByteBoundClosesTheWindowUntilAcknowledged) {
  PeerProgress p;
  ASSERT_TRUE(p.WindowOpen());
  Slot last = 0;
  while (p.WindowOpen()) p.RecordSent(last += 1, kMiB);
  EXPECT_EQ(p.inflight_bytes(), limits::kInflightBytesPerPeerMax);
  EXPECT_EQ(p.next, limits::kInflightBytesPerPeerMax / kMiB + 1);
  p.Acknowledged(2);
  EXPECT_EQ(p.match, 2u);
  EXPECT_EQ(p.inflight_bytes(), limits::kInflightBytesPerPeerMax - 2 * kMiB);
  EXPECT_TRUE(p.WindowOpen());
}

TEST(PeerProgressTest, OneAcceptIsAlwaysAllowedWhateverItsSize) {
  PeerProgress p;
  p.RecordSent(1, 2 * limits::kInflightBytesPerPeerMax);
  EXPECT_FALSE(p.WindowOpen());
  p.Acknowledged(1);
  EXPECT_EQ(p.inflight_bytes(), 0u);
  EXPECT_TRUE(p.WindowOpen());
  EXPECT_EQ(p.next, 2u);
}

TEST(PeerProgressTest, SlotBoundHoldsForSmallEntries) {
  PeerProgress p;
  while (p.WindowOpen()) p.RecordSent(p.next, 1);
  EXPECT_EQ(p.next, limits::kInflightSlotsPerPeerMax + 1);
  EXPECT_EQ(p.inflight_bytes(), limits::kInflightSlotsPerPeerMax);
}

TEST(PeerProgressTest, RewindDropsTheAcceptsSentAgain) {
  PeerProgress p;
  p.RecordSent(4, 100);   // slots 1..4
  p.RecordSent(8, 200);   // 5..8
  p.RecordSent(12, 300);  // 9..12
  p.RewindTo(7);          // 7.. is sent again: the 5..8 record goes too
  EXPECT_EQ(p.next, 7u);
  EXPECT_EQ(p.inflight_bytes(), 100u);
  p.RecordSent(12, 250);
  EXPECT_EQ(p.inflight_bytes(), 350u);
  // A gap report may rewind below match: everything is sent again.
  p.Acknowledged(4);
  EXPECT_EQ(p.inflight_bytes(), 250u);
  p.RewindTo(3);
  EXPECT_EQ(p.next, 3u);
  EXPECT_EQ(p.match, 4u);
  EXPECT_EQ(p.inflight_bytes(), 0u);
}

TEST(PeerProgressTest, AcknowledgementKeepsAPartlyAcknowledgedAccept) {
  PeerProgress p;
  p.RecordSent(10, 1000);
  p.Acknowledged(5);  // half of it: the record stays until all of it is held
  EXPECT_EQ(p.inflight_bytes(), 1000u);
  EXPECT_EQ(p.next, 11u);
  p.Acknowledged(10);
  EXPECT_EQ(p.inflight_bytes(), 0u);
}

TEST(PeerProgressTest, SnapshotSkipsPastCoveredAccepts) {
  PeerProgress p;
  p.RecordSent(10, 1000);
  p.RecordSent(20, 500);
  p.SkipThrough(15);
  EXPECT_EQ(p.next, 21u);
  EXPECT_EQ(p.inflight_bytes(), 500u);
  p.SkipThrough(30);
  EXPECT_EQ(p.next, 31u);
  EXPECT_EQ(p.inflight_bytes(), 0u);
}

}  // namespace
}  // namespace tessera::consensus
