// Goal: peers accuse a node only together: two at least, and a majority
// of those that call it.
#include "autoadmin/peer_timeouts.h"

#include <gtest/gtest.h>

namespace tessera::autoadmin {
namespace {

pb::PeerLinkProto Link(uint32_t to, uint64_t calls, uint64_t timeouts) {
  pb::PeerLinkProto l;
  l.set_node_id(to);
  l.set_window_ms(10'000);
  l.set_calls(calls);
  l.set_timeouts(timeouts);
  return l;
}

TEST(PeerTimeouts, Table) {
  struct Case {
    const char* name;
    PeerLinkReports reports;
    bool accused;  // node 1
  };
  const Case cases[] = {
      {"everybody answered", {{2, {Link(1, 10, 0)}}, {3, {Link(1, 10, 0)}}}, false},
      {"two of two time out", {{2, {Link(1, 10, 10)}}, {3, {Link(1, 10, 6)}}}, true},
      {"one bad link accuses nobody", {{2, {Link(1, 10, 10)}}, {3, {Link(1, 10, 0)}}}, false},
      {"two of four is no majority",
       {{2, {Link(1, 10, 10)}}, {3, {Link(1, 10, 10)}}, {4, {Link(1, 10, 0)}}, {5, {Link(1, 10, 1)}}},
       false},
      {"three of four", 
       {{2, {Link(1, 10, 10)}}, {3, {Link(1, 10, 10)}}, {4, {Link(1, 10, 5)}}, {5, {Link(1, 10, 1)}}},
       true},
      {"too few calls say nothing", {{2, {Link(1, 4, 4)}}, {3, {Link(1, 4, 4)}}}, false},
      {"its own report does not count", {{1, {Link(1, 10, 10)}}, {2, {Link(1, 10, 10)}}}, false},
      {"timeouts to others do not accuse it",
       {{2, {Link(3, 10, 10)}}, {4, {Link(3, 10, 10)}}, {3, {Link(1, 10, 0)}}}, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(!PeerTimeoutReason(1, c.reports, {}).empty(), c.accused) << c.name;
  }
  EXPECT_EQ(PeerTimeoutReason(1, cases[1].reports, {}),
            "2 of 2 peers saw >= 50 % of their calls to it time out");
  PeerTimeoutOptions off;
  off.timeout_percent = 0;
  EXPECT_TRUE(PeerTimeoutReason(1, cases[1].reports, off).empty());
}

}  // namespace
}  // namespace tessera::autoadmin
