#include "experiment/blob_check.h"

#include <string>

namespace tessera::experiment {

pb::CheckerResult JudgeBlobCheck(const Result<cli::S3CheckReport>& report) {
  pb::CheckerResult r;
  r.set_name(kBlobCheckName);
  if (!report.ok()) {
    r.set_passed(false);
    r.set_summary("the blob check could not look: " + report.status().ToString());
    return r;
  }
  const cli::S3CheckReport& c = *report;
  std::string summary = std::to_string(c.referenced_blobs) + " referenced blobs (copies 3=" +
                        std::to_string(c.copies[3]) + " 2=" + std::to_string(c.copies[2]) +
                        " 1=" + std::to_string(c.copies[1]) + " 0=" + std::to_string(c.copies[0]) +
                        "), " + std::to_string(c.unreferenced_files) + " unreferenced files, " +
                        std::to_string(c.stray_files) + " stray files, " +
                        std::to_string(c.pending_gc_records) + " pending GC records";
  r.set_passed(c.copies[0] == 0);
  if (c.copies[0] > 0) {
    summary = std::to_string(c.copies[0]) + " referenced blobs have no copy left: " + summary;
    for (const std::string& p : c.problems) {
      if (p.find(", 0 copies") != std::string::npos) {
        summary += "; first: " + p;
        break;
      }
    }
  } else if (c.healthy) {
    summary = "clean: " + summary;
  }
  r.set_summary(summary);
  return r;
}

pb::CheckerResult CheckBlobsAfterHeal(cli::ClusterSession& session) {
  return JudgeBlobCheck(cli::CheckS3Blobs(session));
}

}  // namespace tessera::experiment
