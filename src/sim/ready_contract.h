// ReadyContract: checks that the consensus core keeps ready.h's promises
// to its host, batch by batch, for one incarnation of one replica (the
// production host hands each Ready to it through the testing seam
// GroupHostTestingOptions::on_ready before acting on it):
//   1. a Ready whose step 1 has something to persist has a persist_seq,
//      and persist_seqs ascend;
//   2. the entries to write ascend one slot at a time;
//   3. the promised ballot persisted never goes down;
//   4. committed entries ascend one slot at a time, across Readies, and a
//      snapshot to install is never behind them (the next committed slot
//      then follows its last_slot);
//   5. no message is addressed to the replica itself or to no one.
// The first violation is kept; later batches add nothing.
//
// Thread safety: none (the replica's strand).
#pragma once

#include <cstdint>
#include <string>

#include "consensus/ready.h"

namespace tessera::sim {

class ReadyContract {
 public:
  explicit ReadyContract(uint32_t self) : self_(self) {}
  // Checks one batch; returns the first violation so far (empty: none).
  const std::string& Check(const consensus::Ready& ready);
  const std::string& violation() const { return violation_; }
  uint64_t batches() const { return batches_; }

 private:
  std::string CheckPersist(const consensus::Ready& ready);
  std::string CheckApply(const consensus::Ready& ready);
  std::string CheckMessages(const consensus::Ready& ready) const;

  const uint32_t self_;
  uint64_t batches_ = 0;
  uint64_t last_persist_seq_ = 0;
  uint64_t promised_round_ = 0;
  uint32_t promised_replica_ = 0;
  uint64_t last_committed_ = 0;  // 0: none seen in this incarnation yet
  std::string violation_;
};

}  // namespace tessera::sim
