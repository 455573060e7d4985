// The node's disk health as reported in admin.status (NodeStatus.disk), the
// autoadmin's input for gray-failure detection (docs/autoadmin.md,
// "Health"): the synced log writes of the last kDiskHealthWindowMs, the
// failed ones since start, and the data directory's free space.
#pragma once

#include <cstdint>
#include <string>

#include "storage/node_store.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::node {

inline constexpr uint32_t kDiskHealthWindowMs = 3'000;

// `data_dir`: a path on the file system the store writes to. A failure to
// read the free space leaves free_bytes and total_bytes at 0 (unknown).
pb::DiskHealthProto ReadDiskHealth(const storage::NodeStore& store, const std::string& data_dir);

}  // namespace tessera::node
