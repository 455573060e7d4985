#include "experiment/report_html.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "experiment/result_files.h"

namespace tessera::experiment {
namespace {

constexpr char kStyle[] = R"(
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.3em; padding: .5em .7em; border-radius: 4px; }
h1.pass { background: #e3f4e1; border-left: 6px solid #2e7d32; }
h1.fail { background: #fbe3e1; border-left: 6px solid #c62828; }
h2 { font-size: 1.1em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.pass { color: #2e7d32; font-weight: bold; }
td.fail { color: #c62828; font-weight: bold; }
pre { background: #f5f5f5; padding: .5em .7em; overflow-x: auto; white-space: pre-wrap; }
figure { margin: 1em 0; }
figure svg { display: block; max-width: 100%; height: auto; }
p.notice { background: #fff4d6; border: 1px solid #e0b84c; padding: .6em .8em; }
)";

std::string Fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string Command(const pb::ExperimentVerdict& v) {
  if (!v.command().empty()) return v.command();
  return "tessera experiment run FILE --seed " + std::to_string(v.seed()) + " --duration " +
         std::to_string(v.duration_s());
}

void Checkers(const ReportInput& in, std::ostream& h) {
  h << "<h2>Checkers</h2>\n<table id=\"checkers\">\n<tr><th>checker</th><th>result</th>"
       "<th>summary</th></tr>\n";
  for (const pb::CheckerResult& c : in.verdict.checkers()) {
    h << "<tr><td>" << HtmlEscape(c.name()) << "</td><td class=\"" << (c.passed() ? "pass" : "fail")
      << "\">" << (c.passed() ? "pass" : "FAIL") << "</td><td><pre>" << HtmlEscape(c.summary())
      << "</pre></td></tr>\n";
  }
  h << "</table>\n";
}

void Availability(const ReportInput& in, std::ostream& h) {
  h << "<h2>Availability per fault window</h2>\n"
       "<p>Operations by invocation time; latency of the successful ones.</p>\n"
       "<p>\"After 1 s\": the operations invoked from a fault's first second on; \"p99 / "
       "steady\": the p99 outside faults over the p99 before the first fault.</p>\n"
       "<table id=\"availability\">\n<tr><th>window</th><th>ops</th><th>ok</th><th>ok share</th>"
       "<th>ok after 1 s</th><th>longest write gap</th><th>p50</th><th>p99</th>"
       "<th>p99 / steady</th></tr>\n";
  for (const pb::AvailabilityWindow& w : in.verdict.windows()) {
    const bool calm = w.label() == "outside faults";
    h << "<tr><td>" << HtmlEscape(w.label()) << "</td><td class=\"num\">" << w.ops()
      << "</td><td class=\"num\">" << w.ok() << "</td><td class=\"num\">"
      << Fixed(100.0 * w.ok_share(), 1) << " %</td><td class=\"num\">"
      << (calm ? std::string("-") : Fixed(100.0 * w.ok_share_after_first_s(), 1) + " %")
      << "</td><td class=\"num\">"
      << Fixed(static_cast<double>(w.longest_write_gap_ms()) / 1000.0, 1)
      << " s</td><td class=\"num\">" << Fixed(w.latency_ms_p50(), 1) << " ms</td><td class=\"num\">"
      << Fixed(w.latency_ms_p99(), 1) << " ms</td><td class=\"num\">"
      << (calm && w.p99_over_steady() > 0 ? Fixed(w.p99_over_steady(), 2) + "x" : std::string("-"))
      << "</td></tr>\n";
  }
  h << "</table>\n";
}

void Plots(const std::vector<DrawnPlot>& plots, std::ostream& h) {
  h << "<h2>Plots</h2>\n";
  for (const DrawnPlot& p : plots) {
    h << "<figure id=\"plot-" << HtmlEscape(p.id) << "\" class=\"plot\">\n<figcaption>"
      << HtmlEscape(p.title) << "</figcaption>\n";
    if (p.svg.empty()) {
      h << "<p class=\"notice\">Plot not drawn: " << HtmlEscape(p.error)
        << ". Install gnuplot and run <code>tessera experiment report DIR</code> to draw it.</p>\n";
    } else {
      h << p.svg << "\n";
    }
    h << "</figure>\n";
  }
}

void Layout(const ReportInput& in, std::ostream& h) {
  h << "<h2>Layout</h2>\n";
  if (in.processes.empty()) {
    h << "<p>No layout recorded.</p>\n";
    return;
  }
  h << "<table id=\"layout\">\n<tr><th>process</th><th>role</th><th>AZ</th></tr>\n";
  for (const ReportProcess& p : in.processes) {
    h << "<tr><td>" << HtmlEscape(p.name) << "</td><td>" << HtmlEscape(p.role) << "</td><td>"
      << HtmlEscape(p.az) << "</td></tr>\n";
  }
  h << "</table>\n";
}

}  // namespace

void PrintReportWritten(const Result<WrittenReport>& report, std::ostream& out) {
  if (!report.ok()) {
    out << "report: not written: " << report.status().ToString() << "\n";
    return;
  }
  out << "report: " << report->path << "\n";
  if (report->plots_drawn < report->plots) {
    out << "report: " << report->plots - report->plots_drawn << " of " << report->plots
        << " plots not drawn: " << report->notice << "\n";
  }
}

std::string HtmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string RenderReport(const ReportInput& in, const std::vector<DrawnPlot>& plots) {
  const pb::ExperimentVerdict& v = in.verdict;
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
    << HtmlEscape(v.experiment()) << " seed " << v.seed() << ": " << (v.passed() ? "PASS" : "FAIL")
    << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  h << "<h1 id=\"verdict\" class=\"" << (v.passed() ? "pass" : "fail") << "\">"
    << HtmlEscape(VerdictLine(v)) << "</h1>\n";
  h << "<p>Seed <b>" << v.seed() << "</b>, " << v.duration_s()
    << " s of workload. Run it again (same schedule):</p>\n<pre id=\"command\">"
    << HtmlEscape(Command(v)) << "</pre>\n";
  if (v.notes_size() > 0) {
    h << "<h2>Notes</h2>\n<ul>\n";
    for (const std::string& n : v.notes()) h << "<li>" << HtmlEscape(n) << "</li>\n";
    h << "</ul>\n";
  }
  Checkers(in, h);
  Availability(in, h);
  Plots(plots, h);
  Layout(in, h);
  h << "<h2>Files</h2>\n<p>In this directory: <code>history.jsonl</code> (every operation), "
       "<code>faults.jsonl</code> (every fault), <code>verdict.json</code>, "
       "<code>cluster.log</code>.";
  for (const std::string& n : in.notes) h << " " << HtmlEscape(n) << ".";
  h << "</p>\n</body>\n</html>\n";
  return h.str();
}

Result<WrittenReport> WriteReport(const std::string& dir) {
  auto in = LoadReportInput(dir);
  if (!in.ok()) return in.status();
  const std::vector<DrawnPlot> plots = DrawPlots(*in);
  WrittenReport written;
  written.path = dir + "/" + kReportFile;
  written.plots = plots.size();
  for (const DrawnPlot& p : plots) {
    if (!p.svg.empty()) {
      ++written.plots_drawn;
    } else if (written.notice.empty()) {
      written.notice = p.error;
    }
  }
  std::ofstream out(written.path, std::ios::trunc);
  out << RenderReport(*in, plots);
  out.flush();
  if (!out) return Status::IOError(written.path + ": cannot write");
  return written;
}

}  // namespace tessera::experiment
