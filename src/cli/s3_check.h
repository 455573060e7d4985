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

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/cluster_session.h"
#include "common/result.h"

namespace tessera::cli {

// What the check found (the counts above).
struct S3CheckReport {
  uint64_t referenced_blobs = 0;
  uint64_t copies[4] = {0, 0, 0, 0};  // referenced blobs with 0, 1, 2, 3+ copies on their slot's replicas
  uint64_t under_replicated = 0;      // referenced blobs with fewer copies than their slot's replicas
  uint64_t stray_files = 0;  // referenced blobs' files on nodes outside their slot's replicas
  uint64_t unreferenced_files = 0;
  uint64_t pending_gc_records = 0;
  uint64_t pending_gc_blobs = 0;
  std::vector<std::string> unlisted;  // nodes skipped: down, and holding no slot
  std::vector<std::string> problems;  // at most limits::kS3CheckProblemsListedMax
  bool healthy = true;
};

// The check without printing; the cluster's errors when it could not look.
Result<S3CheckReport> CheckS3Blobs(ClusterSession& session);

// OK when healthy; FailedPrecondition-like Status (Conflict) with a summary
// when not; the cluster's errors when it could not look (a node or a
// partition unreachable). The report goes to `out` either way.
Status RunS3Check(ClusterSession& session, bool json, std::ostream& out);

}  // namespace tessera::cli
