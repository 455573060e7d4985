// The blob check of a run with an s3_objects workload: `tessera s3 check`
// (cli/s3_check.h) run once the cluster is healed and recovered, as the
// checker result "s3-blobs".
//
// What fails it, and what is only reported: a referenced blob with no copy
// on any replica of its slot is lost data, whatever happens next: a
// failure. A referenced blob with fewer copies than replicas is repaired
// by the sweeper once its files are older than min_age_s (60 s), and an
// unreferenced file (an upload the fault cut off after its blob was
// written) is collected once older than orphan_grace_s (one hour): a run
// lasts less, so both are reported in the summary, not failed
// (docs/decisions.md). A check that cannot look (a partition or node
// unreachable after recovery) fails.
//
// Thread safety: none needed; the driver calls it once.
#pragma once

#include "cli/cluster_session.h"
#include "cli/s3_check.h"
#include "common/result.h"
#include "tessera/experiment.pb.h"

namespace tessera::experiment {

inline constexpr char kBlobCheckName[] = "s3-blobs";

// The verdict on a finished check (pure).
pb::CheckerResult JudgeBlobCheck(const Result<cli::S3CheckReport>& report);

// Runs the check on the session's cluster and judges it.
pb::CheckerResult CheckBlobsAfterHeal(cli::ClusterSession& session);

}  // namespace tessera::experiment
