// Placement of a new S3 bucket: which partition of the S3 table holds it,
// and which bucket id inside that partition's range it gets.
//
// A weighted random choice among the partitions that can hold a whole
// bucket, favouring emptier partitions (fewer keys, fewer buckets) and
// partitions whose nodes host fewer S3-table partitions:
//
//   weight(p) = 1 / (1 + keys(p) + buckets(p)) * 1 / (1 + excess(p))
//   excess(p) = max over p's replica nodes n of
//               (S3 partitions hosted by n) - (fewest hosted by any node of
//               the table)
//
// keys(p) is the partition's live keys as the autoadmin last published
// them (meta a/placement_weights, every autoadmin placement_interval_ms;
// UsePublishedKeys), 0 for every partition while none are published or
// they are older than meta placement_weights_max_age_ms: placement then
// weighs bucket counts alone. Buckets count too, so buckets placed since
// the last publication (empty: no keys yet) spread over the emptiest
// partitions instead of all going to the one that looked emptiest. On a
// balanced layout the node excess is 0. Then a uniformly random id in the
// partition's id range that is not in use (ids are never reused, see
// docs/formats/meta-keys.md).
//
// Thread safety: pure functions; the RNG is the caller's (seed it for tests).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "common/result.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::meta {

struct BucketPartition {
  uint64_t first_id = 0;  // inclusive: ids whose every key lies in the partition
  uint64_t last_id = 0;   // inclusive
  size_t buckets = 0;     // live buckets whose id lies in [first_id, last_id]
  std::vector<uint32_t> nodes;  // the partition's replica nodes
  uint64_t group_id = 0;
  uint64_t keys = 0;  // published live keys (UsePublishedKeys); 0 when none
};

// The S3 table's partitions (range order) as placement candidates, with the
// bucket counts of `bucket_ids` (live buckets). Partitions that cannot hold
// a whole bucket (BucketIdRange empty) are left out.
std::vector<BucketPartition> BucketPartitionsOf(const std::vector<pb::PartitionDescriptor>& table,
                                                const std::vector<uint64_t>& bucket_ids);

// Sets each partition's keys from `published` when it was written at most
// `max_age_ms` before `now_unix_ms` (a record from a clock ahead counts as
// fresh) and names every partition's group; otherwise sets none. True
// when set. A partition split since the record was written (its child not
// named) makes the whole record unusable until the next one.
bool UsePublishedKeys(const pb::PlacementWeights& published, uint64_t now_unix_ms, uint64_t max_age_ms,
                      std::vector<BucketPartition>& partitions);

// weight(p) for each partition, as above (all > 0).
std::vector<double> PlacementWeights(const std::vector<BucketPartition>& partitions);

// The id of a new bucket: a partition by PlacementWeights, then a random id
// of its range for which `in_use` is false (at most
// limits::kS3RegistryPlacementAttemptsMax tries). Unavailable when there is
// no partition or every try hit an id in use.
Result<uint64_t> PlaceBucket(const std::vector<BucketPartition>& partitions,
                             const std::function<bool(uint64_t)>& in_use, std::mt19937_64& rng);

}  // namespace tessera::meta
