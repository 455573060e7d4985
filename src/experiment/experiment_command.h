// `tessera experiment run|list|report` (docs/experiments.md).
//   run FILE [--out DIR] [--seed N] [--duration S] [--attach DIR] [--netns]
//            exit codes: experiment_run.h (a flag CLI11 refuses exits 2 too:
//            src/cli/main.cc)
//   list [--catalogue DIR]   the experiments of the catalogue (name,
//            duration, first line of the description); exit 2 when the
//            catalogue cannot be read
//   report DIR  the verdict and summary of a result directory; exit 0 when
//            the run passed, 1 when it failed, 2 when DIR holds no verdict
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace tessera::experiment {

struct ExperimentCommandArgs {
  std::string action;  // run | list | report
  std::string file;    // run: the experiment; report: the result directory
  std::string out_dir;
  std::optional<uint64_t> seed;
  uint32_t duration_s = 0;
  std::string attach_dir;
  bool netns = false;
  std::string catalogue_dir;  // list; empty: DefaultCatalogueDir()
  bool out_is_terminal = false;
};

// The shipped catalogue: BIN/../share/tessera/experiments when installed,
// else the source tree's experiments/.
std::string DefaultCatalogueDir();

int RunExperimentCommand(const ExperimentCommandArgs& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::experiment
