// QueueShaper: delay, jitter and loss between the AZs of a `--netns` run on
// a kernel without the netem qdisc. Each AZ's namespace sends the packets
// it addresses to another AZ into an NFQUEUE (iptables rules of
// netns_plan.h, QueueShapingCommands); the packets stay in the kernel, and
// this shaper, one thread of the experiment process, gives each its
// verdict: dropped at once (loss) or accepted once its delay has passed
// (delay_queue.h draws both from the run's seed). Why not netem, and why
// not a user-space switch: docs/decisions.md.
//
// Contract:
//  1. Start binds queue kNetnsShaperQueue in every namespace given (the
//     thread enters each with setns, so the netlink sockets belong to
//     those namespaces) before it returns; an error (no nfnetlink_queue,
//     a queue already bound) binds nothing.
//  2. Every packet queued gets exactly one verdict: lost, accepted when
//     its delay has passed, or accepted at once when kShaperHeldMax
//     packets are already held (counted as overflow, never dropped for
//     it). The kernel side is fail-open too: a full kernel queue, or no
//     shaper bound (the rules use --queue-bypass), passes packets
//     undelayed.
//  3. Stop (also the destructor) accepts every packet still held, then
//     unbinds; idempotent. Counters stay readable after it.
//
// Thread safety: Start, Stop and counters() from the run's thread; the
// shaper's own thread does the rest.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "experiment/netns_plan.h"

namespace tessera::experiment {

// At most this many packets held at once over all AZs (about 1 ms of a
// busy cluster's inter-AZ packets many times over).
inline constexpr size_t kShaperHeldMax = 16384;

struct ShaperCounters {
  uint64_t delayed = 0;   // accepted after their delay
  uint64_t lost = 0;      // dropped by the loss draw
  uint64_t overflow = 0;  // accepted undelayed: kShaperHeldMax held
};

class QueueShaper {
 public:
  // `namespace_paths`: /run/netns/NAME of each AZ.
  static Result<std::unique_ptr<QueueShaper>> Start(const std::vector<std::string>& namespace_paths,
                                                    const NetnsShaping& shaping, uint64_t seed);
  ~QueueShaper();
  QueueShaper(const QueueShaper&) = delete;
  QueueShaper& operator=(const QueueShaper&) = delete;

  void Stop();
  ShaperCounters counters() const;

 private:
  struct Impl;
  explicit QueueShaper(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
  std::thread thread_;
};

}  // namespace tessera::experiment
