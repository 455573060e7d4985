// One run of an experiment, start to verdict: load and check the file,
// build the schedule from the seed, start a fresh cluster on free ports in
// the result directory (or attach to a running one), run the workloads and
// the nemesis together for the duration with a progress line once a
// second, heal everything, wait for recovery, read every hot key once
// more, run the checkers, write the result directory (result_files.h) and
// stop the cluster it started.
//
// Exit codes (RunExperiment's result):
//   0 every checker passed
//   1 a checker failed (or the run was interrupted)
//   2 bad input: the experiment file, its layout, --seed/--duration/--out
//   3 the run could not be carried out: the cluster did not start, the
//     result directory cannot be written
//
// Thread safety: one run per process (it handles SIGINT and SIGTERM:
// the run stops early, heals and cleans up).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace tessera::experiment {

inline constexpr int kExitPassed = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitRunFailed = 3;

struct RunOptions {
  std::string experiment_path;
  std::string out_dir;          // empty: a new directory under TMPDIR
  std::optional<uint64_t> seed; // none: a random seed, printed for replays
  uint32_t duration_s = 0;      // 0: the file's
  std::string attach_dir;       // a running cluster's directory; empty: a fresh one
  bool progress_rewrites_line = false;  // a terminal: one line rewritten with '\r'
  // Each AZ in its own network namespace, cuts in the kernel (netns_plan.h);
  // needs root (exit 2 otherwise), not with --attach.
  bool netns = false;
};

int RunExperiment(const RunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tessera::experiment
