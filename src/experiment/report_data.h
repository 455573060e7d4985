// What the HTML report of a run shows, read back from its result directory
// (result_files.h), so `tessera experiment report DIR` can draw it again
// from the files alone.
//
// Contract:
//  1. LoadReportInput needs DIR/verdict.json (NotFound without it,
//     Corruption when it does not parse); history.jsonl and
//     layout.textproto are optional (a run that never started its
//     workloads, a run attached to a cluster): their absence leaves
//     `ops` / `processes` empty and says so in `notes`.
//  2. `ops` holds one entry per completion line of history.jsonl, in file
//     order, at most kHistoryOpsMax; a line that does not parse is counted
//     in `notes`, never fatal.
//  3. The per-second series cover [0, duration_s) (the last second also
//     takes operations completing later, e.g. the final reads) and are
//     keyed by OpLabel.
//
// Thread safety: pure functions over their arguments and the files read.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "tessera/experiment.pb.h"

namespace tessera::experiment {

// One completed operation as the plots need it.
struct ReportOp {
  std::string label;  // OpLabel
  // ok | fail | info | refused (a cas whose condition did not hold: the
  // history's fail with condition_failed, ok for the availability checker)
  std::string outcome;
  uint64_t invoke_us = 0;
  uint64_t complete_us = 0;
};

struct ReportProcess {
  std::string name;
  std::string role;  // node | meta | router | autoadmin
  std::string az;
};

struct ReportInput {
  std::string dir;
  pb::ExperimentVerdict verdict;
  std::vector<ReportOp> ops;
  std::vector<ReportProcess> processes;
  std::vector<std::string> notes;  // what could not be read
};

// "read-strong", "read-eventual", "write", "cas" (any other op as written).
std::string OpLabel(const pb::HistoryRecord& record);

Result<ReportInput> LoadReportInput(const std::string& dir);

// Operations per second by label: series[label][s] counts the operations of
// that label completing in second s whose outcome is in `outcomes`
// ("ok"+"refused", or "fail"+"info"). Every series has max(duration_s, 1) entries.
std::map<std::string, std::vector<uint64_t>> PerSecond(const std::vector<ReportOp>& ops,
                                                       uint32_t duration_s,
                                                       const std::vector<std::string>& outcomes);

}  // namespace tessera::experiment
