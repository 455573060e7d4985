#include "experiment/result_files.h"

#include <google/protobuf/util/json_util.h>

#include <sstream>

#include "experiment/availability.h"

namespace tessera::experiment {
namespace {

google::protobuf::util::JsonPrintOptions LineOptions() {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  return options;
}

}  // namespace

Status FaultJournal::Open(const std::string& dir) {
  const std::string path = dir + "/" + kFaultsFile;
  out_.open(path, std::ios::trunc);
  if (!out_) return Status::IOError(path + ": cannot write");
  return Status::Ok();
}

void FaultJournal::Add(const pb::FaultRecord& record) {
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(record, &json, LineOptions());
  out_ << json << "\n" << std::flush;
}

Status WriteVerdict(const pb::ExperimentVerdict& verdict, const std::string& dir) {
  google::protobuf::util::JsonPrintOptions options = LineOptions();
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(verdict, &json, options).ok()) {
    return Status::Corruption("verdict does not serialize");
  }
  const std::string path = dir + "/" + kVerdictFile;
  std::ofstream out(path, std::ios::trunc);
  out << json;
  out.flush();
  if (!out) return Status::IOError(path + ": cannot write");
  return Status::Ok();
}

Result<pb::ExperimentVerdict> ReadVerdict(const std::string& dir) {
  const std::string path = dir + "/" + kVerdictFile;
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": no such file (not a result directory?)");
  std::stringstream text;
  text << in.rdbuf();
  pb::ExperimentVerdict verdict;
  if (!google::protobuf::util::JsonStringToMessage(text.str(), &verdict).ok()) {
    return Status::Corruption(path + ": not a verdict");
  }
  return verdict;
}

void PrintVerdict(const pb::ExperimentVerdict& v, const std::string& dir, std::ostream& out) {
  out << "\navailability (operations by invocation time)\n";
  for (const pb::AvailabilityWindow& w : v.windows()) out << "  " << DescribeWindow(w) << "\n";
  out << "\ncheckers\n";
  for (const pb::CheckerResult& c : v.checkers()) {
    std::string first_line = c.summary().substr(0, c.summary().find('\n'));
    out << "  " << (c.passed() ? "pass " : "FAIL ") << c.name() << ": " << first_line << "\n";
    if (!c.passed() && first_line.size() < c.summary().size()) {
      out << c.summary().substr(first_line.size() + 1) << "\n";
    }
  }
  for (const std::string& note : v.notes()) out << "  note: " << note << "\n";
  out << "\n" << VerdictLine(v) << "; results in " << dir << "\n";
}

std::string ShellWord(const std::string& text) {
  const bool safe = !text.empty() && text.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_./-=:,+@%") == std::string::npos;
  if (safe) return text;
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string VerdictLine(const pb::ExperimentVerdict& v) {
  return std::string(v.passed() ? "PASS " : "FAIL ") + v.experiment() + " seed " +
         std::to_string(v.seed()) + ", " + std::to_string(v.duration_s()) + " s: " +
         std::to_string(v.ops()) + " ops (" + std::to_string(v.ok()) + " ok, " +
         std::to_string(v.failed()) + " failed, " + std::to_string(v.unknown()) + " unknown)";
}

}  // namespace tessera::experiment
