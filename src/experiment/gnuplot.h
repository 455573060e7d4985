// Runs gnuplot (Debian's gnuplot-nox) as a subprocess on a script and
// returns what it wrote to its standard output: the report's plots are
// scripts ending in `set terminal svg`, so the output is one SVG document.
//
// Contract:
//  1. NotFound when no `gnuplot` executable is on PATH (the report then
//     shows a notice instead of its plots); the message says which package
//     installs it.
//  2. The script and the data files it names live in `work_dir`, which the
//     caller creates and removes; gnuplot runs with `work_dir` as its
//     current directory, so scripts name data files relatively.
//  3. Bounded: gnuplot is killed after `timeout`, and its output is read up
//     to kGnuplotOutputMax bytes (more is an error, not a truncated plot).
//     A non-zero exit is an IOError carrying the end of its stderr.
//
// Thread safety: pure apart from the subprocess and the files of
// `work_dir`; may run on any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "common/result.h"

namespace tessera::experiment {

inline constexpr size_t kGnuplotOutputMax = 64 << 20;

// The gnuplot executable on PATH; NotFound otherwise.
Result<std::string> FindGnuplot();

Result<std::string> RunGnuplot(const std::string& script, const std::string& work_dir,
                               std::chrono::milliseconds timeout);

}  // namespace tessera::experiment
