// DIR/report.html: the page a person opens first after a run. One
// self-contained file (inline CSS and SVG; no script, no external link):
// the one-line verdict, the command that replays the run, the checkers,
// availability per fault window, the plots (report_plots.h), the layout's
// processes with their AZs, and any note.
//
// Contract:
//  1. RenderReport is pure; every text from the run is HTML-escaped.
//  2. A plot that could not be drawn (gnuplot missing or failing) shows a
//     notice saying why in its place; the page renders regardless.
//  3. WriteReport fails only when DIR holds no readable verdict.json or
//     report.html cannot be written; the verdict does not depend on it.
//
// Thread safety: pure apart from the files and the gnuplot subprocesses.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "common/result.h"
#include "experiment/report_data.h"
#include "experiment/report_plots.h"

namespace tessera::experiment {

inline constexpr char kReportFile[] = "report.html";

std::string RenderReport(const ReportInput& in, const std::vector<DrawnPlot>& plots);

struct WrittenReport {
  std::string path;
  size_t plots_drawn = 0;
  size_t plots = 0;
  std::string notice;  // the first plot's error, when some were not drawn
};

// Reads DIR's result files, draws the plots and writes DIR/report.html.
Result<WrittenReport> WriteReport(const std::string& dir);

// "report: DIR/report.html" (and the notice when plots were not drawn), or
// why the report could not be written.
void PrintReportWritten(const Result<WrittenReport>& report, std::ostream& out);

std::string HtmlEscape(const std::string& text);

}  // namespace tessera::experiment
