// Staging of a streamed snapshot on the receiving replica, and its install
// (docs/formats/storage.md, "Streamed snapshots").
//
// Records:
//  * staged pairs: state column family, key group id + kStagedStateTag +
//    user key, value EncodeRecord(user value). Outside [UserKeysBegin,
//    UserKeysEnd): never visible to reads, scans or GroupSnapshot.
//  * staging progress: meta column family, key "snapshot_staging/" + 8-byte
//    big-endian group id, a SnapshotManifest of what is staged so far
//    (chunk_count chunks, pair_count pairs, total_bytes, running checksum).
//  * install marker: meta column family, key "snapshot_install/" + group id,
//    a SnapshotInstallMarker. While it exists the group's user keys may be
//    half replaced: the group must not serve reads or start.
//
// Invariants:
//  1. At most one staging per group; staged pairs exist only with a
//     progress record, and they are exactly its pairs.
//  2. An install marker exists only with a complete staging matching its
//     manifest; finishing an install is idempotent (it restarts the copy).
//
// Thread safety: pure functions and WriteBatch builders over their
// arguments; NodeStore serialises their use per group.
#pragma once

#include <rocksdb/write_batch.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "storage/applied_state.h"
#include "storage/column_families.h"
#include "storage/key_codec.h"
#include "tessera/consensus.pb.h"

namespace tessera::storage {

// The state-column-family tag of staged pairs (after StateKeyTag::kUser).
inline constexpr uint8_t kStagedStateTag = 0x03;
static_assert(kStagedStateTag > static_cast<uint8_t>(StateKeyTag::kUser) &&
              kStagedStateTag < kGroupEndTag);

std::string StagedKey(GroupId group, std::string_view user_key);
// [StagedKeysBegin, StagedKeysEnd) holds exactly the group's staged pairs.
std::string StagedKeysBegin(GroupId group);
std::string StagedKeysEnd(GroupId group);
// The user key of a staged key of `group`; nullopt for any other key.
std::optional<std::string_view> DecodeStagedKey(GroupId group, std::string_view key);

// Meta column family keys, and their prefixes (for listing at open).
inline constexpr std::string_view kStagingProgressPrefix = "snapshot_staging/";
inline constexpr std::string_view kInstallMarkerPrefix = "snapshot_install/";
std::string StagingProgressKey(GroupId group);
std::string InstallMarkerKey(GroupId group);
// The group id of a key starting with `prefix`; nullopt when malformed.
std::optional<GroupId> DecodePrefixedGroupKey(std::string_view prefix, std::string_view key);
// Every group with a meta-column-family key under `prefix`, ascending;
// Corruption for a key under it that does not decode.
Result<std::vector<GroupId>> GroupsUnder(const ColumnFamilies& cfs, std::string_view prefix);

// Partition splits (docs/partition-splits.md "Apply"): the split marker and
// the narrowed range end of a group, meta column family.
inline constexpr std::string_view kSplitMarkerPrefix = "split/";
inline constexpr std::string_view kRangeEndPrefix = "range_end/";
std::string SplitMarkerKey(GroupId parent);
std::string RangeEndKey(GroupId group);

// Adds one pair to the running totals of `manifest` (pair_count,
// total_bytes, checksum as documented in consensus.proto).
void AddPairToManifest(std::string_view key, std::string_view value,
                       pb::SnapshotManifest* manifest);
// True when `staged` holds exactly what `manifest` describes: same
// snapshot_id, chunk_count, pair_count, total_bytes and checksum.
bool StagingMatches(const pb::SnapshotManifest& staged, const pb::SnapshotManifest& manifest);

}  // namespace tessera::storage
