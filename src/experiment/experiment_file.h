// The experiment file (protobuf text of pb::Experiment,
// proto/tessera/experiment.proto): loading and validation. Every field is
// checked against experiment_limits.h and the layout it names, so a run
// never starts on a file it would fail on halfway.
//
// Thread safety: pure functions over their arguments and the file system.
#pragma once

#include <string>

#include "common/result.h"
#include "tessera/cluster.pb.h"
#include "tessera/experiment.pb.h"

namespace tessera::experiment {

struct LoadedExperiment {
  pb::Experiment spec;
  std::string path;         // the experiment file as given
  std::string layout_path;  // spec.layout resolved against the file's directory
  // The layout the experiment runs: the file's, with the experiment's
  // router_settings and node_settings merged over it.
  pb::ClusterLayout layout;
};

// Reads, parses and validates the experiment at `path` and the layout it
// names. InvalidArgument (or NotFound for a missing file) with a message
// that names the file and the offending field.
Result<LoadedExperiment> LoadExperiment(const std::string& path);

// The checks LoadExperiment applies, given the parsed layout: name, duration,
// recovery, workloads, checkers and every fault step (kind, target in the
// layout, times inside the duration, slow_ms). InvalidArgument naming the
// field.
Status ValidateExperiment(const pb::Experiment& spec, const pb::ClusterLayout& layout);

// The effective duration: `duration_override_s` when non-zero (checked
// against kDurationSMax), else the file's.
Result<uint32_t> EffectiveDuration(const pb::Experiment& spec, uint32_t duration_override_s);

}  // namespace tessera::experiment
