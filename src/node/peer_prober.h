// PeerProber: the measurement behind NodeStatus.peer_links. Every
// interval_ms, whatever the node's state (constant work), it calls
// `node.ping` on every other storage node of the current slot map with a
// deadline of timeout_ms, and records each call's outcome in a
// PeerLinkWindow: answered, or timed out. A call the channel refuses at
// once (the peer is unreachable and the channel waits out a reconnect
// backoff, or its queue is full) completes nothing and is not recorded:
// an unreachable peer is the autoadmin's own poll to judge; what this
// measures is a peer that takes calls and does not answer them in time
// (paused, overloaded, or cut off one way).
//
// At most one ping per peer is in flight (the next round skips a peer
// whose previous ping is pending), so a silent peer costs one pending call.
//
// Thread safety: Start/Stop from one owner thread; Report from any thread.
// The pool must outlive the prober; callbacks that run after Stop record
// into state they share ownership of.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/periodic_worker.h"
#include "rpc/channel_pool.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::node {

struct PeerProberOptions {
  uint32_t interval_ms = 1'000;
  uint32_t timeout_ms = 500;
  uint32_t window_ms = 10'000;
};

class PeerProber {
 public:
  // `peers` answers the storage nodes to probe (called every round; self
  // is skipped).
  PeerProber(rpc::ChannelPool& pool, uint32_t self_id,
             std::function<std::vector<uint32_t>()> peers, PeerProberOptions options);
  ~PeerProber();  // Stop
  PeerProber(const PeerProber&) = delete;
  PeerProber& operator=(const PeerProber&) = delete;

  void Start();
  void Stop();  // idempotent
  // Runs one round now (tests).
  void ProbeOnce();
  std::vector<pb::PeerLinkProto> Report() const;

 private:
  struct Shared;
  rpc::ChannelPool& pool_;
  const uint32_t self_id_;
  const std::function<std::vector<uint32_t>()> peers_;
  const PeerProberOptions options_;
  std::shared_ptr<Shared> shared_;
  PeriodicWorker worker_;
};

}  // namespace tessera::node
