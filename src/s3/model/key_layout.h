// KeyLayout: how a bucket's object keys map to the object keys the `_s3`
// records carry (docs/formats/s3-keys.md, "Hashed layout"). The layout is
// part of the bucket's registry descriptor, fixed at creation, so every
// router derives the same stored key for a key; the partition state
// machine never sees the layout: it stores and lists stored keys.
//
//   ordered (hash_ranges 0)   stored key = K
//   hashed  (hash_ranges N)   stored key = h | K, h = 1 + H(K) mod N (one
//                             byte, 1..N; 0x00 stays free for `B 00 'c'`)
//   H(K) = SplitMix64Finalize(FNV-1a-64(K)): part of the format, pinned by
//   key_layout_test.cc, never to change.
//
// Invariants: a stored key is never empty and never contains 0x00 when K
// satisfies the same (h >= 1); StoredKey and UserKey are inverse; within
// one hash range the stored key order is the user key order, so a listing
// of range h with prefix h|P lists exactly the keys of that range under P.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/limits.h"
#include "common/result.h"
#include "tessera/s3_registry.pb.h"

namespace tessera::s3::model {

struct KeyLayout {
  uint32_t hash_ranges = 0;  // 0: ordered; else 2..limits::kS3HashRangesMax

  bool hashed() const { return hash_ranges != 0; }
  bool operator==(const KeyLayout&) const = default;
};

// The layout a bucket descriptor (or a create request) names; a hashed
// layout with a bad range count is refused by ValidateKeyLayout first, so
// this CHECKs it.
KeyLayout KeyLayoutOf(const pb::BucketDescriptor& bucket);
// InvalidArgument (with a message naming the bound) unless the pair is a
// layout: ORDERED with 0 ranges, HASHED with 2..kS3HashRangesMax.
Status ValidateKeyLayout(pb::BucketKeyLayout layout, uint32_t hash_ranges);
// "ordered" or "hashed:N" (the CLI's --layout): InvalidArgument otherwise.
Result<KeyLayout> ParseKeyLayout(std::string_view text);
// "ordered" / "hashed:N".
std::string KeyLayoutName(const KeyLayout& layout);

// H(K) above: the layout's fixed 64-bit hash of an object key.
uint64_t ObjectKeyHash(std::string_view key);
// The hash range of `key` in a hashed layout, 1..hash_ranges.
uint8_t HashRangeOf(const KeyLayout& layout, std::string_view key);
// The stored key of `key` (ordered: the key itself).
std::string StoredKey(const KeyLayout& layout, std::string_view key);
// The stored key prefix range `range` (1..hash_ranges) gives `prefix`:
// h | prefix. Ordered layouts have no ranges (CHECKed).
std::string RangeStoredKey(uint8_t range, std::string_view prefix);
// The user key of a stored key (hashed: without its range byte). A stored
// key shorter than the range byte is a broken invariant (CHECKed).
std::string_view UserKey(const KeyLayout& layout, std::string_view stored_key);

}  // namespace tessera::s3::model
