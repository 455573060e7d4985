// SimTransport: the simulated network under production GroupHosts
// (docs/decisions.md D86, "Network"). A node::MessageSender that gives each
// message the fate SimNetwork draws for its link (lost, delayed and so
// reordered, duplicated, blocked by a partition or a gray link) and hands
// every copy that survives to the destination replica's GroupHost
// (GroupHost::Deliver) at the virtual instant it arrives, as a timer of the
// VirtualTimeLoop the hosts run on.
//
// Contract:
//  1. Send never blocks and never fails. A message whose sender or
//     destination is not attached when it is sent is lost; so is a copy
//     whose destination was detached before it arrived (the process died),
//     even when the replica was attached again since: each Attach is a new
//     incarnation, and copies on the way to the old one die with it.
//  2. Fates are drawn from one Prng seeded by `seed`, one draw sequence
//     per Send in Send order: the same sends in the same order get the same
//     deliveries at the same instants.
//  3. Copies arriving at one instant reach Deliver in (instant, send order)
//     order.
//
// Determinism: in the simulator every Send runs on the loop's owner thread
// (hosts send from their executor's tasks), so contract 2 makes a seed's
// deliveries replay exactly once the hosts' sends do.
//
// Thread safety: every method from any thread; mu_ guards every member.
// The loop and network must outlive the transport, and the transport every
// timer it posted (run or drop the loop's timers before destroying it).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "node/group_host_types.h"
#include "node/virtual_time_loop.h"
#include "sim/prng.h"
#include "sim/sim_network.h"

namespace tessera::sim {

struct SimTransportStats {
  uint64_t sent = 0;             // Send calls
  uint64_t lost = 0;             // lost on the link (SimNetwork) or to a detached replica
  uint64_t duplicated = 0;       // extra copies the link made
  uint64_t delivered = 0;        // copies handed to GroupHost::Deliver
  uint64_t lost_on_arrival = 0;  // copies whose destination was gone when they arrived
};

class SimTransport final : public node::MessageSender {
 public:
  SimTransport(node::VirtualTimeLoop* loop, SimNetwork* network, uint64_t seed);

  void Send(pb::Message message) override;
  // Hands an arriving copy to the replica; runs on the loop's owner thread.
  using DeliverFn = std::function<void(pb::Message)>;
  // Replica `id` receives through `deliver` from now on (a new incarnation:
  // see contract 1). The simulator passes its GroupHost's Deliver.
  void Attach(ReplicaId id, DeliverFn deliver);
  // Replica `id`'s process is gone: what it sends and what is on the way to
  // it is lost.
  void Detach(ReplicaId id);
  // Detaches every replica (and drops the DeliverFns, with the hosts they
  // hold).
  void Clear();
  SimTransportStats stats() const;

 private:
  struct Endpoint {
    DeliverFn deliver;
    uint64_t incarnation = 0;
  };
  void Arrive(ReplicaId to, uint64_t incarnation, const pb::Message& message);

  node::VirtualTimeLoop* const loop_;
  SimNetwork* const network_;
  mutable std::mutex mu_;  // guards every member below
  Prng prng_;
  uint64_t next_incarnation_ = 1;
  std::map<ReplicaId, Endpoint> endpoints_;
  std::vector<TimeUs> delays_;  // scratch of Send
  SimTransportStats stats_;
};

}  // namespace tessera::sim
