// The S3 reads a storage node serves for the partitions of the `_s3` table
// (docs/formats/s3-keys.md), as rpc handlers:
//   "s3.list"   S3ListRequest  -> S3ListResponse   one partition's part of a
//                                                   bucket listing
//   "s3.usage"  S3UsageRequest -> BucketUsage      this partition's usage
//                                                   record of a bucket
//   "s3.get"    S3GetRequest   -> S3GetResponse    one version of an object
//                                                   and, when asked, its
//                                                   inline bytes (ReadS3Object)
// s3.get and s3.list answer WrongPartition for an object, or a listing's
// end, outside the group's range (partition_range.h).
// All read under the group's lease when strong (the request's consistency
// field; usage is always strong) and fail like kv.get: NotFound for a group
// not hosted here, NotLeader with a hint, InvalidArgument for a bad request.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "node/replication_host.h"
#include "rpc/server.h"
#include "tessera/s3.pb.h"

namespace tessera::node {

std::vector<std::pair<std::string, rpc::Handler>> S3ReadHandlers(ReplicationHost* replication);

// What "s3.get" serves (s3::model::ReadObject): the head, the version
// record and the data record it needs are read in ONE state-reader
// callback on the group's executor, which is also where entries are
// applied, so they come from one applied state (no torn head/bytes pair).
// `done` runs exactly once, on the group's executor or (NotFound for a
// group not hosted here) on the caller's thread.
void ReadS3Object(ReplicationHost& replication, const pb::S3GetRequest& request,
                  std::function<void(Result<pb::S3GetResponse>)> done);

}  // namespace tessera::node
