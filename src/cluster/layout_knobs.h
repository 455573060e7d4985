// The layout's settings messages (router_settings, node_settings,
// meta_settings, autoadmin_settings of ClusterLayout) checked against the
// knob registry (knobs/knobs.h): every set field is a knob, and its value
// lies within the knob's bounds.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "tessera/cluster.pb.h"

namespace tessera::cluster {

// The ClusterLayout fields holding settings messages ("node_settings", ...):
// every message-typed singular field whose type name ends in "Settings".
std::vector<std::string> LayoutSettingsFields();

// InvalidArgument naming the field, its knob, the value, the bounds and the
// unit when a set field lies outside its knob's bounds ("node_settings.
// gc_interval_ms = 4000000 is out of bounds for knob node.gc_interval_ms:
// 0..3600000 ms"), or when a set field has no knob (a bug: cluster.proto
// gained a setting without a knob). A scalar field without presence counts
// as set when it is not 0 (0 means: the default).
Status CheckLayoutKnobs(const pb::ClusterLayout& layout);

}  // namespace tessera::cluster
