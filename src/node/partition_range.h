// Whether a request's keys lie in a partition's range [start_key, end_key)
// (an empty end_key: unbounded). A node that serves a group only while the
// request's keys are in the group's range answers a request outside it
// without proposing or reading anything, so the router may re-resolve the
// key and resend it (docs/partition-splits.md).
//
// Which key of a request counts:
//   * a KV batch: every condition's and every write's key;
//   * an S3 op on an object: the object's prefix `B K` (all its records
//     share it, and splits fall only between objects, s3-keys.md rule 2);
//   * GcDoneOp: none (it edits the partition's own internal records,
//     which belong to the group that wrote them, s3-keys.md rule 3);
//   * a get: its key; a scan: its start and its end (ScanInRange).
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tessera/cluster_rpc.pb.h"
#include "tessera/kv.pb.h"
#include "tessera/s3.pb.h"

namespace tessera::node {

bool KeyInRange(const pb::PartitionDescriptor& partition, std::string_view key);
// A scan [start_key, end_key) (empty end: to the end of the group's range)
// may be served when it starts in the range and ends within it: a router
// whose route still names the parent's wider range asks up to the old end
// and would take the parent's last key for the end of that range.
bool ScanInRange(const pb::PartitionDescriptor& partition, const pb::KvScanRequest& scan);
bool CommandInRange(const pb::PartitionDescriptor& partition, const pb::KvCommand& command);
// The command a kv.write request proposes: its S3 op when set, else its batch.
bool WriteInRange(const pb::PartitionDescriptor& partition, const pb::KvWriteRequest& write);
// s3.get: the object's prefix. s3.list: its end bound (the listing starts
// at the group's first key of the prefix, but it must not end past the
// range, for the same reason as a scan).
bool S3GetInRange(const pb::PartitionDescriptor& partition, const pb::S3GetRequest& get);
bool S3ListInRange(const pb::PartitionDescriptor& partition, const pb::S3ListRequest& list);

// The key a leader's load split finder samples for an S3 request
// (load_split_finder.h), so that a split key it names is a split point the
// `_s3` table allows (split_key.h, invariant 2: `B K`, before every record
// of K): an op on an object and s3.get, the object's prefix `B K`;
// s3.list, the prefix of where it starts, `B` + the larger of its prefix and
// start_after (cut at a 0x00, which no object key holds). nullopt for ops on
// no object (a bucket's configuration, GC records): not sampled.
std::optional<std::string> S3LoadKey(const pb::S3Op& op);
std::string S3LoadKey(const pb::S3GetRequest& get);
std::string S3LoadKey(const pb::S3ListRequest& list);

}  // namespace tessera::node
