// NetnsNetwork: the network of one `--netns` experiment run (netns_plan.h
// says how it is wired), built, cut and taken down by running `ip` and
// `tc` (iproute2); the delay, jitter and loss between AZs come from netem,
// or where the kernel has none from the queue shaper (queue_shaper.h). Every step is logged as one line to the run's
// netns.log, which also records the drop counts of every cut.
//
// Lifetime: Create builds everything or nothing (a failed step takes down
// what was built); Teardown, also run by the destructor, deletes every
// namespace of the run. Processes still running in a namespace keep it
// alive: stop them first. A run that died without tearing down leaves
// namespaces named after its pid: RemoveStale, called by Create, deletes
// those of runs whose process is gone.
//
// Thread safety: none; the thread that drives the run calls it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>

#include "common/result.h"
#include "experiment/az_cutter.h"
#include "experiment/netns_plan.h"
#include "experiment/queue_shaper.h"

namespace tessera::experiment {

class NetnsNetwork final : public AzCutter {
 public:
  // Ok when this process may build the network: root, with `ip` and `tc`
  // installed. InvalidArgument saying what is missing otherwise.
  static Status CheckAvailable();

  // Removes what crashed runs left (namespaces tessera-PID-*, interfaces
  // tsnPID of a PID that no longer runs), one line each to `log`. A
  // namespace that still holds processes is kept and reported, with the
  // commands that remove it, to `log` and `err`.
  static void RemoveStale(std::ostream& log, std::ostream& err);

  // Builds the network for `layout` (its hosts as the layout file has
  // them) on a /24 of 198.18.0.0/15 that no route of the machine
  // overlaps. Shaping: netem; on a kernel without sch_netem the queue
  // shaper, its draws seeded by `seed`; when neither can run (no netem,
  // no iptables or nfnetlink_queue) the network is built anyway without
  // delay and shaping_missing() says why.
  static Result<std::unique_ptr<NetnsNetwork>> Create(const pb::ClusterLayout& layout,
                                                      const NetnsShaping& shaping, uint64_t seed,
                                                      std::ostream& log, std::ostream& err);
  ~NetnsNetwork() override;
  NetnsNetwork(const NetnsNetwork&) = delete;
  NetnsNetwork& operator=(const NetnsNetwork&) = delete;

  const NetnsPlan& plan() const { return plan_; }
  // Empty when the requested delay, jitter and loss are in force.
  const std::string& shaping_missing() const { return shaping_missing_; }
  // AZ -> /run/netns/NS: where the AZ's processes run.
  std::map<std::string, std::string> NamespacePaths() const;

  Status Cut(const AzCut& cut) override;
  // Logs the packets each cut dropped, then removes every cut.
  Status ClearCuts() override;

  // Stops the queue shaper (logging its counters), then deletes every
  // namespace of the run (and so every veth and the bridge). Idempotent;
  // the error names the namespaces that could not be deleted.
  Status Teardown();

 private:
  NetnsNetwork(NetnsPlan plan, std::ostream& log) : plan_(std::move(plan)), log_(log) {}
  Status Run(const NetnsCommand& command);
  Status ApplyCut(const NetnsAz& from);
  uint64_t DroppedPackets(const NetnsAz& az);
  // netem in every AZ, else the queue shaper; "" when in force, else why not.
  std::string Shape(const NetnsShaping& shaping, uint64_t seed, Status* error);
  std::string StartQueueShaper(const NetnsShaping& shaping, uint64_t seed, Status* error);

  NetnsPlan plan_;
  std::ostream& log_;
  std::string shaping_missing_;
  std::unique_ptr<QueueShaper> shaper_;  // when the kernel has no netem
  std::map<std::string, std::set<std::string>> cuts_;  // AZ -> addresses it drops packets to
  std::map<std::string, uint64_t> dropped_before_;      // AZ -> counter at the last clear
  bool torn_down_ = false;
};

}  // namespace tessera::experiment
