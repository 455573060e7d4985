// The result directory of a run (docs/experiments.md):
//   history.jsonl   every operation: invoke and completion lines (history.h)
//   faults.jsonl    start and end of every fault, and the final heal
//   verdict.json    pb::ExperimentVerdict: checkers, availability windows
//   cluster.log     what starting, healing and stopping the cluster printed
//   layout.textproto the layout the fresh cluster ran (free ports)
// Every JSON document is protobuf's JSON mapping of the message named in
// proto/tessera/experiment.proto, with the proto field names.
//
// Thread safety: FaultJournal from one thread; the functions are pure over
// their arguments and the files they touch.
#pragma once

#include <fstream>
#include <ostream>
#include <string>

#include "common/result.h"
#include "tessera/experiment.pb.h"

namespace tessera::experiment {

inline constexpr char kHistoryFile[] = "history.jsonl";
inline constexpr char kFaultsFile[] = "faults.jsonl";
inline constexpr char kVerdictFile[] = "verdict.json";

// Appends one line per FaultRecord to DIR/faults.jsonl, flushed at once so
// an interrupted run keeps what happened.
class FaultJournal {
 public:
  Status Open(const std::string& dir);
  void Add(const pb::FaultRecord& record);

 private:
  std::ofstream out_;
};

Status WriteVerdict(const pb::ExperimentVerdict& verdict, const std::string& dir);
// NotFound when DIR has no verdict.json; Corruption when it does not parse.
Result<pb::ExperimentVerdict> ReadVerdict(const std::string& dir);

// `text` as one shell word: unchanged when it holds only safe characters,
// else single-quoted.
std::string ShellWord(const std::string& text);

// The one-line verdict: "PASS NAME seed N, D s: X ops (A ok, B failed, C
// unknown)" or "FAIL ...".
std::string VerdictLine(const pb::ExperimentVerdict& verdict);

// The summary a person reads: the availability windows, one line per
// checker, and the one-line verdict last ("PASS ..." / "FAIL ...").
void PrintVerdict(const pb::ExperimentVerdict& verdict, const std::string& dir, std::ostream& out);

}  // namespace tessera::experiment
