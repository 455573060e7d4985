// ReadCharge: one read's capacity charge on a storage node
// (docs/admission.md, "On the storage nodes"), for kv.get, kv.scan,
// s3.get and s3.list alike.
//
// Contract:
//  1. Admit takes the read's minimum (ReadUnits(0, consistency)) from the
//     partition's budgets; a refusal took nothing and is
//     ThroughputExceeded naming the partition.
//  2. Exactly one of Served or Failed follows an admitted read: Served
//     charges the rest, by the bytes the read returned (taking only what
//     the budgets hold: never owed); Failed returns the units.
//
// Thread safety: a value; KvAdmission's methods may be called from any
// thread.
#pragma once

#include <cstdint>

#include "admission/capacity_units.h"
#include "common/result.h"
#include "node/kv_admission.h"
#include "tessera/kv.pb.h"

namespace tessera::node {

// The capacity refusal of a request of partition `group_id`; `kind` is
// "read" or "write".
Status ThroughputExceeded(uint64_t group_id, const char* kind);

admission::ReadConsistency ReadConsistencyOf(pb::Consistency consistency);

class ReadCharge {
 public:
  static Result<ReadCharge> Admit(KvAdmission& admission, uint64_t group_id,
                                  pb::Consistency consistency);

  void Served(uint64_t bytes) const;
  void Failed() const;

 private:
  ReadCharge(KvAdmission& admission, uint64_t group_id, admission::ReadConsistency consistency,
             admission::Admission admitted)
      : admission_(&admission), group_id_(group_id), consistency_(consistency), admitted_(admitted) {}

  KvAdmission* admission_;
  uint64_t group_id_;
  admission::ReadConsistency consistency_;
  admission::Admission admitted_;
};

}  // namespace tessera::node
