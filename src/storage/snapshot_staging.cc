#include "storage/snapshot_staging.h"

#include "common/crc32c.h"

namespace tessera::storage {
namespace {

std::string StagedPrefix(GroupId group, uint8_t tag) {
  std::string key;
  key.reserve(kGroupIdBytes + 1);
  AppendBigEndian64(&key, group);
  key.push_back(static_cast<char>(tag));
  return key;
}

std::string PrefixedGroupKey(std::string_view prefix, GroupId group) {
  std::string key(prefix);
  AppendBigEndian64(&key, group);
  return key;
}

uint32_t ExtendWithLength(uint32_t crc, uint64_t length) {
  std::string bytes;
  AppendBigEndian64(&bytes, length);
  return Crc32c(bytes, crc);
}

}  // namespace

std::string StagedKey(GroupId group, std::string_view user_key) {
  std::string key = StagedPrefix(group, kStagedStateTag);
  key.append(user_key);
  return key;
}

std::string StagedKeysBegin(GroupId group) { return StagedPrefix(group, kStagedStateTag); }
std::string StagedKeysEnd(GroupId group) { return StagedPrefix(group, kStagedStateTag + 1); }

std::optional<std::string_view> DecodeStagedKey(GroupId group, std::string_view key) {
  if (key.size() <= kGroupIdBytes || ReadBigEndian64(key) != group ||
      static_cast<uint8_t>(key[kGroupIdBytes]) != kStagedStateTag) {
    return std::nullopt;
  }
  return key.substr(kGroupIdBytes + 1);
}

std::string StagingProgressKey(GroupId group) {
  return PrefixedGroupKey(kStagingProgressPrefix, group);
}

std::string InstallMarkerKey(GroupId group) { return PrefixedGroupKey(kInstallMarkerPrefix, group); }
std::string SplitMarkerKey(GroupId parent) { return PrefixedGroupKey(kSplitMarkerPrefix, parent); }
std::string RangeEndKey(GroupId group) { return PrefixedGroupKey(kRangeEndPrefix, group); }

std::optional<GroupId> DecodePrefixedGroupKey(std::string_view prefix, std::string_view key) {
  if (key.size() != prefix.size() + kGroupIdBytes || key.substr(0, prefix.size()) != prefix) {
    return std::nullopt;
  }
  return ReadBigEndian64(key.substr(prefix.size()));
}

void AddPairToManifest(std::string_view key, std::string_view value,
                       pb::SnapshotManifest* manifest) {
  uint32_t crc = manifest->checksum();
  crc = ExtendWithLength(crc, key.size());
  crc = Crc32c(key, crc);
  crc = ExtendWithLength(crc, value.size());
  crc = Crc32c(value, crc);
  manifest->set_checksum(crc);
  manifest->set_pair_count(manifest->pair_count() + 1);
  manifest->set_total_bytes(manifest->total_bytes() + key.size() + value.size());
}

bool StagingMatches(const pb::SnapshotManifest& staged, const pb::SnapshotManifest& manifest) {
  return staged.snapshot_id() == manifest.snapshot_id() &&
         staged.chunk_count() == manifest.chunk_count() &&
         staged.pair_count() == manifest.pair_count() &&
         staged.total_bytes() == manifest.total_bytes() &&
         staged.checksum() == manifest.checksum();
}

}  // namespace tessera::storage
