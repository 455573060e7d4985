#include "experiment/report_data.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <fstream>
#include <unordered_map>

#include "cluster/layout.h"
#include "cluster/process_table.h"
#include "experiment/experiment_limits.h"
#include "experiment/result_files.h"

namespace tessera::experiment {
namespace {

void LoadHistory(ReportInput& in) {
  const std::string path = in.dir + "/" + kHistoryFile;
  std::ifstream f(path);
  if (!f) {
    in.notes.push_back(std::string(kHistoryFile) + " is missing: no operations to plot");
    return;
  }
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  // Invocation times of the operations still open, by index (bounded by the
  // history's own bound: an invocation line per operation).
  std::unordered_map<uint64_t, uint64_t> invoked_at;
  uint64_t bad_lines = 0;
  std::string line;
  while (std::getline(f, line) && in.ops.size() < kHistoryOpsMax) {
    if (line.empty()) continue;
    pb::HistoryRecord r;
    if (!google::protobuf::util::JsonStringToMessage(line, &r, options).ok()) {
      ++bad_lines;
      continue;
    }
    if (r.type() == "invoke") {
      if (invoked_at.size() < kHistoryOpsMax) invoked_at[r.index()] = r.time_us();
      continue;
    }
    ReportOp op;
    op.label = OpLabel(r);
    op.outcome = r.type() == "fail" && r.condition_failed() ? "refused" : r.type();
    op.complete_us = r.time_us();
    auto it = invoked_at.find(r.index());
    op.invoke_us = it == invoked_at.end() ? r.time_us() : it->second;
    if (it != invoked_at.end()) invoked_at.erase(it);
    in.ops.push_back(std::move(op));
  }
  if (bad_lines > 0) {
    in.notes.push_back(std::to_string(bad_lines) + " lines of " + kHistoryFile +
                       " do not parse");
  }
}

void LoadProcesses(ReportInput& in) {
  const std::string path = in.dir + "/layout.textproto";
  auto layout = cluster::LoadLayout(path);
  if (!layout.ok()) {
    in.notes.push_back("layout.textproto is missing or invalid (a run attached to " +
                       (in.verdict.cluster_dir().empty() ? std::string("a running cluster")
                                                         : in.verdict.cluster_dir()) +
                       "?): no process list");
    return;
  }
  const cluster::ProcessTable table(*layout);
  for (const cluster::ProcessEntry& e : table.all()) {
    in.processes.push_back({e.name, cluster::ProcessRoleName(e.role), e.az});
  }
}

}  // namespace

std::string OpLabel(const pb::HistoryRecord& record) {
  if (record.consistency().empty()) return record.op();
  return record.op() + "-" + record.consistency();
}

Result<ReportInput> LoadReportInput(const std::string& dir) {
  auto verdict = ReadVerdict(dir);
  if (!verdict.ok()) return verdict.status();
  ReportInput in;
  in.dir = dir;
  in.verdict = std::move(verdict).value();
  LoadHistory(in);
  LoadProcesses(in);
  return in;
}

std::map<std::string, std::vector<uint64_t>> PerSecond(const std::vector<ReportOp>& ops,
                                                       uint32_t duration_s,
                                                       const std::vector<std::string>& outcomes) {
  const size_t seconds = std::max<uint32_t>(duration_s, 1);
  std::map<std::string, std::vector<uint64_t>> series;
  for (const ReportOp& op : ops) {
    auto& counts = series[op.label];
    if (counts.empty()) counts.assign(seconds, 0);
    if (std::find(outcomes.begin(), outcomes.end(), op.outcome) == outcomes.end()) continue;
    counts[std::min<uint64_t>(op.complete_us / 1'000'000, seconds - 1)]++;
  }
  return series;
}

}  // namespace tessera::experiment
