// BlobId: the name of one blob (a piece of object bytes of at most
// limits::kBlobBytesMax). It carries its blob slot, so finding a blob's
// nodes needs no index lookup (BlobSlotMap::ReplicasOf(id.slot)), and 16
// random bytes that make it unique cluster-wide without coordination.
//
// Canonical text form (docs/formats/blobs.md): the slot as 4 lowercase hex
// digits, '-', the 16 unique bytes as 32 lowercase hex digits, e.g.
// "00a3-0123456789abcdef0123456789abcdef" (37 characters). Ordering of ids
// (slot, then unique bytes) is the byte order of their text forms.
//
// Thread safety: a value type; Generate may be called from any thread.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tessera::blob {

struct BlobId {
  // Length of the canonical text form.
  static constexpr size_t kTextBytes = 37;

  uint32_t slot = 0;                 // < limits::kBlobSlots
  std::array<uint8_t, 16> unique{};  // random

  // A fresh id in `slot` (CHECKed < limits::kBlobSlots), its unique bytes
  // from OpenSSL RAND_bytes.
  static BlobId Generate(uint32_t slot);

  // The id whose ToString() is `text`; InvalidArgument for anything else
  // (wrong length, upper-case or non-hex digits, slot >= kBlobSlots).
  static Result<BlobId> Parse(std::string_view text);

  std::string ToString() const;

  friend auto operator<=>(const BlobId&, const BlobId&) = default;
  friend bool operator==(const BlobId&, const BlobId&) = default;
};

}  // namespace tessera::blob
