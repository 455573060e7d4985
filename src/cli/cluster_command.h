// `tessera cluster ...`: launch, supervise, inspect and inject faults into a
// local three-AZ cluster described by a layout file, with all its state
// (data, logs, pids, secret, credentials) in one cluster directory.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/cluster_lifecycle.h"
#include "common/result.h"
#include "knobs/knobs.h"

namespace tessera::cli {

struct ClusterCommandArgs {
  // up | plan | down | status | kill | stop | resume | restart | partition |
  // heal | slow-disk | full-disk | clock | digest | drain | add-node
  std::string action;
  std::string layout_path;         // --layout; empty: not given (cli/cluster_record.h)
  std::string dir;
  bool detach = false;            // up: return once the cluster is ready
  // up: partitions of the default table "kv"; 0: not given (the recorded
  // value, else kDefaultKvPartitions).
  uint32_t partitions = 0;
  // up: split points of "kv" instead of `partitions` even ranges of the
  // byte space (keys of one shape, "k000123", fall into one even range).
  std::vector<std::string> kv_splits;
  std::vector<std::string> targets;  // process names or AZs, per action
  uint32_t slow_ms = 0;           // slow-disk
  int64_t clock_offset_ms = 0;    // clock: wall-clock offset (0 clears)
  int32_t clock_skew_ppm = 0;     // clock: monotonic rate skew (0 clears)
  bool one_way = false;           // partition: only targets[0] -> targets[1]
  bool json = false;              // status: JSON (pb::ClusterStatusReport) instead of text
  // up: extra split points of the S3 table, each "BUCKET_ID:OBJECT_KEY"
  // (tests that need one bucket spread over chosen partitions).
  std::vector<std::string> s3_splits;
  // Any action: the process whose identity the calls carry; empty: the
  // operator's (ClusterSession::set_caller).
  std::string caller;
  bool drain_undo = false;        // drain: stop draining the targets
  bool drain_no_wait = false;     // drain: return once meta recorded it
  uint32_t drain_timeout_s = knobs::kClusterDrainTimeoutS.default_value; // drain: how long to wait for the replicas to leave
  std::string add_az;             // add-node: the new node's AZ
  std::string add_host;           // add-node: empty: the AZ's nodes' host
  uint32_t add_peer_port = 0;     // add-node: 0: the next free port
  uint32_t add_http_port = 0;     // add-node: 0: the next free port
};

// S3TableSplitPointsWith, CheckKvSplitPoints: cli/cluster_lifecycle.h.

// Returns the process exit code; prints to `out` / `err`.
int RunClusterCommand(const ClusterCommandArgs& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
