#include "autoadmin/placement_publisher.h"

#include <string_view>

#include "common/limits.h"

namespace tessera::autoadmin {
namespace {

constexpr std::string_view kS3Table = "_s3";

}  // namespace

std::optional<pb::SetPlacementWeightsRequest> PlacementWeightsOf(const ClusterView& view) {
  pb::SetPlacementWeightsRequest request;
  for (const auto& [id, group] : view.groups) {  // ascending group id
    if (group.descriptor.table() != kS3Table) continue;
    if (group.leader == 0) return std::nullopt;
    if (static_cast<size_t>(request.partitions_size()) >= limits::kPlacementWeightsPartitionsMax) {
      return std::nullopt;
    }
    pb::PartitionKeys* p = request.add_partitions();
    p->set_group_id(id);
    p->set_keys(group.state_keys);
  }
  if (request.partitions().empty()) return std::nullopt;
  return request;
}

std::optional<pb::SetPlacementWeightsRequest> PlacementPublisher::Due(const ClusterView& view,
                                                                      uint64_t now_ms) const {
  if (last_ms_ && now_ms - *last_ms_ < interval_ms_) return std::nullopt;
  return PlacementWeightsOf(view);
}

}  // namespace tessera::autoadmin
