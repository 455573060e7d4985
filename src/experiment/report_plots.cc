#include "experiment/report_plots.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiment/gnuplot.h"

namespace tessera::experiment {
namespace {

constexpr auto kGnuplotTimeout = std::chrono::seconds(60);
constexpr char kTerminal[] =
    "set terminal svg size 960,380 font 'sans,11' background rgb 'white'\n"
    "set output\n"
    "set grid lc rgb '#dddddd'\n"
    "set key outside right top\n";

// gnuplot's single-quoted string: a quote is doubled.
std::string Quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string FaultShading(const ReportInput& in) {
  std::ostringstream s;
  int n = 1;
  for (const pb::AvailabilityWindow& w : in.verdict.windows()) {
    if (w.label() == "outside faults" || w.end_us() <= w.start_us()) continue;
    char line[200];
    std::snprintf(line, sizeof line,
                  "set object %d rect from %.3f, graph 0 to %.3f, graph 1 behind "
                  "fc rgb '#f4c7c3' fs solid 0.5 noborder\n",
                  n++, w.start_us() / 1e6, w.end_us() / 1e6);
    s << line;
  }
  return s.str();
}

bool HasFaults(const ReportInput& in) {
  return std::any_of(in.verdict.windows().begin(), in.verdict.windows().end(),
                     [](const pb::AvailabilityWindow& w) { return w.label() != "outside faults"; });
}

std::string XRange(const ReportInput& in) {
  uint64_t end_us = uint64_t{in.verdict.duration_s()} * 1'000'000;
  for (const ReportOp& op : in.ops) end_us = std::max(end_us, op.complete_us);
  char line[64];
  std::snprintf(line, sizeof line, "set xrange [0:%.1f]\n", std::max(end_us / 1e6, 1.0));
  return line;
}

PlotSpec LatencySpec(const ReportInput& in) {
  PlotSpec p{"latency", "Latency of every operation (by invocation time)", "", {}};
  struct Series {
    const char* outcome;
    const char* title;
    const char* style;
  };
  const Series series[] = {
      {"ok", "ok", "points pt 7 ps 0.25 lc rgb '#1f77b4'"},
      {"fail", "fail", "points pt 2 ps 0.5 lc rgb '#d62728'"},
      {"refused", "cas refused", "points pt 7 ps 0.25 lc rgb '#2ca02c'"},
      {"info", "unknown", "points pt 6 ps 0.5 lc rgb '#ff7f0e'"},
  };
  std::vector<std::string> plots;
  for (const Series& s : series) {
    size_t count = 0;
    for (const ReportOp& op : in.ops) count += op.outcome == s.outcome;
    if (count == 0) continue;
    const size_t every = (count + kPlotPointsMax - 1) / kPlotPointsMax;
    std::ostringstream data;
    size_t seen = 0;
    for (const ReportOp& op : in.ops) {
      if (op.outcome != s.outcome || seen++ % every != 0) continue;
      char line[64];
      // Log scale: a latency under a microsecond is drawn at 0.001 ms.
      std::snprintf(line, sizeof line, "%.6f %.3f\n", op.invoke_us / 1e6,
                    std::max(op.complete_us - std::min(op.invoke_us, op.complete_us), uint64_t{1}) /
                        1e3);
      data << line;
    }
    const std::string file = std::string("latency-") + s.outcome + ".dat";
    p.data_files[file] = data.str();
    std::string title = std::string(s.title) + " (" + std::to_string(count) + ")";
    if (every > 1) title += ", every " + std::to_string(every) + "th";
    plots.push_back(Quoted(file) + " using 1:2 with " + s.style + " title " + Quoted(title));
  }
  if (HasFaults(in)) {
    plots.push_back("NaN with boxes fs solid 0.5 noborder fc rgb '#f4c7c3' title 'fault'");
  }
  if (plots.empty()) plots.push_back("NaN title 'no operations'");
  std::ostringstream s;
  s << kTerminal << "set logscale y\nset format y '%g'\n"
    << "set xlabel 'time since the workloads started (s)'\nset ylabel 'latency (ms)'\n"
    << XRange(in) << FaultShading(in) << "plot ";
  for (size_t i = 0; i < plots.size(); ++i) s << (i ? ", \\\n     " : "") << plots[i];
  s << "\n";
  p.script = s.str();
  return p;
}

// Operations per second by label, one column per label.
PlotSpec RateSpec(const ReportInput& in, const std::string& id, const std::string& title,
                  const std::vector<std::string>& outcomes, const std::string& ylabel) {
  PlotSpec p{id, title, "", {}};
  const auto series = PerSecond(in.ops, in.verdict.duration_s(), outcomes);
  std::ostringstream data;
  const size_t seconds = series.empty() ? 0 : series.begin()->second.size();
  for (size_t t = 0; t < seconds; ++t) {
    data << t + 0.5;
    for (const auto& [label, counts] : series) data << " " << counts[t];
    data << "\n";
  }
  const std::string file = id + ".dat";
  p.data_files[file] = data.str();
  std::vector<std::string> plots;
  int column = 2;
  for (const auto& [label, counts] : series) {
    plots.push_back(Quoted(file) + " using 1:" + std::to_string(column++) +
                    " with linespoints pt 7 ps 0.4 lw 1.5 title " + Quoted(label));
  }
  if (HasFaults(in)) {
    plots.push_back("NaN with boxes fs solid 0.5 noborder fc rgb '#f4c7c3' title 'fault'");
  }
  if (plots.empty()) plots.push_back("NaN title 'no operations'");
  std::ostringstream s;
  s << kTerminal << "set xlabel 'time since the workloads started (s)'\nset ylabel "
    << Quoted(ylabel) << "\nset yrange [0:*]\n" << XRange(in) << FaultShading(in) << "plot ";
  for (size_t i = 0; i < plots.size(); ++i) s << (i ? ", \\\n     " : "") << plots[i];
  s << "\n";
  p.script = s.str();
  return p;
}

// A fresh private directory under TMPDIR, removed when the holder goes.
class TempDir {
 public:
  TempDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tessera-report-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

DrawnPlot Draw(const PlotSpec& spec) {
  DrawnPlot out{spec.id, spec.title, "", ""};
  TempDir dir;
  if (dir.path().empty()) {
    out.error = "cannot create a temporary directory for gnuplot";
    return out;
  }
  for (const auto& [name, content] : spec.data_files) {
    std::ofstream f(dir.path() + "/" + name, std::ios::trunc);
    f << content;
    if (!f.flush()) {
      out.error = "cannot write " + name + " for gnuplot";
      return out;
    }
  }
  auto svg = RunGnuplot(spec.script, dir.path(), kGnuplotTimeout);
  if (!svg.ok()) {
    out.error = svg.status().message();
    return out;
  }
  out.svg = InlineSvg(*svg, spec.id);
  if (out.svg.empty()) out.error = "gnuplot wrote no SVG";
  return out;
}

void ReplaceAll(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

}  // namespace

std::vector<PlotSpec> PlotSpecs(const ReportInput& in) {
  return {LatencySpec(in),
          RateSpec(in, "throughput",
                   "Successful operations per second, by kind (a refused compare-and-set counts)",
                   {"ok", "refused"}, "operations/s"),
          RateSpec(in, "errors", "Failed and unknown operations per second, by kind",
                   {"fail", "info"}, "errors/s")};
}

std::vector<DrawnPlot> DrawPlots(const ReportInput& in) {
  std::vector<DrawnPlot> out;
  const auto gnuplot = FindGnuplot();
  for (const PlotSpec& spec : PlotSpecs(in)) {
    if (!gnuplot.ok()) {
      out.push_back({spec.id, spec.title, "", gnuplot.status().message()});
    } else {
      out.push_back(Draw(spec));
    }
  }
  return out;
}

std::string InlineSvg(const std::string& svg, const std::string& prefix) {
  const size_t start = svg.find("<svg");
  if (start == std::string::npos) return "";
  std::string out = svg.substr(start);
  for (const char* quote : {"'", "\""}) {
    ReplaceAll(out, std::string("id=") + quote, std::string("id=") + quote + prefix + "-");
    ReplaceAll(out, std::string("href=") + quote + "#",
               std::string("href=") + quote + "#" + prefix + "-");
  }
  ReplaceAll(out, "url(#", "url(#" + prefix + "-");
  return out;
}

}  // namespace tessera::experiment
