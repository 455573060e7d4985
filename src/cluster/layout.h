// The layout of a local cluster (cluster/*.textproto): loading, validation,
// and a human-readable plan of what `tessera cluster up` starts.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "common/result.h"
#include "tessera/cluster.pb.h"

namespace tessera::cluster {

// Parses protobuf text format and validates it (see ValidateLayout).
Result<pb::ClusterLayout> ParseLayout(const std::string& text);
Result<pb::ClusterLayout> LoadLayout(const std::string& path);

// A layout is valid when: it names exactly three AZs or more, each storage
// node, metadata replica and router sits in a named AZ, names are unique,
// every host is a loopback address (127.0.0.0/8) or, in the layout a
// `--netns` experiment run writes, an address of 198.18.0.0/15 (inside the
// run's network namespaces), every port is unique and
// non-zero, every AZ has at least one storage node, and there is exactly one
// metadata replica per AZ, and every setting lies within its knob's bounds
// (layout_knobs.h).
Status ValidateLayout(const pb::ClusterLayout& layout);

// A table of processes, AZs and endpoints, one line each.
std::string DescribeLayout(const pb::ClusterLayout& layout);

}  // namespace tessera::cluster
