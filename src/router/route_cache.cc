#include "router/route_cache.h"

#include "common/check.h"

namespace tessera::router {
namespace {

// Whether [start, end) (empty end: unbounded) holds `key`.
bool Holds(const pb::PartitionDescriptor& p, std::string_view key) {
  return p.start_key() <= key && (p.end_key().empty() || key < p.end_key());
}

bool Overlaps(const pb::PartitionDescriptor& a, const pb::PartitionDescriptor& b) {
  const bool a_before_b_ends = b.end_key().empty() || a.start_key() < b.end_key();
  const bool b_before_a_ends = a.end_key().empty() || b.start_key() < a.end_key();
  return a_before_b_ends && b_before_a_ends;
}

// The entry of `ranges` (a start_key -> partition map) holding `key`, or end().
template <typename Ranges>
auto Holding(Ranges& ranges, std::string_view key) -> decltype(ranges.begin()) {
  auto it = ranges.upper_bound(key);
  if (it == ranges.begin()) return ranges.end();
  --it;
  return Holds(it->second, key) ? it : ranges.end();
}

}  // namespace

RouteCache::RouteCache(size_t entries_max) : entries_max_(entries_max) {
  TESSERA_CHECK(entries_max_ > 0);
}

std::optional<pb::PartitionDescriptor> RouteCache::Find(const std::string& table,
                                                        std::string_view key) const {
  std::lock_guard lock(mu_);
  auto table_it = tables_.find(table);
  if (table_it == tables_.end()) return std::nullopt;
  const Ranges& ranges = table_it->second;
  const auto it = Holding(ranges, key);
  if (it == ranges.end()) return std::nullopt;
  return it->second;
}

bool RouteCache::Update(const pb::PartitionDescriptor& partition) {
  TESSERA_CHECK(partition.end_key().empty() || partition.start_key() < partition.end_key());
  std::lock_guard lock(mu_);
  Ranges& ranges = tables_[partition.table()];
  // The first entry that may overlap: the one at or before start_key.
  auto first = ranges.upper_bound(partition.start_key());
  if (first != ranges.begin()) --first;
  auto end = first;
  // A leader learned from a redirect outlives a refresh that knows none, as
  // long as the group and its epoch are unchanged (MemDS does not track
  // leaders; dropping the hint would cost a redirect on every request).
  uint32_t learned_leader = 0;
  while (end != ranges.end() &&
         (partition.end_key().empty() || end->first < partition.end_key())) {
    const pb::PartitionDescriptor& cached = end->second;
    if (Overlaps(cached, partition) && cached.group_id() == partition.group_id()) {
      if (cached.epoch() > partition.epoch()) return false;
      if (cached.epoch() == partition.epoch()) learned_leader = cached.leader_hint();
    }
    ++end;
  }
  for (auto it = first; it != end;) {
    if (Overlaps(it->second, partition)) {
      it = ranges.erase(it);
      --size_;
    } else {
      ++it;
    }
  }
  if (size_ >= entries_max_) {
    tables_.clear();
    size_ = 0;
  }
  pb::PartitionDescriptor& stored = tables_[partition.table()][partition.start_key()];
  stored = partition;
  if (stored.leader_hint() == 0) stored.set_leader_hint(learned_leader);
  ++size_;
  return true;
}

bool RouteCache::Invalidate(const std::string& table, std::string_view key, uint64_t group_id) {
  std::lock_guard lock(mu_);
  auto table_it = tables_.find(table);
  if (table_it == tables_.end()) return false;
  const auto it = Holding(table_it->second, key);
  if (it == table_it->second.end()) return false;
  if (group_id != 0 && it->second.group_id() != group_id) return false;
  table_it->second.erase(it);
  --size_;
  return true;
}

void RouteCache::SetLeaderHint(const std::string& table, std::string_view key, uint64_t group_id,
                               uint32_t leader) {
  std::lock_guard lock(mu_);
  auto table_it = tables_.find(table);
  if (table_it == tables_.end()) return;
  const auto it = Holding(table_it->second, key);
  if (it == table_it->second.end() || it->second.group_id() != group_id) return;
  it->second.set_leader_hint(leader);
}

void RouteCache::ForgetLeaderHint(const std::string& table, std::string_view key,
                                  uint64_t group_id, uint32_t leader) {
  std::lock_guard lock(mu_);
  auto table_it = tables_.find(table);
  if (table_it == tables_.end()) return;
  const auto it = Holding(table_it->second, key);
  if (it == table_it->second.end() || it->second.group_id() != group_id) return;
  if (it->second.leader_hint() == leader) it->second.set_leader_hint(0);
}

size_t RouteCache::size() const {
  std::lock_guard lock(mu_);
  return size_;
}

}  // namespace tessera::router
