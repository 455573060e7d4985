// `tessera node --layout F --name N --dir D`: runs one storage node of a
// cluster layout in the foreground.
//
//  * identity: the process id of N in the layout (nodes 1..), its AZ and
//    ports (RPC on peer_port, metrics/health on http_port);
//  * cluster secret: the contents of D/secret (trailing whitespace ignored);
//  * store: D/data/N/rocksdb; log: D/logs/N.log;
//  * peers: every storage node of the layout;
//  * blob GC and sweeper (node/blob_gc.h, node/blob_maintenance.h): the
//    flags given, else the layout's node_settings, else the defaults;
//  * snapshot chunk size and log compaction of every group: the layout's
//    node_settings, else the defaults.
// SIGTERM or SIGINT stops it cleanly (groups stopped, store flushed, exit 0).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tessera::node {

struct NodeCommandArgs {
  std::string layout_path;
  std::string name;
  std::string dir;
  // Blob GC and sweeper; unset: the layout's node_settings, else the
  // knobs' defaults (knobs/knobs.h).
  std::optional<uint32_t> gc_interval_ms;
  std::optional<uint32_t> blob_sweep_interval_ms;
  std::optional<uint32_t> blob_min_age_s;
  std::optional<uint32_t> orphan_grace_s;
};

// Returns the process exit code: 0 after a clean shutdown, 1 when the node
// cannot start (bad layout, unknown name, no secret, port taken, store
// error); the reason goes to stderr and the log.
int RunNodeCommand(const NodeCommandArgs& args);

}  // namespace tessera::node
