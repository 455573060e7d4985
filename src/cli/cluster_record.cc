#include "cli/cluster_record.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>

#include <filesystem>
#include <optional>

#include "cluster/layout.h"
#include "cluster/supervisor.h"
#include "common/text_file.h"
#include "tessera/cluster_record.pb.h"

namespace tessera::cli {
namespace {
namespace fs = std::filesystem;

std::string RecordedLayoutPath(const std::string& dir) { return dir + "/" + kRecordedLayoutFile; }
std::string UpRecordPath(const std::string& dir) { return dir + "/" + kUpRecordFile; }

std::string Absolute(const std::string& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  return ec ? path : absolute.lexically_normal().string();
}

// DIR/cluster_up.textproto; nullopt when the directory holds no record.
Result<std::optional<pb::ClusterUpRecord>> ReadUpRecord(const std::string& dir) {
  const std::string path = UpRecordPath(dir);
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::optional<pb::ClusterUpRecord>();
  auto text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  pb::ClusterUpRecord record;
  if (!google::protobuf::TextFormat::ParseFromString(*text, &record)) {
    return Status::Corruption(path + " is not a ClusterUpRecord in protobuf text format "
                              "(written by `tessera cluster up`, docs/formats/cluster-dir.md)");
  }
  return std::optional<pb::ClusterUpRecord>(std::move(record));
}

// The first difference between two layouts, one line ("" when equal).
std::string FirstDifference(const pb::ClusterLayout& given, const pb::ClusterLayout& recorded) {
  google::protobuf::util::MessageDifferencer differencer;
  std::string report;
  differencer.ReportDifferencesToString(&report);
  if (differencer.Compare(recorded, given)) return "";
  std::string line = report.substr(0, report.find('\n'));
  constexpr size_t kLineBytesMax = 200;
  if (line.size() > kLineBytesMax) line = line.substr(0, kLineBytesMax) + "...";
  return line.empty() ? "they differ" : line;
}

Result<LayoutChoice> Unrecorded(const std::string& layout_flag) {
  LayoutChoice choice;
  if (layout_flag.empty()) {
    auto path = DefaultLayoutPath();
    if (!path.ok()) return path.status();
    choice.path = *path;
  } else {
    choice.path = Absolute(layout_flag);
  }
  auto layout = cluster::LoadLayout(choice.path);
  if (!layout.ok()) return layout.status();
  choice.layout = std::move(layout).value();
  choice.source = choice.path;
  return choice;
}

Status SettingDiffers(const std::string& dir, const std::string& flag, const std::string& given,
                      const std::string& recorded) {
  return Status::InvalidArgument(
      flag + " " + given + " differs from the cluster in " + dir + ", started with " + recorded +
      " (" + UpRecordPath(dir) + "): leave " + flag +
      " out to use the recorded value; a cluster with other tables needs a new --dir");
}

std::string Joined(const std::vector<std::string>& values) {
  std::string joined;
  for (const std::string& v : values) joined += (joined.empty() ? "'" : " '") + v + "'";
  return joined.empty() ? "none" : joined;
}

}  // namespace

Result<std::string> DefaultLayoutPath() {
  const fs::path installed =
      fs::path(cluster::SelfExecutable()).parent_path() / "../share/tessera/cluster/local.textproto";
  const fs::path source = fs::path(TESSERA_SOURCE_LAYOUT_DIR) / "local.textproto";
  std::error_code ec;
  for (const fs::path& candidate : {installed, source}) {
    if (fs::exists(candidate, ec)) return candidate.lexically_normal().string();
  }
  return Status::NotFound("no default layout: neither " + installed.lexically_normal().string() +
                          " nor " + source.string() + " exists; give --layout FILE");
}

Result<LayoutChoice> ChooseLayout(const std::string& dir, const std::string& layout_flag) {
  auto record = ReadUpRecord(dir);
  if (!record.ok()) return record.status();
  if (!record->has_value()) return Unrecorded(layout_flag);
  LayoutChoice recorded;
  recorded.path = RecordedLayoutPath(dir);
  recorded.source = (*record)->layout_source();
  recorded.recorded = true;
  auto layout = cluster::LoadLayout(recorded.path);
  if (!layout.ok()) return layout.status();
  recorded.layout = std::move(layout).value();
  if (layout_flag.empty()) return recorded;
  auto given = cluster::LoadLayout(layout_flag);
  if (!given.ok()) return given.status();
  const std::string difference = FirstDifference(*given, recorded.layout);
  if (difference.empty()) return recorded;
  return Status::InvalidArgument(
      "--layout " + layout_flag + " differs from the layout the cluster in " + dir +
      " was started with (" + recorded.path + ", a copy of " + recorded.source + "; " +
      difference + "): leave --layout out to use the recorded one; to run another layout, "
      "stop this cluster (tessera cluster down --dir " + dir + ") and start one in a new --dir");
}

Status RecordCluster(const std::string& dir, const UpSettings& settings, LayoutChoice& choice) {
  if (choice.recorded) return Status::Ok();
  auto text = ReadTextFile(choice.path);
  if (!text.ok()) return text.status();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IOError("cannot create cluster directory " + dir + ": " + ec.message());
  const std::string copy = RecordedLayoutPath(dir);
  TESSERA_RETURN_IF_ERROR(WriteTextFileAtomically(copy, *text));
  pb::ClusterUpRecord record;
  record.set_layout_source(choice.source);
  record.set_partitions(settings.partitions == 0 ? kDefaultKvPartitions : settings.partitions);
  for (const std::string& p : settings.kv_splits) record.add_kv_splits(p);
  for (const std::string& p : settings.s3_splits) record.add_s3_splits(p);
  std::string printed;
  google::protobuf::TextFormat::PrintToString(record, &printed);
  TESSERA_RETURN_IF_ERROR(WriteTextFileAtomically(
      UpRecordPath(dir), "# Written by `tessera cluster up` (docs/formats/cluster-dir.md).\n" +
                             printed));
  choice.path = copy;
  choice.recorded = true;
  return Status::Ok();
}

Result<UpSettings> ChooseUpSettings(const std::string& dir, const UpSettings& given) {
  auto record = ReadUpRecord(dir);
  if (!record.ok()) return record.status();
  if (!record->has_value()) {
    UpSettings settings = given;
    if (settings.partitions == 0) settings.partitions = kDefaultKvPartitions;
    return settings;
  }
  const pb::ClusterUpRecord& r = **record;
  UpSettings recorded{r.partitions(), {r.kv_splits().begin(), r.kv_splits().end()},
                      {r.s3_splits().begin(), r.s3_splits().end()}};
  if (given.partitions != 0 && given.partitions != recorded.partitions) {
    return SettingDiffers(dir, "--partitions", std::to_string(given.partitions),
                          std::to_string(recorded.partitions));
  }
  if (!given.kv_splits.empty() && given.kv_splits != recorded.kv_splits) {
    return SettingDiffers(dir, "--kv-split", Joined(given.kv_splits), Joined(recorded.kv_splits));
  }
  if (!given.s3_splits.empty() && given.s3_splits != recorded.s3_splits) {
    return SettingDiffers(dir, "--s3-split", Joined(given.s3_splits), Joined(recorded.s3_splits));
  }
  return recorded;
}

}  // namespace tessera::cli
