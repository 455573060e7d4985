// Workload: what experiment_run drives for every workload of an experiment
// file (register_workload.h, bank_workload.h, s3_workload.h). Each records
// its operations into the run's OpLog.
//
// Contract:
//  1. Start launches the clients and returns; Stop asks them to stop and
//     waits for the operations in flight (each ends within its timeout).
//  2. FinalReads runs after healing, once: the reads that show a lost
//     write, recorded with `after_heal` and client number `process`.
//
// Thread safety: Start, Stop and FinalReads from one thread.
#pragma once

#include <cstdint>

namespace tessera::experiment {

class Workload {
 public:
  virtual ~Workload() = default;
  virtual void Start() = 0;
  virtual void Stop() = 0;
  virtual void FinalReads(uint32_t process) = 0;
};

}  // namespace tessera::experiment
