#include "meta/bucket_placement.h"

#include <algorithm>
#include <map>

#include "common/check.h"
#include "common/limits.h"
#include "meta/registry_keys.h"

namespace tessera::meta {

std::vector<BucketPartition> BucketPartitionsOf(const std::vector<pb::PartitionDescriptor>& table,
                                                const std::vector<uint64_t>& bucket_ids) {
  std::vector<BucketPartition> out;
  for (const pb::PartitionDescriptor& p : table) {
    auto range = BucketIdRange(p.start_key(), p.end_key());
    if (!range) continue;
    BucketPartition bp;
    bp.first_id = range->first;
    bp.last_id = range->second;
    bp.group_id = p.group_id();
    for (const pb::ReplicaPlacement& r : p.replicas()) bp.nodes.push_back(r.node_id());
    out.push_back(std::move(bp));
  }
  for (uint64_t id : bucket_ids) {
    // Ranges are disjoint and in order: the first whose last_id >= id.
    auto it = std::lower_bound(out.begin(), out.end(), id, [](const BucketPartition& p, uint64_t v) {
      return p.last_id < v;
    });
    if (it != out.end() && it->first_id <= id) ++it->buckets;
  }
  return out;
}

bool UsePublishedKeys(const pb::PlacementWeights& published, uint64_t now_unix_ms, uint64_t max_age_ms,
                      std::vector<BucketPartition>& partitions) {
  const uint64_t written = published.written_unix_ms();
  if (written == 0 || (now_unix_ms > written && now_unix_ms - written > max_age_ms)) return false;
  std::map<uint64_t, uint64_t> keys;
  for (const pb::PartitionKeys& p : published.partitions()) keys[p.group_id()] = p.keys();
  for (const BucketPartition& p : partitions) {
    if (keys.count(p.group_id) == 0) return false;
  }
  for (BucketPartition& p : partitions) p.keys = keys.at(p.group_id);
  return true;
}

std::vector<double> PlacementWeights(const std::vector<BucketPartition>& partitions) {
  std::map<uint32_t, size_t> hosted;  // node -> S3-table partitions it hosts
  for (const BucketPartition& p : partitions) {
    for (uint32_t n : p.nodes) ++hosted[n];
  }
  size_t fewest = SIZE_MAX;
  for (const auto& [node, count] : hosted) fewest = std::min(fewest, count);
  std::vector<double> weights;
  for (const BucketPartition& p : partitions) {
    size_t excess = 0;
    for (uint32_t n : p.nodes) excess = std::max(excess, hosted[n] - fewest);
    weights.push_back(1.0 / (1.0 + static_cast<double>(p.keys) + static_cast<double>(p.buckets)) /
                      (1.0 + static_cast<double>(excess)));
  }
  return weights;
}

Result<uint64_t> PlaceBucket(const std::vector<BucketPartition>& partitions,
                             const std::function<bool(uint64_t)>& in_use, std::mt19937_64& rng) {
  if (partitions.empty()) {
    return Status::Unavailable("the S3 table has no partition that can hold a bucket");
  }
  const std::vector<double> weights = PlacementWeights(partitions);
  std::discrete_distribution<size_t> choose(weights.begin(), weights.end());
  const BucketPartition& p = partitions[choose(rng)];
  TESSERA_CHECK(p.first_id >= 1 && p.first_id <= p.last_id);
  std::uniform_int_distribution<uint64_t> id_in(p.first_id, p.last_id);
  for (int attempt = 0; attempt < limits::kS3RegistryPlacementAttemptsMax; ++attempt) {
    const uint64_t id = id_in(rng);
    if (!in_use(id)) return id;
  }
  return Status::Unavailable("no free bucket id found in partition [" +
                             std::to_string(p.first_id) + ", " + std::to_string(p.last_id) + "]");
}

}  // namespace tessera::meta
