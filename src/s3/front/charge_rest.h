// The second half of an S3 request's admission charge (s3_charge.h,
// contract 2): what a handler learns only while serving (a listing's keys,
// a completion's parts, a batch delete's keys) is charged to the bucket's
// share once known.
//
// Contract: takes only what the share holds; what it does not hold is
// forgiven, never owed (as the storage nodes charge the rest of a KV read).
// A bucket without a capacity, or a router without GAC, is not charged.
#pragma once

#include "admission/capacity_units.h"
#include "s3/front/object_index.h"
#include "s3/front/s3_call.h"

namespace tessera::s3::front {

void ChargeRest(const S3Call& call, const admission::S3Charge& rest);

// The rest of a listing's read units (objects, versions or uploads) once
// the page's keys and common prefixes are known (S3RestAfterListing).
void ChargeListed(const S3Call& call, const ListPage& page);

}  // namespace tessera::s3::front
