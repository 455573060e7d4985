#include "experiment/experiment_command.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <vector>

#include "cluster/supervisor.h"
#include "experiment/experiment_file.h"
#include "experiment/experiment_run.h"
#include "experiment/report_html.h"
#include "experiment/result_files.h"

namespace tessera::experiment {
namespace {

namespace fs = std::filesystem;

int List(const ExperimentCommandArgs& args, std::ostream& out, std::ostream& err) {
  const std::string dir = args.catalogue_dir.empty() ? DefaultCatalogueDir() : args.catalogue_dir;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".textproto") files.push_back(entry.path());
  }
  if (ec) {
    err << "tessera experiment list: " << dir << ": " << ec.message() << "\n";
    return kExitBadInput;
  }
  std::sort(files.begin(), files.end());
  out << "experiments in " << dir << "\n";
  int rc = 0;
  for (const fs::path& f : files) {
    auto loaded = LoadExperiment(f.string());
    if (!loaded.ok()) {
      err << "  " << loaded.status().message() << "\n";
      rc = kExitBadInput;
      continue;
    }
    const std::string& d = loaded->spec.description();
    out << "  " << std::left << std::setw(18) << loaded->spec.name() << std::setw(6)
        << (std::to_string(loaded->spec.duration_s()) + "s") << d.substr(0, d.find('\n')) << "\n"
        << "  " << std::setw(24) << "" << f.string() << "\n";
  }
  out << "run one: tessera experiment run FILE [--out DIR] [--seed N] [--duration S] [--netns]\n";
  return rc;
}

int Report(const ExperimentCommandArgs& args, std::ostream& out, std::ostream& err) {
  auto verdict = ReadVerdict(args.file);
  if (!verdict.ok()) {
    err << "tessera experiment report: " << verdict.status().message() << "\n";
    return kExitBadInput;
  }
  PrintVerdict(*verdict, args.file, out);
  PrintReportWritten(WriteReport(args.file), out);  // the exit code is the verdict's
  return verdict->passed() ? kExitPassed : kExitCheckFailed;
}

}  // namespace

std::string DefaultCatalogueDir() {
  const fs::path installed =
      fs::path(cluster::SelfExecutable()).parent_path() / "../share/tessera/experiments";
  std::error_code ec;
  if (fs::is_directory(installed, ec)) return installed.lexically_normal().string();
  return TESSERA_SOURCE_EXPERIMENT_DIR;
}

int RunExperimentCommand(const ExperimentCommandArgs& args, std::ostream& out, std::ostream& err) {
  if (args.action == "list") return List(args, out, err);
  if (args.action == "report") return Report(args, out, err);
  RunOptions o;
  o.experiment_path = args.file;
  o.out_dir = args.out_dir;
  o.seed = args.seed;
  o.duration_s = args.duration_s;
  o.attach_dir = args.attach_dir;
  o.netns = args.netns;
  o.progress_rewrites_line = args.out_is_terminal;
  return RunExperiment(o, out, err);
}

}  // namespace tessera::experiment
