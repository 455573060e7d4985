// Bucket placement weights (docs/formats/meta-keys.md, rule 17): every
// placement_interval_ms the active autoadmin publishes the live keys of
// every `_s3` partition, as its leader estimates them
// (GroupStatusProto.state_keys), to meta (meta.set_placement_weights,
// fenced by the lease epoch); the meta leader weighs new buckets by them
// (meta/bucket_placement.h).
//
// A round publishes only when every `_s3` partition of the view has a
// leader reporting: meta uses a record only when it names every partition,
// so a partial one would be useless. A round that cannot publish (or whose
// call fails) is retried the next round, not an interval later.
//
// Thread safety: a PlacementPublisher is used by the round thread only.
#pragma once

#include <cstdint>
#include <optional>

#include "autoadmin/cluster_view.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::autoadmin {

// The `_s3` partitions' keys by ascending group id (autoadmin_epoch unset);
// nullopt when the view holds no `_s3` partition, more than
// limits::kPlacementWeightsPartitionsMax, or one without a leader.
std::optional<pb::SetPlacementWeightsRequest> PlacementWeightsOf(const ClusterView& view);

class PlacementPublisher {
 public:
  explicit PlacementPublisher(uint64_t interval_ms) : interval_ms_(interval_ms) {}

  // What to publish this round: nullopt while the last publication is
  // younger than the interval, or when PlacementWeightsOf has nothing.
  std::optional<pb::SetPlacementWeightsRequest> Due(const ClusterView& view, uint64_t now_ms) const;
  // The publication of this round succeeded.
  void Published(uint64_t now_ms) { last_ms_ = now_ms; }

 private:
  const uint64_t interval_ms_;
  std::optional<uint64_t> last_ms_;
};

}  // namespace tessera::autoadmin
