// The S3 reads a storage node serves for the partitions of the `_s3` table
// (docs/formats/s3-keys.md), as rpc handlers:
//   "s3.list"   S3ListRequest  -> S3ListResponse   one partition's part of a
//                                                   bucket listing
//   "s3.usage"  S3UsageRequest -> BucketUsage      this partition's usage
//                                                   record of a bucket
// Both read under the group's lease when strong (the listing's consistency
// field; usage is always strong) and fail like kv.get: NotFound for a group
// not hosted here, NotLeader with a hint, InvalidArgument for a bad request.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "node/replication_host.h"
#include "rpc/server.h"

namespace tessera::node {

std::vector<std::pair<std::string, rpc::Handler>> S3ReadHandlers(ReplicationHost* replication);

}  // namespace tessera::node
