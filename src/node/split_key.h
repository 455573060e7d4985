// Where a partition splits by size (docs/partition-splits.md): the key that
// halves its bytes, moved to a boundary the table allows.
//
// A split at key S gives the parent [start, S) and the child [S, end). The
// chooser is fed the partition's rows in key order, each with its stored
// bytes (key + value), and picks the first row before which at least half
// of the partition's bytes lie: the left half then holds at least half the
// bytes and the right half every row from the crossing on. For the `_s3`
// table the key is then moved to an object boundary (SplitKeyRules::
// whole_objects), so every record of one object (head, versions, uploads,
// parts, inline data) stays in one partition and every S3 operation stays
// one atomic operation of one group (docs/formats/s3-keys.md, rule 2).
//
// Invariants of a chosen key S (checked by ChooseSplitKey):
//   1. start < S, and S < end when the range is bounded (both halves are
//      proper, non-empty ranges);
//   2. under whole_objects, no object's records lie on both sides of S, and
//      S lies past every partition-internal record (bucket 0).
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::node {

// The partition's range and what the table allows.
struct SplitKeyRules {
  std::string start_key;        // the partition's range [start_key, end_key)
  std::string end_key;          // empty: unbounded
  bool whole_objects = false;   // the `_s3` table: split only between objects
};

// Feeds rows in key order and remembers the first key before which at
// least half of `total_bytes` lie.
class HalfBytesCursor {
 public:
  explicit HalfBytesCursor(uint64_t total_bytes) : half_bytes_((total_bytes + 1) / 2) {}
  // Feeds the next row (keys strictly ascending). Returns true once the
  // crossing row is found; further rows are then ignored.
  bool Feed(std::string_view key, uint64_t bytes);
  // The crossing row's key; nullopt until found (or when the rows before
  // the last one hold less than half the bytes).
  const std::optional<std::string>& crossing_key() const { return crossing_; }
  uint64_t bytes_before_crossing() const { return bytes_before_; }

 private:
  const uint64_t half_bytes_;
  uint64_t bytes_before_ = 0;
  bool any_row_ = false;
  std::optional<std::string> crossing_;
};

// The split key for a crossing row at `crossing_key`, moved to a boundary
// the rules allow: the key itself for an ordinary table; for whole_objects,
// the start of the crossing row's object, or (when that is not above the
// range start) the first key past that object's records, and past every
// internal record for a row of bucket 0. nullopt when no key satisfies the
// invariants (e.g. a partition holding one object).
std::optional<std::string> ChooseSplitKey(std::string_view crossing_key, const SplitKeyRules& rules);

// Whether `split_key` may split the partition (invariants 1 and 2): what
// meta and the node check before a split is ordered.
bool SplitKeyAllowed(std::string_view split_key, const SplitKeyRules& rules);

}  // namespace tessera::node
