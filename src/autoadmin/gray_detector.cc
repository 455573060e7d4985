#include "autoadmin/gray_detector.h"

namespace tessera::autoadmin {

std::string GrayDetector::DegradedReason(const pb::DiskHealthProto& disk) const {
  if (write_errors_ && disk.write_errors() > *write_errors_) {
    return std::to_string(disk.write_errors() - *write_errors_) + " synced writes failed";
  }
  if (disk.sync_samples() >= options_.min_sync_samples && disk.sync_p99_us() > options_.sync_p99_us) {
    return "synced write p99 " + std::to_string(disk.sync_p99_us() / 1000) + " ms over " +
           std::to_string(disk.sync_samples()) + " writes (bound " +
           std::to_string(options_.sync_p99_us / 1000) + " ms)";
  }
  if (disk.total_bytes() > 0 && disk.free_bytes() < options_.min_free_bytes) {
    return std::to_string(disk.free_bytes() >> 20) + " MiB free (bound " +
           std::to_string(options_.min_free_bytes >> 20) + " MiB)";
  }
  return std::string();
}

void GrayDetector::OnReport(const pb::DiskHealthProto& disk, const std::string& peers_reason,
                            uint64_t now_ms) {
  std::string reason = DegradedReason(disk);
  if (reason.empty()) reason = peers_reason;
  write_errors_ = disk.write_errors();
  const bool degraded = !reason.empty();
  if (degraded) reason_ = reason;
  if (degraded == gray_) {
    contradicted_since_ms_.reset();
    return;
  }
  if (!contradicted_since_ms_) contradicted_since_ms_ = now_ms;
  if (now_ms - *contradicted_since_ms_ < options_.degraded_for_ms) return;
  gray_ = degraded;
  gray_since_ms_ = now_ms;
  contradicted_since_ms_.reset();
  if (!gray_) reason_.clear();
}

uint64_t GrayDetector::GrayForMs(uint64_t now_ms) const {
  return gray_ && now_ms > gray_since_ms_ ? now_ms - gray_since_ms_ : 0;
}

}  // namespace tessera::autoadmin
