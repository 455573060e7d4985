#include "node/disk_health.h"

#include <filesystem>
#include <system_error>

namespace tessera::node {

pb::DiskHealthProto ReadDiskHealth(const storage::NodeStore& store, const std::string& data_dir) {
  pb::DiskHealthProto disk;
  disk.set_window_ms(kDiskHealthWindowMs);
  const LatencyWindow::Summary sync = store.recent_sync_latency(uint64_t{kDiskHealthWindowMs} * 1000);
  disk.set_sync_samples(sync.samples);
  disk.set_sync_p99_us(sync.p99_us);
  disk.set_sync_max_us(sync.max_us);
  disk.set_write_errors(store.group_commit_stats().writes_failed);
  std::error_code error;
  const std::filesystem::space_info space = std::filesystem::space(data_dir, error);
  if (!error) {
    disk.set_free_bytes(space.available);
    disk.set_total_bytes(space.capacity);
  }
  return disk;
}

}  // namespace tessera::node
