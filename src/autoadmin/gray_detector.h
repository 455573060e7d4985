// GrayDetector: whether a reachable storage node is gray — up, but with a
// disk too slow or failing, or too slow to answer its peers, to lead or to
// take new replicas — from the disk reports of its admin.status answers
// (NodeStatus.disk) and its peers' timeouts to it (peer_timeouts.h), with
// hysteresis both ways (docs/autoadmin.md, "Health").
//
// A report is degraded when the synced log writes of its window have a p99
// above sync_p99_us (counted only with at least min_sync_samples of them:
// an idle disk says nothing), when more writes failed than in the previous
// report, when free space is below min_free_bytes, or when its peers
// accuse it (the reason the caller passes). The node turns gray
// once every report for degraded_for_ms was degraded, and healthy again
// once none was for as long: a single slow fsync does not flip it, nor does
// a single fast one while the disk stays slow.
//
// Thread safety: none; owned by the HealthTracker.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "autoadmin/peer_timeouts.h"
#include "tessera/cluster_rpc.pb.h"
#include "knobs/knobs.h"

namespace tessera::autoadmin {

struct GrayOptions {
  uint64_t sync_p99_us = uint64_t{knobs::kAutoadminGraySyncP99Ms.default_value} * 1000;
  uint64_t min_sync_samples = 20;
  uint64_t degraded_for_ms = knobs::kAutoadminDegradedForMs.default_value;
  uint64_t min_free_bytes = uint64_t{knobs::kAutoadminMinFreeMib.default_value} << 20;
  PeerTimeoutOptions peer_timeouts;  // applied by the HealthTracker
};

class GrayDetector {
 public:
  explicit GrayDetector(const GrayOptions& options) : options_(options) {}

  // One answered poll's disk report, and why its peers see it degraded
  // (PeerTimeoutReason; empty: they do not), at `now_ms` (monotonic).
  void OnReport(const pb::DiskHealthProto& disk, const std::string& peers_reason, uint64_t now_ms);

  bool gray() const { return gray_; }
  // How long it has been gray at `now_ms`; 0 while not gray.
  uint64_t GrayForMs(uint64_t now_ms) const;
  // Why the latest degraded report was degraded (kept while gray); empty
  // when no report was.
  const std::string& reason() const { return reason_; }

 private:
  // Empty when `disk` is not degraded.
  std::string DegradedReason(const pb::DiskHealthProto& disk) const;

  const GrayOptions options_;
  bool gray_ = false;
  uint64_t gray_since_ms_ = 0;
  // Since when every report contradicted `gray_`; none while they agree.
  std::optional<uint64_t> contradicted_since_ms_;
  std::optional<uint64_t> write_errors_;  // the previous report's count
  std::string reason_;
};

}  // namespace tessera::autoadmin
