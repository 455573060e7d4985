// `tessera s3 check [--json]`: the blob checker (issue 5 "Space"). Once the
// GC and the repairer have run, the blob files on disk must match exactly
// the blobs the `_s3` records reference:
//  * references: every `_s3` partition's object records (heads, version
//    records, part records; "s3.blob_scan" on the partition's leader), and
//    its pending GC records;
//  * files: every storage node's blobs ("blob.list" over all slots).
//  * the slot map in force: the layout's with meta's blob slot assignments
//    (meta.blob_slots), which name each blob's replicas.
// It prints the counts — referenced blobs, referenced blobs by number of
// copies on their slot's replicas (3/2/1/0), stray files (a referenced
// blob's copy on a node no longer among its slot's replicas, not yet handed
// off), unreferenced blob files, pending GC records — and a bounded list of
// problems. Healthy: every referenced blob has a copy on each of its slot's
// replicas, no stray or unreferenced file, no pending GC record. A node that
// does not answer is an error, unless it holds no slot any more (a lost
// node whose slots the autoadmin moved): it is then skipped, and said so.
#pragma once

#include <iosfwd>

#include "cli/cluster_session.h"
#include "common/result.h"

namespace tessera::cli {

// OK when healthy; FailedPrecondition-like Status (Conflict) with a summary
// when not; the cluster's errors when it could not look (a node or a
// partition unreachable). The report goes to `out` either way.
Status RunS3Check(ClusterSession& session, bool json, std::ostream& out);

}  // namespace tessera::cli
