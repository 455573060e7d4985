#include "experiment/experiment_file.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cluster/layout.h"
#include "knobs/knobs.h"
#include "cluster/process_table.h"
#include "common/fault_clock.h"
#include "experiment/experiment_limits.h"
#include "experiment/netns_plan.h"
#include "experiment/schedule.h"

namespace tessera::experiment {
namespace {

// Collects the parser's complaints ("line 3 column 5: ...") for the message.
class ParseErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (!text_.empty()) text_ += "; ";
    text_ += "line " + std::to_string(line + 1) + " column " + std::to_string(column + 1) + ": " +
             message;
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

Result<std::string> ReadSmallFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status::NotFound(path + ": no such file");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > kFileBytesMax) {
    return Status::InvalidArgument(path + ": larger than " + std::to_string(kFileBytesMax) +
                                   " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return Status::IOError(path + ": cannot read");
  return text.str();
}

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

Status CheckRange(const std::string& field, uint64_t value, uint64_t lo, uint64_t hi) {
  if (value >= lo && value <= hi) return Status::Ok();
  return Status::InvalidArgument(field + " = " + std::to_string(value) + ": must be in " +
                                 std::to_string(lo) + ".." + std::to_string(hi));
}

Status ValidateRegisterWorkload(const pb::KvRegisterWorkload& w, const std::string& field) {
  if (Status st = CheckRange(field + ".clients", w.clients(), 1, kClientsMax); !st.ok()) return st;
  if (Status st = CheckRange(field + ".rate_per_s", w.rate_per_s(), 1, kRatePerSMax); !st.ok()) {
    return st;
  }
  if (Status st = CheckRange(field + ".keys", w.keys(), 1, kKeysMax); !st.ok()) return st;
  if (Status st = CheckRange(field + ".ops_max", w.ops_max(), 0, kHistoryOpsMax); !st.ok()) {
    return st;
  }
  if (Status st = CheckRange(field + ".timeout_ms", w.timeout_ms(), 0, kOpTimeoutMsMax); !st.ok()) {
    return st;
  }
  const uint64_t percents = uint64_t{w.strong_read_percent()} + w.eventual_read_percent() +
                            w.cas_percent();
  if (percents > 100) {
    return Status::InvalidArgument(field +
                                   ": strong_read_percent + eventual_read_percent + cas_percent = " +
                                   std::to_string(percents) + ", more than 100");
  }
  return Status::Ok();
}

Status ValidateBankWorkload(const pb::KvBankWorkload& w, const std::string& field) {
  if (Status st = CheckRange(field + ".clients", w.clients(), 1, kClientsMax); !st.ok()) return st;
  if (Status st = CheckRange(field + ".rate_per_s", w.rate_per_s(), 1, kRatePerSMax); !st.ok()) {
    return st;
  }
  if (Status st = CheckRange(field + ".accounts", w.accounts(), 2, kBankAccountsMax); !st.ok()) {
    return st;
  }
  if (Status st = CheckRange(field + ".initial_balance", w.initial_balance(), 1, kBankBalanceMax);
      !st.ok()) {
    return st;
  }
  if (Status st = CheckRange(field + ".max_transfer", w.max_transfer(), 1, w.initial_balance());
      !st.ok()) {
    return st;
  }
  if (Status st = CheckRange(field + ".read_percent", w.read_percent(), 0, 100); !st.ok()) return st;
  if (Status st = CheckRange(field + ".ops_max", w.ops_max(), 0, kHistoryOpsMax); !st.ok()) {
    return st;
  }
  return CheckRange(field + ".timeout_ms", w.timeout_ms(), 0, kOpTimeoutMsMax);
}

Status ValidateS3Workload(const pb::S3ObjectWorkload& w, const std::string& field) {
  if (Status st = CheckRange(field + ".clients", w.clients(), 1, kClientsMax); !st.ok()) return st;
  if (Status st = CheckRange(field + ".rate_per_s", w.rate_per_s(), 1, kRatePerSMax); !st.ok()) {
    return st;
  }
  if (Status st = CheckRange(field + ".keys", w.keys(), 1, kKeysMax); !st.ok()) return st;
  if (Status st = CheckRange(field + ".prefixes", w.prefixes(), 0, kS3PrefixesMax); !st.ok()) {
    return st;
  }
  const uint32_t min = w.min_bytes() == 0 ? kS3MinBytesDefault : w.min_bytes();
  const uint32_t max = w.max_bytes() == 0 ? kS3MaxBytesDefault : w.max_bytes();
  if (Status st = CheckRange(field + ".max_bytes", max, 1, kS3BodyBytesMax); !st.ok()) return st;
  if (Status st = CheckRange(field + ".min_bytes", min, 1, max); !st.ok()) return st;
  if (Status st = CheckRange(field + ".ops_max", w.ops_max(), 0, kHistoryOpsMax); !st.ok()) {
    return st;
  }
  if (Status st = CheckRange(field + ".timeout_ms", w.timeout_ms(), 0, kOpTimeoutMsMax); !st.ok()) {
    return st;
  }
  if (Status st = CheckRange(field + ".multipart_percent", w.multipart_percent(), 0, 100);
      !st.ok()) {
    return st;
  }
  if (Status st = CheckRange(field + ".multipart_parts", w.multipart_parts(), 0,
                             kS3MultipartPartsMax);
      !st.ok()) {
    return st;
  }
  if (uint64_t{w.multipart_percent()} + w.copy_percent() > 100) {
    return Status::InvalidArgument(field + ": multipart_percent + copy_percent = " +
                                   std::to_string(uint64_t{w.multipart_percent()} + w.copy_percent()) +
                                   ", more than 100");
  }
  const uint64_t percents = uint64_t{w.get_percent()} + w.head_percent() + w.delete_percent() +
                            w.list_percent() + w.version_percent();
  if (percents > 100) {
    return Status::InvalidArgument(field + ": get_percent + head_percent + delete_percent + "
                                   "list_percent + version_percent = " + std::to_string(percents) +
                                   ", more than 100");
  }
  return Status::Ok();
}

Status ValidateWorkload(const pb::Workload& w, const std::string& field) {
  switch (w.kind_case()) {
    case pb::Workload::kKvRegister:
      return ValidateRegisterWorkload(w.kv_register(), field + ".kv_register");
    case pb::Workload::kKvBank:
      return ValidateBankWorkload(w.kv_bank(), field + ".kv_bank");
    case pb::Workload::kS3Objects:
      return ValidateS3Workload(w.s3_objects(), field + ".s3_objects");
    case pb::Workload::KIND_NOT_SET:
      break;
  }
  return Status::InvalidArgument(field + ": no workload kind (kv_register, kv_bank, s3_objects)");
}

Status ValidateTarget(const pb::FaultStep& step, const cluster::ProcessTable& table,
                      const std::string& field) {
  const pb::FaultTarget& t = step.target();
  switch (t.kind_case()) {
    case pb::FaultTarget::kProcess:
      if (!table.ByName(t.process())) {
        return Status::InvalidArgument(field + ".target.process '" + t.process() +
                                       "': no such process in the layout");
      }
      break;
    case pb::FaultTarget::kAz:
      if (table.InAz(t.az()).empty()) {
        return Status::InvalidArgument(field + ".target.az '" + t.az() +
                                       "': no process of the layout is in it");
      }
      break;
    case pb::FaultTarget::kKvLeader:
    case pb::FaultTarget::kRandomNode:
    case pb::FaultTarget::kRandomAz:
      break;
    case pb::FaultTarget::KIND_NOT_SET:
      return Status::InvalidArgument(field + ".target: missing (process, az, kv_leader, "
                                     "random_node or random_az)");
  }
  return Status::Ok();
}

// offset_ms and skew_ppm: set, in range and only on their kind; a clock
// fault's named target must hold a process that serves admin.faults.
Status ValidateClockKnobs(const pb::FaultStep& step, const cluster::ProcessTable& table,
                          const std::string& field) {
  const bool jump = step.kind() == pb::FAULT_CLOCK_JUMP;
  const bool skew = step.kind() == pb::FAULT_CLOCK_SKEW;
  if (step.offset_ms() != 0 && !jump) {
    return Status::InvalidArgument(field + ".offset_ms: only for FAULT_CLOCK_JUMP");
  }
  if (step.skew_ppm() != 0 && !skew) {
    return Status::InvalidArgument(field + ".skew_ppm: only for FAULT_CLOCK_SKEW");
  }
  if (jump && (step.offset_ms() == 0 || step.offset_ms() < -fault_clock::kOffsetMsMax ||
               step.offset_ms() > fault_clock::kOffsetMsMax)) {
    return Status::InvalidArgument(field + ".offset_ms: " + std::to_string(step.offset_ms()) +
                                   ", must be non-zero and within +-" +
                                   std::to_string(fault_clock::kOffsetMsMax));
  }
  if (skew && (step.skew_ppm() == 0 || step.skew_ppm() < -fault_clock::kSkewPpmMax ||
               step.skew_ppm() > fault_clock::kSkewPpmMax)) {
    return Status::InvalidArgument(field + ".skew_ppm: " + std::to_string(step.skew_ppm()) +
                                   ", must be non-zero and within +-" +
                                   std::to_string(fault_clock::kSkewPpmMax));
  }
  if (!jump && !skew) return Status::Ok();
  const pb::FaultTarget& t = step.target();
  if (!t.has_process() && !t.has_az()) return Status::Ok();
  const std::vector<cluster::ProcessEntry> hit =
      t.has_process() ? std::vector<cluster::ProcessEntry>{*table.ByName(t.process())}
                      : table.InAz(t.az());
  if (std::none_of(hit.begin(), hit.end(),
                   [](const cluster::ProcessEntry& e) { return cluster::ServesRpc(e.role); })) {
    return Status::InvalidArgument(field + ".target '" + TargetName(t) +
                                   "': clock faults need a storage node or meta replica "
                                   "(routers and autoadmin processes take no fault rules)");
  }
  return Status::Ok();
}

// A drain names storage nodes (one by name, the leader's or a random one:
// never a whole AZ, whose replicas would have nowhere to go in it), and
// moves nothing without an autoadmin.
Status ValidateDrain(const pb::FaultStep& step, const cluster::ProcessTable& table,
                     const std::string& field) {
  if (step.kind() != pb::FAULT_DRAIN) return Status::Ok();
  const pb::FaultTarget& t = step.target();
  if (t.has_az() || t.has_random_az()) {
    return Status::InvalidArgument(field + ".target: FAULT_DRAIN drains storage nodes "
                                   "(process, kv_leader or random_node), not an AZ");
  }
  if (t.has_process() && table.ByName(t.process())->role != cluster::ProcessRole::kNode) {
    return Status::InvalidArgument(field + ".target.process '" + t.process() +
                                   "': FAULT_DRAIN needs a storage node");
  }
  if (table.OfRole(cluster::ProcessRole::kAutoadmin).empty()) {
    return Status::InvalidArgument(field + ": FAULT_DRAIN needs an autoadmin in the layout "
                                   "(nothing else moves a drained node's replicas)");
  }
  return Status::Ok();
}

Status ValidateStep(const pb::FaultStep& step, const pb::ClusterLayout& layout,
                    const cluster::ProcessTable& table, uint32_t duration_s, bool timed,
                    const std::string& field) {
  if (step.kind() == pb::FAULT_UNSPECIFIED || !pb::FaultKind_IsValid(step.kind())) {
    return Status::InvalidArgument(field + ".kind: missing or unknown (FAULT_KILL, FAULT_PAUSE, "
                                   "FAULT_PARTITION_AZ, FAULT_SLOW_DISK, FAULT_PARTITION_ONE_WAY, "
                                   "FAULT_MAJORITY_RING, FAULT_LOST_NODE, FAULT_FULL_DISK, "
                                   "FAULT_CLOCK_JUMP, FAULT_CLOCK_SKEW, FAULT_DRAIN)");
  }
  if (Status st = ValidateTarget(step, table, field); !st.ok()) return st;
  if (Status st = ValidateClockKnobs(step, table, field); !st.ok()) return st;
  if (Status st = ValidateDrain(step, table, field); !st.ok()) return st;
  if (Status st = CheckRange(field + ".duration_s", step.duration_s(), 1, duration_s); !st.ok()) {
    return st;
  }
  if (timed && uint64_t{step.at_s()} + step.duration_s() > duration_s) {
    return Status::InvalidArgument(field + ": at_s + duration_s = " +
                                   std::to_string(uint64_t{step.at_s()} + step.duration_s()) +
                                   " s, past the experiment's duration of " +
                                   std::to_string(duration_s) + " s");
  }
  if (step.kind() == pb::FAULT_SLOW_DISK) {
    return CheckRange(field + ".slow_ms", step.slow_ms(), 1, kSlowDiskMsMax);
  }
  if (!step.peer_az().empty()) {
    if (step.kind() != pb::FAULT_PARTITION_ONE_WAY) {
      return Status::InvalidArgument(field + ".peer_az: only for FAULT_PARTITION_ONE_WAY");
    }
    if (std::find(layout.azs().begin(), layout.azs().end(), step.peer_az()) == layout.azs().end()) {
      return Status::InvalidArgument(field + ".peer_az '" + step.peer_az() +
                                     "': not an AZ of the layout");
    }
    if (step.target().has_az() && step.target().az() == step.peer_az()) {
      return Status::InvalidArgument(field + ".peer_az '" + step.peer_az() +
                                     "': the target's own AZ");
    }
  }
  return Status::Ok();
}

Status ValidateNemesis(const pb::Nemesis& n, const pb::ClusterLayout& layout,
                       uint32_t duration_s) {
  const cluster::ProcessTable table(layout);
  if (n.has_fixed()) {
    if (n.fixed().steps_size() > static_cast<int>(kFaultsMax)) {
      return Status::InvalidArgument("nemesis.fixed: more than " + std::to_string(kFaultsMax) +
                                     " steps");
    }
    for (int i = 0; i < n.fixed().steps_size(); ++i) {
      const std::string field = "nemesis.fixed.steps[" + std::to_string(i) + "]";
      if (Status st = ValidateStep(n.fixed().steps(i), layout, table, duration_s, true, field);
          !st.ok()) {
        return st;
      }
    }
  }
  if (n.has_random()) {
    if (n.random().kinds_size() == 0) {
      return Status::InvalidArgument("nemesis.random.kinds: at least one fault kind");
    }
    if (n.random().kinds_size() > static_cast<int>(kFaultsMax)) {
      return Status::InvalidArgument("nemesis.random.kinds: more than " +
                                     std::to_string(kFaultsMax));
    }
    for (int i = 0; i < n.random().kinds_size(); ++i) {
      const std::string field = "nemesis.random.kinds[" + std::to_string(i) + "]";
      if (Status st = ValidateStep(n.random().kinds(i), layout, table, duration_s, false, field);
          !st.ok()) {
        return st;
      }
    }
  }
  return Status::Ok();
}

Status ValidateWorkloadsAndCheckers(const pb::Experiment& spec) {
  if (spec.workloads_size() == 0 || spec.workloads_size() > static_cast<int>(kWorkloadsMax)) {
    return Status::InvalidArgument("workloads: 1.." + std::to_string(kWorkloadsMax) + " needed, " +
                                   std::to_string(spec.workloads_size()) + " given");
  }
  for (int i = 0; i < spec.workloads_size(); ++i) {
    const std::string field = "workloads[" + std::to_string(i) + "]";
    if (Status st = ValidateWorkload(spec.workloads(i), field); !st.ok()) return st;
  }
  if (spec.checkers_size() == 0) return Status::InvalidArgument("checkers: at least one");
  for (int i = 0; i < spec.checkers_size(); ++i) {
    const pb::Checker& c = spec.checkers(i);
    const std::string field = "checkers[" + std::to_string(i) + "]";
    if (c.kind_case() == pb::Checker::KIND_NOT_SET) {
      return Status::InvalidArgument(field + ": no checker kind (linearizable, availability, bank, s3)");
    }
    const auto has_workload = [&spec](pb::Workload::KindCase kind) {
      return std::any_of(spec.workloads().begin(), spec.workloads().end(),
                         [kind](const pb::Workload& w) { return w.kind_case() == kind; });
    };
    if (c.has_bank() && !has_workload(pb::Workload::kKvBank)) {
      return Status::InvalidArgument(field + ".bank: no kv_bank workload to check");
    }
    if (c.has_s3() && !has_workload(pb::Workload::kS3Objects)) {
      return Status::InvalidArgument(field + ".s3: no s3_objects workload to check");
    }
    if (c.has_availability()) {
      const pb::AvailabilityChecker& a = c.availability();
      for (const auto& [name, share] :
           {std::pair{"min_ok_share_outside_faults", a.min_ok_share_outside_faults()},
            std::pair{"min_ok_share_after_first_s", a.min_ok_share_after_first_s()}}) {
        if (!(share >= 0 && share <= 1)) {
          return Status::InvalidArgument(field + ".availability." + name + ": must be in 0..1");
        }
      }
      if (!(a.max_p99_over_steady() >= 0)) {
        return Status::InvalidArgument(field + ".availability.max_p99_over_steady: must be >= 0");
      }
    }
  }
  return Status::Ok();
}

// Every part of an upload but the last is at least min_bytes / parts bytes
// (S3Client::MultipartPut); the cluster refuses smaller ones.
Status ValidateMultipartParts(const pb::Experiment& spec, const pb::ClusterLayout& layout) {
  const uint64_t set = layout.router_settings().s3_min_part_bytes();
  const uint64_t min_part = set != 0 ? set : knobs::kRouterS3MinPartBytes.default_value;
  for (int i = 0; i < spec.workloads_size(); ++i) {
    if (!spec.workloads(i).has_s3_objects()) continue;
    const pb::S3ObjectWorkload& w = spec.workloads(i).s3_objects();
    if (w.multipart_parts() <= 1 || w.multipart_percent() == 0) continue;
    const uint32_t min_bytes = w.min_bytes() == 0 ? kS3MinBytesDefault : w.min_bytes();
    if (min_bytes / w.multipart_parts() < min_part) {
      return Status::InvalidArgument(
          "workloads[" + std::to_string(i) + "].s3_objects.multipart_parts: " +
          std::to_string(w.multipart_parts()) + " parts of a " + std::to_string(min_bytes) +
          "-byte body are smaller than the cluster's s3_min_part_bytes (" +
          std::to_string(min_part) + "); set router_settings { s3_min_part_bytes } in the "
          "experiment to at most min_bytes / multipart_parts");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<uint32_t> EffectiveDuration(const pb::Experiment& spec, uint32_t duration_override_s) {
  const uint32_t d = duration_override_s != 0 ? duration_override_s : spec.duration_s();
  const std::string field = duration_override_s != 0 ? "--duration" : "duration_s";
  if (Status st = CheckRange(field, d, 1, kDurationSMax); !st.ok()) return st;
  return d;
}

Status ValidateExperiment(const pb::Experiment& spec, const pb::ClusterLayout& layout) {
  if (!ValidName(spec.name())) {
    return Status::InvalidArgument("name '" + spec.name() +
                                   "': 1..64 characters of a-z, 0-9 and '-'");
  }
  auto duration = EffectiveDuration(spec, 0);
  if (!duration.ok()) return duration.status();
  if (Status st = CheckRange("recovery_s", spec.recovery_s(), 0, kRecoverySMax); !st.ok()) return st;
  if (Status st = ValidateWorkloadsAndCheckers(spec); !st.ok()) return st;
  if (Status st = ValidateNetnsNetwork(spec.netns()); !st.ok()) return st;
  if (Status st = ValidateMultipartParts(spec, layout); !st.ok()) return st;
  return ValidateNemesis(spec.nemesis(), layout, *duration);
}

Result<LoadedExperiment> LoadExperiment(const std::string& path) {
  auto text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  LoadedExperiment loaded;
  loaded.path = path;
  google::protobuf::TextFormat::Parser parser;
  ParseErrors errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(*text, &loaded.spec)) {
    return Status::InvalidArgument(path + ": not a valid experiment (" + errors.text() + ")");
  }
  if (loaded.spec.layout().empty()) {
    return Status::InvalidArgument(path + ": layout: missing (a cluster layout file)");
  }
  std::filesystem::path layout(loaded.spec.layout());
  if (layout.is_relative()) layout = std::filesystem::path(path).parent_path() / layout;
  loaded.layout_path = layout.lexically_normal().string();
  auto parsed = cluster::LoadLayout(loaded.layout_path);
  if (!parsed.ok()) {
    return Status::InvalidArgument(path + ": layout '" + loaded.spec.layout() +
                                   "': " + parsed.status().ToString());
  }
  loaded.layout = std::move(parsed).value();
  loaded.layout.mutable_router_settings()->MergeFrom(loaded.spec.router_settings());
  loaded.layout.mutable_node_settings()->MergeFrom(loaded.spec.node_settings());
  if (Status st = cluster::ValidateLayout(loaded.layout); !st.ok()) {
    return Status::InvalidArgument(path + ": router_settings/node_settings: " + st.message());
  }
  if (Status st = ValidateExperiment(loaded.spec, loaded.layout); !st.ok()) {
    return Status::InvalidArgument(path + ": " + st.message());
  }
  return loaded;
}

}  // namespace tessera::experiment
