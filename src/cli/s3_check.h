// `tessera s3 check [--json]`: the blob checker (issue 5 "Space"). Once the
// GC and the repairer have run, the blob files on disk must match exactly
// the blobs the `_s3` records reference:
//  * references: every `_s3` partition's object records (heads, version
//    records, part records; "s3.blob_scan" on the partition's leader), and
//    its pending GC records;
//  * files: every storage node's blobs ("blob.list" over all slots).
// It prints the counts — referenced blobs, referenced blobs by number of
// copies (3/2/1/0), unreferenced blob files, pending GC records — and a
// bounded list of problems. Healthy: every referenced blob has a copy on
// min(3, nodes) nodes, no unreferenced file, no pending GC record.
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
