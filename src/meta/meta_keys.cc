#include "meta/meta_keys.h"

#include "common/big_endian.h"
#include "common/check.h"
#include "common/limits.h"

namespace tessera::meta {

std::string TableKey(std::string_view table) {
  std::string key(kTablePrefix);
  key.append(table);
  return key;
}

std::string SplitIntentKey(uint64_t parent_group_id) {
  std::string key(kSplitIntentPrefix);
  AppendBigEndian64(&key, parent_group_id);
  return key;
}

std::string SplitRequestKey(uint64_t group_id) {
  std::string key(kSplitRequestPrefix);
  AppendBigEndian64(&key, group_id);
  return key;
}

std::string PartitionKey(std::string_view table, std::string_view start_key) {
  std::string key(kPartitionPrefix);
  key.append(table);
  key.push_back('\0');
  key.append(start_key);
  return key;
}

std::optional<std::string> ParseTableKey(std::string_view key) {
  if (!key.starts_with(kTablePrefix) || key.size() == kTablePrefix.size()) return std::nullopt;
  return std::string(key.substr(kTablePrefix.size()));
}

std::optional<std::pair<std::string, std::string>> ParsePartitionKey(std::string_view key) {
  if (!key.starts_with(kPartitionPrefix)) return std::nullopt;
  const std::string_view rest = key.substr(kPartitionPrefix.size());
  const size_t nul = rest.find('\0');
  if (nul == std::string_view::npos || nul == 0) return std::nullopt;
  return std::make_pair(std::string(rest.substr(0, nul)), std::string(rest.substr(nul + 1)));
}

std::string EncodeCounter(uint64_t value) {
  std::string out;
  AppendBigEndian64(&out, value);
  return out;
}

Result<uint64_t> DecodeCounter(std::string_view bytes) {
  if (bytes.size() != 8) {
    return Status::Corruption("meta counter of " + std::to_string(bytes.size()) + " bytes");
  }
  return ReadBigEndian64(bytes);
}

Status ValidateTableName(std::string_view name) {
  if (name.empty() || name.size() > limits::kMetaTableNameBytesMax) {
    return Status::InvalidArgument("table name must be 1.." +
                                   std::to_string(limits::kMetaTableNameBytesMax) + " bytes");
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return Status::InvalidArgument("table name may hold only [A-Za-z0-9._-]");
  }
  return Status::Ok();
}

std::vector<std::string> EvenSplitPoints(uint32_t partitions) {
  TESSERA_CHECK(partitions >= 1 && partitions <= limits::kMetaPartitionsPerTableMax);
  std::vector<std::string> points;
  for (uint32_t i = 1; i < partitions; ++i) {
    const uint32_t v = static_cast<uint32_t>((uint64_t{i} * 65536) / partitions);
    std::string p{static_cast<char>(v >> 8), static_cast<char>(v & 0xff)};
    while (p.back() == '\0') p.pop_back();  // v > 0, so p keeps a byte
    points.push_back(std::move(p));
  }
  return points;
}

Result<std::vector<std::string>> SplitPointsOf(const pb::CreateTableRequest& request) {
  const size_t given = static_cast<size_t>(request.split_points_size());
  if (given == 0) {
    const uint32_t n = request.partitions() == 0 ? 1 : request.partitions();
    if (n > limits::kMetaPartitionsPerTableMax) {
      return Status::InvalidArgument("at most " +
                                     std::to_string(limits::kMetaPartitionsPerTableMax) +
                                     " partitions per table");
    }
    return EvenSplitPoints(n);
  }
  if (given + 1 > limits::kMetaPartitionsPerTableMax) {
    return Status::InvalidArgument("too many split points");
  }
  if (request.partitions() != 0 && request.partitions() != given + 1) {
    return Status::InvalidArgument("partitions must be 0 or the number of split points + 1");
  }
  std::vector<std::string> points(request.split_points().begin(), request.split_points().end());
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].empty() || points[i].size() > limits::kMetaSplitPointBytesMax) {
      return Status::InvalidArgument("split points must be 1.." +
                                     std::to_string(limits::kMetaSplitPointBytesMax) + " bytes");
    }
    if (i > 0 && !(points[i - 1] < points[i])) {
      return Status::InvalidArgument("split points must be strictly ascending");
    }
  }
  return points;
}

}  // namespace tessera::meta
