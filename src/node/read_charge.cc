#include "node/read_charge.h"

#include <string>

namespace tessera::node {

Status ThroughputExceeded(uint64_t group_id, const char* kind) {
  return Status::ThroughputExceeded(std::string(kind) + " capacity of partition " +
                                    std::to_string(group_id) + " exceeded; back off and retry");
}

admission::ReadConsistency ReadConsistencyOf(pb::Consistency consistency) {
  return consistency == pb::CONSISTENCY_EVENTUAL ? admission::ReadConsistency::kEventual
                                                 : admission::ReadConsistency::kStrong;
}

Result<ReadCharge> ReadCharge::Admit(KvAdmission& admission, uint64_t group_id,
                                     pb::Consistency consistency) {
  const admission::ReadConsistency c = ReadConsistencyOf(consistency);
  const admission::Admission admitted =
      admission.Admit(group_id, admission::CapacityKind::kRead, admission::ReadUnits(0, c));
  if (!admitted.admitted) return ThroughputExceeded(group_id, "read");
  return ReadCharge(admission, group_id, c, admitted);
}

void ReadCharge::Served(uint64_t bytes) const {
  admission_->Charge(group_id_, admission::CapacityKind::kRead, admitted_,
                     admission::ReadUnits(bytes, consistency_) - admitted_.units);
}

void ReadCharge::Failed() const {
  admission_->Return(group_id_, admission::CapacityKind::kRead, admitted_);
}

}  // namespace tessera::node
