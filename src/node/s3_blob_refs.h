// The blob-reference reads a storage node serves for the partitions of the
// `_s3` table (docs/formats/blobs.md, "Garbage collection and repair"), as
// rpc handlers:
//   "s3.blob_refs"  S3BlobRefsRequest -> S3BlobRefsResponse  which of some
//                   blob ids an object's records still reference (the GC
//                   worker, the orphan sweeper)
//   "s3.blob_scan"  S3BlobScanRequest -> S3BlobScanResponse  one page of
//                   every blob a partition references, and its pending GC
//                   records (the checker, `tessera s3 check`)
// Both are STRONG reads under the group's leader lease and fail like kv.get:
// NotFound for a group not hosted here, NotLeader with a hint,
// WrongPartition (s3.blob_refs) for an owner outside the group's range (a
// split moved it: the group's records of it are gone, so its answer would
// say "unreferenced" for blobs the owner's new group may reference),
// InvalidArgument for a bad request (too many ids, a bad owner),
// Unavailable when the object has too many records to scan
// (limits::kBlobRefsScanRowsMax).
//
// Thread safety: handlers run on rpc threads; the reads run on the group's
// strand.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "node/partition_state_machine.h"
#include "node/replication_host.h"
#include "rpc/server.h"
#include "s3/model/listing.h"
#include "tessera/s3.pb.h"

namespace tessera::node {

// A partition's applied state as the S3 model's RecordSource (values are
// the records' serialized protobufs). Valid while `state` is.
class PartitionRecords : public s3::model::RecordSource {
 public:
  explicit PartitionRecords(const PartitionStateMachine& state) : state_(state) {}
  Result<std::vector<s3::model::RecordRow>> Scan(const std::string& start, const std::string& end,
                                                 size_t limit) const override;

 private:
  const PartitionStateMachine& state_;
};

// OK when `owner` (`B K`) lies below the range end a split stored for the
// partition (none: OK); else WrongPartition.
Status OwnerInRange(const PartitionStateMachine& state, const std::string& owner);
// The s3.blob_refs answer from the state of a partition (the handler's
// work on the group's strand); OwnerInRange checked first.
Result<pb::S3BlobRefsResponse> AnswerBlobRefs(const PartitionStateMachine& state,
                                              const pb::S3BlobRefsRequest& request);

// Serves `request` from the group hosted here (as the rpc would), calling
// `done` exactly once on the group's strand or at once. Lets a node ask its
// own groups without an rpc to itself.
void QueryBlobRefs(ReplicationHost& replication, const pb::S3BlobRefsRequest& request,
                   std::function<void(Result<pb::S3BlobRefsResponse>)> done);

std::vector<std::pair<std::string, rpc::Handler>> S3BlobRefHandlers(ReplicationHost* replication);

}  // namespace tessera::node
