// Where the nemesis makes AZ cuts when it does not use the processes' admin
// RPC drop rules: a `--netns` run cuts in the kernel (netns_network.h).
//
// Thread safety: as the nemesis (one thread).
#pragma once

#include "common/result.h"
#include "experiment/schedule.h"

namespace tessera::experiment {

class AzCutter {
 public:
  virtual ~AzCutter() = default;
  // Drops every packet from `cut.from` to `cut.to` (and back unless
  // `cut.one_way`), added to the cuts in force. Idempotent.
  virtual Status Cut(const AzCut& cut) = 0;
  // Removes every cut in force.
  virtual Status ClearCuts() = 0;
};

}  // namespace tessera::experiment
