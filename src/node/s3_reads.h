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
// s3.get and s3.list are charged to the `_s3` partition's read capacity
// like kv.get and kv.scan (read_charge.h): s3.get by the version record it
// read (not the object's inline bytes), s3.list by the keys and common
// prefixes it returned; refused ones answer ThroughputExceeded. Without a
// capacity set on the `_s3` table (the default) nothing is charged.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "node/kv_admission.h"
#include "node/replication_host.h"
#include "rpc/server.h"
#include "tessera/s3.pb.h"

namespace tessera::node {

// `record_load(group, key)` is called for every s3.get and s3.list admitted
// (a leader's load split finder, load_split_finder.h), with the key
// S3LoadKey (partition_range.h) names.
using S3LoadRecorder = std::function<void(uint64_t group_id, std::string_view key)>;
std::vector<std::pair<std::string, rpc::Handler>> S3ReadHandlers(ReplicationHost* replication,
                                                                 KvAdmission* admission,
                                                                 S3LoadRecorder record_load);

// What "s3.get" serves (s3::model::ReadObject): the head, the version
// record and the data record it needs are read in ONE state-reader
// callback on the group's executor, which is also where entries are
// applied, so they come from one applied state (no torn head/bytes pair).
// `done` runs exactly once, on the group's executor or (NotFound for a
// group not hosted here) on the caller's thread.
void ReadS3Object(ReplicationHost& replication, const pb::S3GetRequest& request,
                  std::function<void(Result<pb::S3GetResponse>)> done);

}  // namespace tessera::node
