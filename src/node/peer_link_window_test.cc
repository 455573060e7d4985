// Goal: per peer, the calls and timeouts of the last window, bounded.
#include "node/peer_link_window.h"

#include <gtest/gtest.h>

namespace tessera::node {
namespace {

TEST(PeerLinkWindow, CountsCallsAndTimeoutsWithinTheWindow) {
  PeerLinkWindow w(10'000);
  for (uint64_t t = 0; t < 5; ++t) w.Record(2, /*timed_out=*/t % 2 == 0, 1'000 * t);
  w.Record(3, false, 4'000);
  auto report = w.Report(4'000);
  ASSERT_EQ(report.size(), 2u);
  EXPECT_EQ(report[0].node_id(), 2u);
  EXPECT_EQ(report[0].calls(), 5u);
  EXPECT_EQ(report[0].timeouts(), 3u);
  EXPECT_EQ(report[0].window_ms(), 10'000u);
  EXPECT_EQ(report[1].node_id(), 3u);
  EXPECT_EQ(report[1].timeouts(), 0u);
  // Later, the old outcomes fall out of the window; a peer with none left
  // is not reported.
  report = w.Report(13'500);
  ASSERT_EQ(report.size(), 2u);
  EXPECT_EQ(report[0].calls(), 1u);  // only the call at 4 s
  EXPECT_EQ(report[0].timeouts(), 1u);
  EXPECT_TRUE(w.Report(15'000).empty());
}

TEST(PeerLinkWindow, KeepsAtMostItsBounds) {
  PeerLinkWindow w(1'000'000);
  for (uint64_t t = 0; t < 1'000; ++t) w.Record(2, false, t);
  EXPECT_EQ(w.Report(1'000)[0].calls(), PeerLinkWindow::kOutcomesPerPeerMax);
  for (uint32_t peer = 10; peer < 10 + 2 * PeerLinkWindow::kPeersMax; ++peer) w.Record(peer, true, 5);
  EXPECT_EQ(w.Report(1'000).size(), PeerLinkWindow::kPeersMax);
}

}  // namespace
}  // namespace tessera::node
