// Big-endian (network order) fixed-width integers: the one codec for keys
// whose byte order must be numeric order (docs/formats/storage.md,
// docs/formats/s3-keys.md) and for frame headers (docs/formats/rpc.md).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/check.h"

namespace tessera {

// Writes `value` into out[0..4).
inline void StoreBigEndian32(char* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(value >> (24 - 8 * i));
}

inline void AppendBigEndian32(std::string* out, uint32_t value) {
  char bytes[4];
  StoreBigEndian32(bytes, value);
  out->append(bytes, sizeof(bytes));
}

inline void AppendBigEndian64(std::string* out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(value >> shift));
}

// The first 4 (8) bytes of `bytes` as a number; CHECKs there are that many.
inline uint32_t ReadBigEndian32(std::string_view bytes) {
  TESSERA_CHECK(bytes.size() >= 4);
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

inline uint64_t ReadBigEndian64(std::string_view bytes) {
  TESSERA_CHECK(bytes.size() >= 8);
  uint64_t value = 0;
  for (size_t i = 0; i < 8; ++i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

}  // namespace tessera
