// What the queue shaper (queue_shaper.h) decides for each packet it holds,
// as data: the draw of a packet's fate (lost, or released after a delay)
// and the bounded queue of packets waiting for their release time. Pure,
// so the shaping is tested without a kernel.
//
// Contract:
//  1. DelayDraw gives each packet, in the order asked, a fate from one
//     SplitMix64 stream seeded by the run: lost with probability
//     loss_percent / 100, else released after a delay uniform in
//     [delay_ms - jitter_ms, delay_ms + jitter_ms] (netem's rule for a
//     delay with a jitter and no distribution table), never below zero.
//     The same seed gives the same sequence of fates.
//  2. DelayQueue holds at most `capacity` packets. Push refuses (false) a
//     packet beyond that: the caller releases it at once. PopDue returns
//     the packets whose release time has come, earliest first, packets of
//     one release time in push order. Jitter may release a later packet
//     before an earlier one, as netem does.
//
// Thread safety: none; the shaper's one thread owns them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <queue>
#include <vector>

#include "experiment/netns_plan.h"

namespace tessera::experiment {

struct PacketFate {
  bool lost = false;
  int64_t delay_ns = 0;  // when !lost
};

class DelayDraw {
 public:
  DelayDraw(const NetnsShaping& shaping, uint64_t seed);
  PacketFate Next();

 private:
  int64_t delay_ns_;
  int64_t jitter_ns_;
  double loss_share_;
  uint64_t state_;
};

// One packet held: the queue (AZ) it came from and its id there.
struct HeldPacket {
  size_t queue = 0;
  uint32_t id = 0;
};

class DelayQueue {
 public:
  explicit DelayQueue(size_t capacity) : capacity_(capacity) {}

  bool Push(int64_t release_ns, HeldPacket packet);
  // Every packet whose release time is <= now_ns.
  std::vector<HeldPacket> PopDue(int64_t now_ns);
  // Every packet held, emptying the queue (release all at shutdown).
  std::vector<HeldPacket> PopAll();
  // The earliest release time held; nullopt when empty.
  std::optional<int64_t> NextRelease() const;
  size_t size() const { return heap_.size(); }

 private:
  struct Entry {
    int64_t release_ns;
    uint64_t order;  // push order, for ties
    HeldPacket packet;
    bool operator>(const Entry& o) const {
      return release_ns != o.release_ns ? release_ns > o.release_ns : order > o.order;
    }
  };
  size_t capacity_;
  uint64_t pushed_ = 0;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
};

}  // namespace tessera::experiment
