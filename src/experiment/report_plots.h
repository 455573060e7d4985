// The plots of the HTML report, drawn by gnuplot (gnuplot.h) as SVG:
//   latency     every operation's latency over time (log y), ok / fail /
//               cas refused / unknown distinguished, the fault windows shaded
//   throughput  successful operations per second by operation label (a
//               refused compare-and-set counts, as in availability.h)
//   errors      failed and unknown operations per second by label
//
// Contract:
//  1. PlotSpecs is pure: the gnuplot script and the data files of each plot
//     from the report input. Fault windows are the verdict's availability
//     windows other than "outside faults".
//  2. The latency plot draws at most kPlotPointsMax points per outcome:
//     beyond that every k-th operation (in completion order), and its key
//     says so.
//  3. DrawPlots never fails as a whole: a plot gnuplot could not draw
//     carries its error instead of an SVG, and when gnuplot is missing
//     every plot carries the same notice. The SVGs are ready to inline
//     into one HTML page: no XML prolog, ids prefixed per plot.
//
// Thread safety: pure functions apart from DrawPlots' temporary directory.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "experiment/report_data.h"

namespace tessera::experiment {

inline constexpr size_t kPlotPointsMax = 20'000;

struct PlotSpec {
  std::string id;     // "latency", "throughput", "errors": names the SVG's ids
  std::string title;
  std::string script;  // gnuplot, writing SVG to stdout
  std::map<std::string, std::string> data_files;  // file name -> content
};

struct DrawnPlot {
  std::string id;
  std::string title;
  std::string svg;    // empty when not drawn
  std::string error;  // why not
};

std::vector<PlotSpec> PlotSpecs(const ReportInput& in);
std::vector<DrawnPlot> DrawPlots(const ReportInput& in);

// An SVG document as gnuplot writes it, made fit to inline: everything
// before "<svg" dropped, ids and references to them prefixed with
// `prefix` + "-". Empty when `svg` holds no <svg element.
std::string InlineSvg(const std::string& svg, const std::string& prefix);

}  // namespace tessera::experiment
