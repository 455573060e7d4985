// Placement of a new S3 bucket: which partition of the S3 table holds it,
// and which bucket id inside that partition's range it gets.
//
// A weighted random choice among the partitions that can hold a whole
// bucket, favouring partitions holding fewer buckets and partitions whose
// nodes host fewer S3-table partitions:
//
//   weight(p) = 1 / (1 + buckets(p)) * 1 / (1 + excess(p))
//   excess(p) = max over p's replica nodes n of
//               (S3 partitions hosted by n) - (fewest hosted by any node of
//               the table)
//
// so on a balanced layout only the bucket counts matter. Then a uniformly
// random id in the partition's id range that is not in use (ids are never
// reused, see docs/formats/meta-keys.md).
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
};

// The S3 table's partitions (range order) as placement candidates, with the
// bucket counts of `bucket_ids` (live buckets). Partitions that cannot hold
// a whole bucket (BucketIdRange empty) are left out.
std::vector<BucketPartition> BucketPartitionsOf(const std::vector<pb::PartitionDescriptor>& table,
                                                const std::vector<uint64_t>& bucket_ids);

// weight(p) for each partition, as above (all > 0).
std::vector<double> PlacementWeights(const std::vector<BucketPartition>& partitions);

// The id of a new bucket: a partition by PlacementWeights, then a random id
// of its range for which `in_use` is false (at most
// limits::kS3RegistryPlacementAttemptsMax tries). Unavailable when there is
// no partition or every try hit an id in use.
Result<uint64_t> PlaceBucket(const std::vector<BucketPartition>& partitions,
                             const std::function<bool(uint64_t)>& in_use, std::mt19937_64& rng);

}  // namespace tessera::meta
