// RouteCache: the router's copy of the partition map, per table a map from
// start_key to the PartitionDescriptor whose range [start_key, end_key)
// begins there. Filled and refreshed from MemDS answers (RouteResolver).
//
// Invariants:
//  1. Within a table, cached ranges never overlap: Update removes every
//     entry whose range overlaps the new one before inserting it.
//  2. An answer never replaces a cached entry of the same replication group
//     with a higher epoch (an older MemDS answer racing a newer one loses).
//  3. At most entries_max entries; an insert into a full cache first drops
//     every entry (a miss costs one lookup, so a simple policy suffices).
//
// Thread safety: every method may be called from any thread; mu_ guards
// tables_ and size_.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/limits.h"
#include "tessera/cluster_rpc.pb.h"

namespace tessera::router {

class RouteCache {
 public:
  explicit RouteCache(size_t entries_max = limits::kRouterRouteCacheEntriesMax);

  // The cached partition of `table` whose range holds `key`, or nullopt.
  std::optional<pb::PartitionDescriptor> Find(const std::string& table, std::string_view key) const;

  // Caches `partition` (see invariants 1-3). Returns false when it was
  // ignored as older than a cached entry of the same group.
  bool Update(const pb::PartitionDescriptor& partition);

  // Drops the entry of `table` holding `key` when its group is `group_id`
  // (0: whatever its group). Returns whether an entry was dropped.
  bool Invalidate(const std::string& table, std::string_view key, uint64_t group_id = 0);

  // Records `leader` as the leader hint of the entry holding `key`, when it
  // is still the entry of `group_id`.
  void SetLeaderHint(const std::string& table, std::string_view key, uint64_t group_id,
                     uint32_t leader);

  // Clears the leader hint of the entry holding `key` when it is still the
  // entry of `group_id` and names `leader` (a later hint stays).
  void ForgetLeaderHint(const std::string& table, std::string_view key, uint64_t group_id,
                        uint32_t leader);

  size_t size() const;

 private:
  using Ranges = std::map<std::string, pb::PartitionDescriptor, std::less<>>;

  const size_t entries_max_;
  mutable std::mutex mu_;  // guards tables_, size_
  std::map<std::string, Ranges, std::less<>> tables_;
  size_t size_ = 0;
};

}  // namespace tessera::router
