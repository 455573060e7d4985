// The cluster record: what `tessera cluster up` writes into the cluster
// directory about the cluster it starts, so that every later command given
// the same --dir (cluster, kv, s3) works on that cluster from any working
// directory, without --layout (docs/formats/cluster-dir.md, decision D70):
//   DIR/layout.textproto      a copy of the layout text `up` was started
//                             with; every process runs with this file, so a
//                             later edit of the source changes nothing
//   DIR/cluster_up.textproto  pb::ClusterUpRecord: the source's path and
//                             the settings `up` used; written last, so a
//                             directory holds a record exactly when it
//                             holds this file
//
// Contracts:
//   1. A directory with a record runs the recorded layout. A --layout that
//      parses to the same layout (compared as parsed messages, not as
//      paths or text) is accepted; any other is InvalidArgument naming both
//      files and what to do instead.
//   2. A directory without a record runs --layout, or DefaultLayoutPath()
//      when --layout is not given: never a path relative to the working
//      directory unless the user typed it.
//   3. `up` settings given on a later `up` must equal the recorded ones;
//      settings not given are the recorded ones (ChooseUpSettings).
//
// Thread safety: free functions over the file system; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "knobs/knobs.h"
#include "tessera/cluster.pb.h"

namespace tessera::cli {

inline constexpr char kRecordedLayoutFile[] = "layout.textproto";
inline constexpr char kUpRecordFile[] = "cluster_up.textproto";
// `cluster up --partitions` when neither given nor recorded.
inline constexpr uint32_t kDefaultKvPartitions = knobs::kClusterPartitions.default_value;

// The settings of `cluster up` that shape the cluster's tables.
struct UpSettings {
  uint32_t partitions = 0;  // 0: not given
  std::vector<std::string> kv_splits;
  std::vector<std::string> s3_splits;
};

// The layout a command runs with.
struct LayoutChoice {
  pb::ClusterLayout layout;
  // The file processes are started with: DIR/layout.textproto when the
  // directory holds a record, otherwise the given (or default) layout file.
  std::string path;
  // The file the layout came from originally (the record's source path, or
  // `path`), for messages.
  std::string source;
  bool recorded = false;
};

// The layout shipped with the binary (cluster/local.textproto): the
// installed copy next to the executable (BIN/../share/tessera/cluster/),
// else the source tree's it was built from. NotFound naming both places
// when neither exists.
Result<std::string> DefaultLayoutPath();

// The layout for `dir` and the --layout flag (empty: not given), by
// contracts 1 and 2. NotFound / InvalidArgument naming the file when a
// layout cannot be read or parsed; Corruption when the record cannot.
Result<LayoutChoice> ChooseLayout(const std::string& dir, const std::string& layout_flag);

// Records `choice` (not yet recorded) and `settings` in `dir`: copies the
// text of choice.path to DIR/layout.textproto, then writes
// DIR/cluster_up.textproto; each through a temporary file and a rename.
// On success `choice` names the copy (path) and is marked recorded.
Status RecordCluster(const std::string& dir, const UpSettings& settings, LayoutChoice& choice);

// The settings `up` runs with: with a record, the recorded ones, where a
// given setting that differs is InvalidArgument; without, `given` with
// kDefaultKvPartitions when partitions is 0.
Result<UpSettings> ChooseUpSettings(const std::string& dir, const UpSettings& given);

}  // namespace tessera::cli
