// The metadata service's keys in its replication group's KV state, and the
// pure helpers that build and check them. Format: docs/formats/meta-keys.md.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::meta {

// The meta replicas' own replication group, in each meta process's store.
inline constexpr uint64_t kMetaGroupId = 1;
// First values of the id counters when their keys are absent.
inline constexpr uint64_t kFirstPartitionGroupId = 1000;
inline constexpr uint64_t kFirstTableId = 1;

inline constexpr std::string_view kTablePrefix = "t/";
inline constexpr std::string_view kPartitionPrefix = "p/";
inline constexpr std::string_view kNextGroupIdKey = "c/next_group_id";
inline constexpr std::string_view kNextTableIdKey = "c/next_table_id";
// The autoadmin lease (pb::AutoadminLease; partition_admin.h).
inline constexpr std::string_view kAutoadminLeaseKey = "a/lease";
// Storage nodes being drained (pb::NodeDrains; partition_admin.h).
inline constexpr std::string_view kNodeDrainsKey = "a/drains";
// Blob slots moved off their layout replicas (pb::BlobSlotAssignments;
// partition_admin.h), served from MemDs.
inline constexpr std::string_view kBlobSlotsKey = "a/blob_slots";
// The `_s3` partitions' keys the autoadmin published for bucket placement
// (pb::PlacementWeights; partition_admin.h, bucket_placement.h).
inline constexpr std::string_view kPlacementWeightsKey = "a/placement_weights";
// A partition split reserved and not yet committed or abandoned
// (pb::SplitPartitionResponse; partition_admin.h): "s/" + 8-byte
// big-endian parent group id.
inline constexpr std::string_view kSplitIntentPrefix = "s/";
std::string SplitIntentKey(uint64_t parent_group_id);
// A split an operator requested and the autoadmin has not yet reserved
// (pb::SplitRequestRecord): "sr/" + 8-byte big-endian group id.
inline constexpr std::string_view kSplitRequestPrefix = "sr/";
std::string SplitRequestKey(uint64_t group_id);

std::string TableKey(std::string_view table);
std::string PartitionKey(std::string_view table, std::string_view start_key);
// The table name of a "t/" key; nullopt for another key.
std::optional<std::string> ParseTableKey(std::string_view key);
// (table, start key) of a "p/" key; nullopt for another or malformed key.
std::optional<std::pair<std::string, std::string>> ParsePartitionKey(std::string_view key);

// uint64 counters: 8 bytes big-endian. Corruption for any other length.
std::string EncodeCounter(uint64_t value);
Result<uint64_t> DecodeCounter(std::string_view bytes);

// OK when `name` is 1..kMetaTableNameBytesMax bytes of [A-Za-z0-9._-].
Status ValidateTableName(std::string_view name);

// The split points of a CreateTableRequest: the given ones (checked:
// non-empty, strictly ascending, at most kMetaSplitPointBytesMax bytes, at
// most kMetaPartitionsPerTableMax - 1 of them, and `partitions` 0 or their
// count + 1) or, without them, `partitions` (0 means 1) even splits of the
// byte key space (EvenSplitPoints). InvalidArgument otherwise.
Result<std::vector<std::string>> SplitPointsOf(const pb::CreateTableRequest& request);

// partitions - 1 split points dividing the byte key space into `partitions`
// ranges of equal width over the first two key bytes: point i is the
// big-endian 16-bit value floor(i * 65536 / partitions) with trailing zero
// bytes removed (which keeps order and distinctness). 1 <= partitions <=
// kMetaPartitionsPerTableMax (checked).
std::vector<std::string> EvenSplitPoints(uint32_t partitions);

}  // namespace tessera::meta
