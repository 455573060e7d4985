// The S3 object checker (s3_objects workloads, s3_workload.h).
//
//  1. Per key, PUT, DELETE, GET and HEAD are linearizable
//     (chaos/linearizability.h): each object is a register whose value is
//     the write id of the PUT that wrote it, absent before any PUT and
//     after a DELETE; a GET or HEAD returns the write id read from the body
//     or the x-amz-meta-write-id header, absence for a 404. So an
//     acknowledged write stays readable until overwritten or deleted, and
//     a write that failed with a definite error (OpOutcome::kFail) is never
//     visible (no operation of the history wrote what a read returns).
//     Unknown outcomes may take effect at any time after their invocation,
//     or never.
//  2. A read with an `anomaly` (a body that does not match its header, a
//     header that does not match the body) is corruption: the check fails.
//  3. Listings (ListObjectsV2 of a prefix, `key` = the prefix, `listed`):
//     no key twice; no key outside the prefix or that no PUT (acknowledged
//     or unknown) invoked before the list ended could have written (a
//     ghost); and every key whose last acknowledged PUT or DELETE completed
//     before the list began, was a PUT, and that no DELETE (acknowledged or
//     unknown) could have followed before the list ended, is listed.
//  4. Versions (kS3Version*, a versioned bucket; keyed by (key, version
//     id), apart from the registers of 1): a GET by id of a version an
//     acknowledged PUT created returns that PUT's write id; it may answer
//     404 only when a DELETE of that version by id (acknowledged or
//     unknown) was invoked before the GET completed, and must answer 404
//     once such a DELETE was acknowledged before the GET was invoked.
//  5. passed is false on any violation, when the linearizability search
//     ran out of its budget (inconclusive), and when no PUT was
//     acknowledged at all (a run that checked nothing does not pass).
//
// Thread safety: a pure function.
#pragma once

#include <cstdint>
#include <vector>

#include "experiment/history.h"
#include "tessera/experiment.pb.h"

namespace tessera::experiment {

// `step_budget`: per key, as chaos::CheckKvHistory (0: its default).
pb::CheckerResult CheckS3Objects(const std::vector<OpRecord>& ops, uint64_t step_budget);

}  // namespace tessera::experiment
