// SimNetwork: the fate of each message between two replicas: lost, delayed
// (and thereby reordered), duplicated, or blocked by a partition or a gray
// link. Directed links, so partitions may be asymmetric. Faults compose:
// every partition or gray failure that covers a link is counted, and the
// link is whole again only when all of them ended.
//
// Thread safety: none; owned by the simulation.
#pragma once

#include <cstdint>
#include <vector>

#include "consensus/options.h"
#include "sim/prng.h"

namespace tessera::sim {

using consensus::ReplicaId;
using consensus::TimeUs;

struct NetworkParams {
  uint32_t loss_ppm = 0;
  uint32_t duplicate_ppm = 0;
  TimeUs delay_min_us = 200;
  TimeUs delay_jitter_us = 0;  // uniform extra delay: reorders messages
  uint32_t spike_ppm = 0;      // a message delayed by up to spike_max_us
  TimeUs spike_max_us = 0;
};

class SimNetwork {
 public:
  // Replica ids 1..replicas.
  explicit SimNetwork(uint32_t replicas);

  void set_params(const NetworkParams& params) { params_ = params; }
  const NetworkParams& params() const { return params_; }

  void Block(ReplicaId from, ReplicaId to) { ++Link(from, to).blocks; }
  void Unblock(ReplicaId from, ReplicaId to) { --Link(from, to).blocks; }
  // A gray link loses loss_ppm of its messages on top of the base loss.
  void AddGray(ReplicaId from, ReplicaId to, uint32_t loss_ppm);
  void RemoveGray(ReplicaId from, ReplicaId to, uint32_t loss_ppm);
  bool blocked(ReplicaId from, ReplicaId to) const { return Link(from, to).blocks > 0; }
  // Ends every partition and gray failure.
  void HealLinks();

  // Appends the delivery delays of a message sent now on from -> to: none
  // (lost), one, or two (duplicated).
  void Route(ReplicaId from, ReplicaId to, Prng& prng, std::vector<TimeUs>* delays) const;

 private:
  struct LinkState {
    int blocks = 0;
    uint32_t gray_loss_ppm = 0;
  };
  LinkState& Link(ReplicaId from, ReplicaId to) { return links_[from * stride_ + to]; }
  const LinkState& Link(ReplicaId from, ReplicaId to) const { return links_[from * stride_ + to]; }
  TimeUs SampleDelay(Prng& prng) const;

  uint32_t stride_;
  std::vector<LinkState> links_;
  NetworkParams params_;
};

}  // namespace tessera::sim
