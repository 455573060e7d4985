#include "experiment/experiment_run.h"

#include <google/protobuf/text_format.h>
#include <spdlog/spdlog.h>

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <thread>

#include "cli/cluster_lifecycle.h"
#include "cli/cluster_session.h"
#include "cli/cluster_status.h"
#include "experiment/availability.h"
#include "experiment/bank_checker.h"
#include "experiment/blob_check.h"
#include "experiment/bank_workload.h"
#include "experiment/experiment_file.h"
#include "experiment/experiment_limits.h"
#include "experiment/free_port_layout.h"
#include "experiment/nemesis.h"
#include "experiment/netns_network.h"
#include "experiment/op_log.h"
#include "experiment/register_checker.h"
#include "experiment/register_workload.h"
#include "experiment/report_html.h"
#include "experiment/result_files.h"
#include "experiment/s3_checker.h"
#include "experiment/s3_workload.h"
#include "experiment/schedule.h"
#include "meta/registry_keys.h"
#include "router/token.h"
#include "s3/model/s3_keys.h"
#include "tessera/s3_registry.pb.h"

namespace tessera::experiment {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

std::atomic<bool> g_interrupted{false};

void OnInterrupt(int) { g_interrupted.store(true); }

// Everything a run holds once the cluster is up.
struct Run {
  LoadedExperiment experiment;
  uint64_t seed = 0;
  uint32_t duration_s = 0;
  std::string dir;           // the result directory
  bool started_cluster = false;
  std::ofstream netns_log;             // DIR/netns.log (--netns)
  std::unique_ptr<NetnsNetwork> netns; // taken down after the cluster stopped
  std::unique_ptr<cli::ClusterSession> session;
  std::ofstream cluster_log; // DIR/cluster.log
  std::vector<ScheduledFault> schedule;
  pb::ExperimentVerdict verdict;
};

Result<std::string> MakeResultDir(const RunOptions& o, const std::string& name) {
  std::error_code ec;
  if (!o.out_dir.empty()) {
    std::filesystem::create_directories(o.out_dir, ec);
    if (ec) return Status::InvalidArgument("--out " + o.out_dir + ": " + ec.message());
    return std::filesystem::absolute(o.out_dir).string();
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tessera-experiment-" + name +
                        "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return Status::IOError("mkdtemp " + pattern);
  return pattern;
}

// --netns: the run's network namespaces (DIR/netns.log says what was
// built and cut), and `layout`'s hosts mapped to their addresses.
Status OpenNetns(Run& run, pb::ClusterLayout& layout, std::ostream& out) {
  run.netns_log.open(run.dir + "/netns.log", std::ios::trunc);
  auto net = NetnsNetwork::Create(layout, EffectiveShaping(run.experiment.spec.netns()), run.seed,
                                  run.netns_log, out);
  if (!net.ok()) return net.status();
  run.netns = std::move(net).value();
  layout = MapHosts(std::move(layout), run.netns->plan());
  const NetnsPlan& plan = run.netns->plan();
  out << "network namespaces:";
  for (const std::string& ns : plan.Namespaces()) out << " " << ns;
  out << " (" << plan.subnet << "; log: " << run.dir << "/netns.log)\n";
  if (!run.netns->shaping_missing().empty()) {
    out << "warning: no delay, jitter or loss between AZs: " << run.netns->shaping_missing()
        << "\n";
  }
  return Status::Ok();
}

// A fresh cluster in DIR/cluster on free ports (the layout in
// DIR/layout.textproto), or the cluster of --attach.
Status OpenCluster(Run& run, const RunOptions& o, std::ostream& out) {
  if (!o.attach_dir.empty()) {
    auto session = cli::ClusterSession::Open("", o.attach_dir);
    if (!session.ok()) return session.status();
    run.session = std::move(session).value();
    out << "attached to the cluster in " << o.attach_dir << "\n";
    return Status::Ok();
  }
  auto layout = WithFreePorts(run.experiment.layout);
  if (!layout.ok()) return layout.status();
  if (o.netns) {
    if (Status st = OpenNetns(run, *layout, out); !st.ok()) return st;
  }
  std::string text;
  google::protobuf::TextFormat::PrintToString(*layout, &text);
  const std::string layout_path = run.dir + "/layout.textproto";
  std::ofstream(layout_path) << "# " << run.experiment.layout_path << " on free ports\n" << text;
  auto session = cli::ClusterSession::Open(layout_path, run.dir + "/cluster");
  if (!session.ok()) return session.status();
  run.session = std::move(session).value();
  if (run.netns) run.session->set_network_namespaces(run.netns->NamespacePaths());
  out << "starting a cluster in " << run.dir << "/cluster (" << run.experiment.spec.layout()
      << " on free ports; log: " << run.dir << "/cluster.log)\n" << std::flush;
  run.started_cluster = true;
  return cli::StartCluster(*run.session, {}, run.cluster_log);
}

// The bucket every s3_objects workload writes in (keys are unique per run).
constexpr char kExperimentBucket[] = "tessera-experiments";

std::vector<std::unique_ptr<Workload>> MakeWorkloads(Run& run, OpLog& log, const RunClock& clock,
                                                     const router::Credential& credential,
                                                     const std::string& key_prefix) {
  std::vector<KvEndpoint> routers;
  std::vector<S3Endpoint> s3_routers;
  const std::string& region = run.session->layout().router_settings().s3_region();
  for (const cluster::ProcessEntry& r :
       run.session->table().OfRole(cluster::ProcessRole::kRouter)) {
    routers.push_back({r.host, static_cast<uint16_t>(r.peer_port)});
    if (r.s3_port == 0) continue;
    s3_routers.push_back({r.host, static_cast<uint16_t>(r.s3_port),
                          region.empty() ? "us-east-1" : region, credential.access_key,
                          credential.secret_key});
  }
  std::vector<std::unique_ptr<Workload>> workloads;
  for (int i = 0; i < run.experiment.spec.workloads_size(); ++i) {
    const pb::Workload& w = run.experiment.spec.workloads(i);
    const auto index = static_cast<uint32_t>(i);
    if (w.has_kv_bank()) {
      BankWorkloadConfig config{w.kv_bank(), index, run.seed, key_prefix, routers,
                                credential.access_key, credential.secret_key};
      workloads.push_back(std::make_unique<BankWorkload>(config, log, clock));
    } else if (w.has_s3_objects()) {
      S3WorkloadConfig config{w.s3_objects(), index, run.seed, kExperimentBucket, key_prefix,
                              s3_routers};
      workloads.push_back(std::make_unique<S3Workload>(config, log, clock));
    } else {
      RegisterWorkloadConfig config;
      config.spec = w.kv_register();
      config.workload_index = index;
      config.seed = run.seed;
      config.key_prefix = key_prefix;
      config.routers = routers;
      config.access_key = credential.access_key;
      config.secret_key = credential.secret_key;
      workloads.push_back(std::make_unique<RegisterWorkload>(config, log, clock));
    }
  }
  return workloads;
}

// The banks of the kv_bank workloads, for the bank checker.
std::vector<BankSpec> Banks(const pb::Experiment& spec, const std::string& key_prefix) {
  std::vector<BankSpec> banks;
  for (int i = 0; i < spec.workloads_size(); ++i) {
    if (!spec.workloads(i).has_kv_bank()) continue;
    const pb::KvBankWorkload& w = spec.workloads(i).kv_bank();
    banks.push_back({BankScanStart(key_prefix, static_cast<uint32_t>(i)), w.accounts(),
                     int64_t{w.accounts()} * w.initial_balance()});
  }
  return banks;
}

// What a kv_leader target follows: the partition holding the first
// workload's first key — a register's or an account's in the table kv, or
// the head record of an S3 object in the table _s3 (which needs the
// bucket's id: call once the workloads started, i.e. the bucket exists).
LeaderKey LeaderKeyOf(Run& run, const std::string& key_prefix) {
  const pb::Workload& first = run.experiment.spec.workloads(0);
  if (first.has_kv_bank()) return {kRegisterTable, AccountKey(key_prefix, 0, 0)};
  if (!first.has_s3_objects()) return {kRegisterTable, HotKey(key_prefix, 0, 0)};
  pb::GetBucketRequest request;
  request.set_name(kExperimentBucket);
  pb::GetBucketResponse bucket;
  std::string why = "not found";
  // A meta replica may not have applied the bucket's creation yet: ask
  // again, for a bounded time.
  const auto deadline = steady_clock::now() + std::chrono::seconds(10);
  while (!bucket.found() && steady_clock::now() < deadline) {
    auto client = run.session->client();
    auto raw = client.ok() ? (*client)->CallAny(cluster::ProcessRole::kMeta, "meta.get_bucket",
                                                request.SerializeAsString(), milliseconds(5'000))
                           : Result<std::string>(client.status());
    if (!raw.ok()) why = raw.status().ToString();
    if (!raw.ok() || !bucket.ParseFromString(*raw) || !bucket.found()) {
      bucket.Clear();
      std::this_thread::sleep_for(milliseconds(200));
    }
  }
  if (!bucket.found()) {
    run.verdict.add_notes("kv_leader: bucket " + std::string(kExperimentBucket) + ": " + why +
                          "; the table kv's leader is targeted instead");
    return {kRegisterTable, HotKey(key_prefix, 0, 0)};
  }
  return {std::string(meta::kS3TableName),
          s3::model::HeadKey(bucket.bucket().bucket_id(), S3Key(key_prefix, 0, 0, 0))};
}

// One fault event of the schedule: a start or an end.
struct Event {
  uint64_t at_ms;
  bool start;
  size_t fault;
};

std::vector<Event> Events(const std::vector<ScheduledFault>& schedule) {
  std::vector<Event> events;
  for (size_t i = 0; i < schedule.size(); ++i) {
    events.push_back({schedule[i].start_ms, true, i});
    events.push_back({schedule[i].end_ms, false, i});
  }
  // Ends before starts at the same time: a fault ends before the next begins.
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.at_ms != b.at_ms ? a.at_ms < b.at_ms : (!a.start && b.start);
  });
  return events;
}

class Progress {
 public:
  Progress(const Run& run, const OpLog& log, const RunClock& clock, bool rewrite, std::ostream& out)
      : run_(run), log_(log), clock_(clock), rewrite_(rewrite), out_(out) {}

  void Print(const std::string& in_force) {
    const uint64_t done = log_.completed();
    const uint64_t elapsed_s = clock_.NowUs() / 1'000'000;
    char line[256];
    std::snprintf(line, sizeof line, "[%3llu/%u s] %5llu ops/s  %llu failed  %llu unknown  fault: %s",
                  static_cast<unsigned long long>(elapsed_s), run_.duration_s,
                  static_cast<unsigned long long>(done - last_done_),
                  static_cast<unsigned long long>(log_.failed()),
                  static_cast<unsigned long long>(log_.unknown()),
                  in_force.empty() ? "none" : in_force.c_str());
    last_done_ = done;
    if (rewrite_) {
      out_ << "\r" << line << "\033[K" << std::flush;
    } else {
      out_ << line << "\n" << std::flush;
    }
  }
  void Finish() {
    if (rewrite_) out_ << "\n";
  }

 private:
  const Run& run_;
  const OpLog& log_;
  const RunClock& clock_;
  const bool rewrite_;
  std::ostream& out_;
  uint64_t last_done_ = 0;
};

pb::FaultRecord FaultLine(const std::string& event, const ScheduledFault* f,
                          const std::vector<std::string>& targets, uint64_t time_us,
                          const Status& st) {
  pb::FaultRecord r;
  r.set_event(event);
  if (f) r.set_kind(FaultKindName(f->kind));
  for (const std::string& t : targets) r.add_targets(t);
  r.set_time_us(time_us);
  if (!st.ok()) r.set_error(st.ToString());
  return r;
}

// Drives the schedule for the duration (or until interrupted); returns the
// fault windows as they really happened.
std::vector<FaultWindow> DriveSchedule(Run& run, Nemesis& nemesis, FaultJournal& journal,
                                       const OpLog& log, const RunClock& clock, bool rewrite,
                                       std::ostream& out) {
  const std::vector<Event> events = Events(run.schedule);
  std::vector<FaultWindow> windows(run.schedule.size());
  std::vector<std::string> in_force(run.schedule.size());
  std::vector<std::vector<std::string>> hit(run.schedule.size());  // targets, per fault
  Progress progress(run, log, clock, rewrite, out);
  size_t next = 0;
  uint64_t next_print_ms = 1000;
  const uint64_t end_ms = uint64_t{run.duration_s} * 1000;
  while (!g_interrupted.load()) {
    const uint64_t now_ms = clock.NowUs() / 1000;
    for (; next < events.size() && events[next].at_ms <= now_ms; ++next) {
      const Event& e = events[next];
      const ScheduledFault& f = run.schedule[e.fault];
      std::vector<std::string>& targets = hit[e.fault];
      Status st = e.start ? nemesis.Start(e.fault, f, targets) : nemesis.End(e.fault);
      FaultWindow& w = windows[e.fault];
      if (e.start) {
        w.start_us = clock.NowUs();
        w.label = FaultKindName(f.kind) + " " + (targets.empty() ? TargetName(f.target) : targets[0]);
        in_force[e.fault] = w.label;
      } else {
        w.end_us = clock.NowUs();
        in_force[e.fault].clear();
      }
      journal.Add(FaultLine(e.start ? "start" : "end", &f, targets, clock.NowUs(), st));
    }
    if (now_ms >= end_ms) break;
    nemesis.Tick();
    if (now_ms >= next_print_ms) {
      std::string active;
      for (const std::string& s : in_force) {
        if (!s.empty()) active += (active.empty() ? "" : ", ") + s;
      }
      progress.Print(active);
      next_print_ms += 1000;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  progress.Finish();
  const uint64_t now_us = clock.NowUs();
  for (FaultWindow& w : windows) {
    if (w.start_us != 0 && w.end_us == 0) w.end_us = now_us;  // interrupted: healed below
    char range[64];
    std::snprintf(range, sizeof range, " [%.1f s, %.1f s)", w.start_us / 1e6, w.end_us / 1e6);
    w.label += range;
  }
  std::erase_if(windows, [](const FaultWindow& w) { return w.end_us == 0; });
  return windows;
}

// Heals until it works (processes just launched take a moment to serve
// RPC) and every partition has a leader, within recovery_s.
void HealAndRecover(Run& run, Nemesis& nemesis, FaultJournal& journal, const RunClock& clock) {
  const uint32_t recovery_s =
      run.experiment.spec.recovery_s() == 0 ? kRecoverySDefault : run.experiment.spec.recovery_s();
  const auto deadline = steady_clock::now() + std::chrono::seconds(recovery_s);
  Status healed = nemesis.HealEverything();
  while (!healed.ok() && steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(500));
    healed = nemesis.HealEverything();
  }
  journal.Add(FaultLine("heal", nullptr, {}, clock.NowUs(), healed));
  if (!healed.ok()) run.verdict.add_notes("healing failed: " + healed.ToString());
  Status led = cli::AllPartitionsLed(*run.session);
  while (!led.ok() && steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(200));
    led = cli::AllPartitionsLed(*run.session);
  }
  if (!led.ok()) {
    run.verdict.add_notes("not recovered within " + std::to_string(recovery_s) +
                          " s: " + led.ToString());
  }
}

bool HasS3Workload(const pb::Experiment& spec) {
  return std::any_of(spec.workloads().begin(), spec.workloads().end(),
                     [](const pb::Workload& w) { return w.has_s3_objects(); });
}

void RunCheckers(Run& run, const std::vector<OpRecord>& ops,
                 const std::vector<FaultWindow>& windows, uint64_t end_us,
                 const std::string& key_prefix) {
  pb::ExperimentVerdict& v = run.verdict;
  const std::vector<pb::AvailabilityWindow> summary = SummarizeAvailability(ops, windows, end_us);
  for (const pb::AvailabilityWindow& w : summary) *v.add_windows() = w;
  bool passed = v.notes_size() == 0;
  for (const pb::Checker& c : run.experiment.spec.checkers()) {
    pb::CheckerResult r;
    switch (c.kind_case()) {
      case pb::Checker::kLinearizable:
        r = CheckRegisters(ops, c.linearizable().step_budget());
        break;
      case pb::Checker::kBank:
        r = CheckBank(ops, Banks(run.experiment.spec, key_prefix));
        break;
      case pb::Checker::kS3:
        r = CheckS3Objects(ops, c.s3().step_budget());
        break;
      default:
        r = CheckAvailability(summary, c.availability());
        break;
    }
    passed = passed && r.passed();
    *v.add_checkers() = std::move(r);
  }
  if (HasS3Workload(run.experiment.spec)) {
    pb::CheckerResult blobs = CheckBlobsAfterHeal(*run.session);
    passed = passed && blobs.passed();
    *v.add_checkers() = std::move(blobs);
  }
  for (const OpRecord& op : ops) {
    v.set_ops(v.ops() + 1);
    if (op.outcome == OpOutcome::kOk) v.set_ok(v.ok() + 1);
    if (op.outcome == OpOutcome::kFail) v.set_failed(v.failed() + 1);
    if (op.outcome == OpOutcome::kInfo) v.set_unknown(v.unknown() + 1);
  }
  v.set_passed(passed);
}

// The workloads, the nemesis and the checkers on an open cluster.
int Execute(Run& run, const RunOptions& o, std::ostream& out, std::ostream& err) {
  auto credentials = router::LoadCredentials(run.session->dir() + "/credentials");
  if (!credentials.ok() || credentials->size() == 0) {
    err << "tessera experiment run: no credential in " << run.session->dir() << "/credentials\n";
    return kExitRunFailed;
  }
  FaultJournal journal;
  if (Status st = journal.Open(run.dir); !st.ok()) {
    err << "tessera experiment run: " << st.ToString() << "\n";
    return kExitRunFailed;
  }
  const std::string key_prefix =
      "exp-" + run.experiment.spec.name() + "-" + std::to_string(run.seed) + "-" +
      std::to_string(std::chrono::system_clock::now().time_since_epoch().count() / 1000) + "/";
  OpLog log(kHistoryOpsMax);
  RunClock clock;
  auto workloads = MakeWorkloads(run, log, clock, credentials->First(), key_prefix);
  for (auto& w : workloads) w->Start();
  Nemesis nemesis(*run.session, LeaderKeyOf(run, key_prefix), run.cluster_log, run.netns.get());
  const std::vector<FaultWindow> windows =
      DriveSchedule(run, nemesis, journal, log, clock, o.progress_rewrites_line, out);
  const uint64_t end_us = clock.NowUs();
  for (auto& w : workloads) w->Stop();
  out << "healing and waiting for recovery\n" << std::flush;
  HealAndRecover(run, nemesis, journal, clock);
  for (size_t i = 0; i < workloads.size(); ++i) {
    workloads[i]->FinalReads(static_cast<uint32_t>(1'000'000 + i));
  }
  if (g_interrupted.load()) run.verdict.add_notes("interrupted before the end of the duration");
  const std::vector<OpRecord> ops = log.Snapshot();
  RunCheckers(run, ops, windows, end_us, key_prefix);
  Status written = WriteHistory(ops, run.dir + "/" + kHistoryFile);
  if (written.ok()) written = WriteVerdict(run.verdict, run.dir);
  if (!written.ok()) {
    err << "tessera experiment run: " << written.ToString() << "\n";
    return kExitRunFailed;
  }
  PrintReportWritten(WriteReport(run.dir), out);  // the verdict does not depend on it
  return run.verdict.passed() ? kExitPassed : kExitCheckFailed;
}

// "tessera experiment run FILE --seed N --duration S [--attach DIR]".
std::string ReplayCommand(const RunOptions& o, uint64_t seed, uint32_t duration_s) {
  std::string command = "tessera experiment run " + ShellWord(o.experiment_path) + " --seed " +
                        std::to_string(seed) + " --duration " + std::to_string(duration_s);
  if (!o.attach_dir.empty()) command += " --attach " + ShellWord(o.attach_dir);
  if (o.netns) command += " --netns";
  return command;
}

// Loads the file and builds the schedule; prints why not to `err`.
bool Prepare(Run& run, const RunOptions& o, std::ostream& out, std::ostream& err) {
  auto loaded = LoadExperiment(o.experiment_path);
  if (!loaded.ok()) {
    err << "tessera experiment run: " << loaded.status().message() << "\n";
    return false;
  }
  run.experiment = std::move(loaded).value();
  auto duration = EffectiveDuration(run.experiment.spec, o.duration_s);
  if (!duration.ok()) {
    err << "tessera experiment run: " << duration.status().message() << "\n";
    return false;
  }
  run.duration_s = *duration;
  run.seed = o.seed ? *o.seed : std::random_device()() % 1'000'000;
  auto schedule = BuildSchedule(run.experiment.spec, run.experiment.layout, run.seed, run.duration_s);
  if (!schedule.ok()) {
    err << "tessera experiment run: " << o.experiment_path << ": "
        << schedule.status().message() << "\n";
    return false;
  }
  run.schedule = std::move(schedule).value();
  out << "experiment " << run.experiment.spec.name() << ", seed " << run.seed << ", "
      << run.duration_s << " s (replay: --seed " << run.seed << ")\n";
  for (const ScheduledFault& f : run.schedule) out << "  fault " << Describe(f) << "\n";
  if (run.schedule.empty()) out << "  no faults\n";
  return true;
}

// Deletes the network namespaces once no process runs in them.
void TakeDownNetns(Run& run, std::ostream& err) {
  if (!run.netns) return;
  if (Status st = run.netns->Teardown(); !st.ok()) {
    err << "tessera experiment run: " << st.message() << "\n";
  }
  run.netns.reset();
}

}  // namespace

int RunExperiment(const RunOptions& o, std::ostream& out, std::ostream& err) {
  spdlog::set_level(spdlog::level::err);
  Run run;
  if (!Prepare(run, o, out, err)) return kExitBadInput;
  if (o.netns) {
    Status st = o.attach_dir.empty()
                    ? NetnsNetwork::CheckAvailable()
                    : Status::InvalidArgument("--netns starts its own cluster: not with --attach");
    if (!st.ok()) {
      err << "tessera experiment run: " << st.message() << "\n";
      return kExitBadInput;
    }
  }
  const pb::Experiment& spec = run.experiment.spec;
  if (!o.attach_dir.empty() && (spec.has_router_settings() || spec.has_node_settings())) {
    err << "tessera experiment run: router_settings/node_settings set a fresh cluster's "
           "settings: not with --attach\n";
    return kExitBadInput;
  }
  auto dir = MakeResultDir(o, run.experiment.spec.name());
  if (!dir.ok()) {
    err << "tessera experiment run: " << dir.status().message() << "\n";
    return dir.status().code() == StatusCode::kInvalidArgument ? kExitBadInput : kExitRunFailed;
  }
  run.dir = *dir;
  run.cluster_log.open(run.dir + "/cluster.log", std::ios::trunc);
  run.verdict.set_experiment(run.experiment.spec.name());
  run.verdict.set_seed(run.seed);
  run.verdict.set_duration_s(run.duration_s);
  run.verdict.set_command(ReplayCommand(o, run.seed, run.duration_s));
  g_interrupted.store(false);
  ::signal(SIGINT, OnInterrupt);
  ::signal(SIGTERM, OnInterrupt);
  // A closed stdout (a pipe whose reader left) must not end the run before
  // it stopped its cluster and took down its namespaces.
  ::signal(SIGPIPE, SIG_IGN);
  Status opened = OpenCluster(run, o, out);
  if (!opened.ok()) {
    err << "tessera experiment run: the cluster did not start: " << opened.ToString() << "\n";
    if (run.session && run.started_cluster) cli::StopAll(*run.session, run.cluster_log);
    TakeDownNetns(run, err);
    return opened.code() == StatusCode::kInvalidArgument && !o.attach_dir.empty() ? kExitBadInput
                                                                                   : kExitRunFailed;
  }
  run.verdict.set_cluster_dir(run.session->dir());
  const int rc = Execute(run, o, out, err);
  if (run.started_cluster) {
    out << "stopping the cluster\n" << std::flush;
    cli::StopAll(*run.session, run.cluster_log);
  }
  TakeDownNetns(run, err);
  if (rc == kExitPassed || rc == kExitCheckFailed) PrintVerdict(run.verdict, run.dir, out);
  return rc;
}

}  // namespace tessera::experiment
